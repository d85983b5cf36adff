// Finds the `/hcp` lines of a GitHub comment the way a reader sees them. Only a line that
// starts with `/hcp` (after at most 3 spaces) in plain text counts: text inside fenced or
// indented code, `>` quotes (with their lazy continuation lines) and HTML comments is
// what people paste and quote, and must never dispatch a GPU job on their behalf.

export interface CommandLine {
  /** 1-based line number in the comment. */
  line: number;
  /** The text after `/hcp`, with inline HTML comments removed. */
  rest: string;
}

const COMMAND_START = /^ {0,3}\/hcp(?=[ \t]|$)/i;
// A fence at the top level, or as the first thing of a (nested) list item: `- ```bash`.
const FENCE_OPEN = /^((?: {0,3}(?:[-*+]|[0-9]{1,9}[.)])(?: {1,4}|\t))*)( {0,3})(`{3,}|~{3,})(.*)$/;
// HTML blocks whose content is raw text (CommonMark type 1): hidden or preformatted, never a command.
const RAW_HTML_OPEN = /^ {0,3}<(pre|script|style|textarea)(?=[\s>]|$)/i;
const QUOTE = /^ {0,3}>/;
// Four spaces or a tab before any text: an indented code block or a paragraph continuation.
const INDENTED = /^(?: {0,3}\t| {4})/;

interface Fence {
  char: string;
  length: number;
  /** Columns of list-item content before the fence; a closing fence may be indented by that plus 3. */
  indent: number;
}

/** Scans line by line; stops once `max` command lines are found (the caller caps replies). */
export function commandLines(body: string, max: number): CommandLine[] {
  const found: CommandLine[] = [];
  const lines = body.split(/\r\n|\r|\n/);
  let fence: Fence | undefined;
  let inComment = false;
  let inQuote = false;
  let rawHtml: string | undefined;
  for (let i = 0; i < lines.length && found.length < max; i++) {
    const text = lines[i] ?? "";
    if (fence) {
      if (closesFence(text, fence)) fence = undefined;
      continue;
    }
    if (rawHtml) {
      if (text.toLowerCase().includes(`</${rawHtml}>`)) rawHtml = undefined;
      continue;
    }
    if (inComment) {
      // The rest of a line that closes a comment does not start at the line start, so it is no command.
      inComment = stripComments(text, true).open;
      continue;
    }
    if (text.trim() === "") {
      inQuote = false;
      continue;
    }
    const opened = openFence(text);
    if (opened) {
      fence = opened;
      inQuote = false;
      continue;
    }
    const html = RAW_HTML_OPEN.exec(text);
    if (html) {
      const tag = (html[1] ?? "").toLowerCase();
      if (!text.toLowerCase().includes(`</${tag}>`)) rawHtml = tag;
      inQuote = false;
      continue;
    }
    if (QUOTE.test(text) || inQuote) {
      // A line right after a quote line continues the quoted paragraph (CommonMark lazy continuation).
      inQuote = true;
      continue;
    }
    const visible = stripComments(text, false);
    inComment = visible.open;
    if (INDENTED.test(text)) continue;
    const m = COMMAND_START.exec(text);
    if (!m) continue;
    found.push({ line: i + 1, rest: stripComments(text.slice(m[0].length), false).text.trimEnd() });
  }
  return found;
}

function openFence(text: string): Fence | undefined {
  const m = FENCE_OPEN.exec(text);
  if (!m) return undefined;
  const marker = m[3] ?? "";
  const char = marker[0] ?? "`";
  // CommonMark: a backtick fence's info string cannot hold a backtick (```x``` is inline code).
  if (char === "`" && (m[4] ?? "").includes("`")) return undefined;
  return { char, length: marker.length, indent: (m[1] ?? "").replace(/\t/g, "    ").length };
}

function closesFence(text: string, fence: Fence): boolean {
  const m = /^( *)(`{3,}|~{3,})[ \t]*$/.exec(text);
  const marker = m?.[2];
  // Deeper indentation is fence content, so the block (and its hiding) goes on.
  const indentOk = (m?.[1] ?? "").length <= fence.indent + 3;
  return marker !== undefined && indentOk && marker[0] === fence.char && marker.length >= fence.length;
}

/** Removes `<!-- ... -->` spans from one line; `open` says a comment is still open at its end. */
function stripComments(text: string, startsInComment: boolean): { text: string; open: boolean } {
  let out = "";
  let i = 0;
  let open = startsInComment;
  while (i < text.length) {
    if (open) {
      const close = text.indexOf("-->", i);
      if (close < 0) return { text: out, open: true };
      i = close + 3;
      open = false;
      continue;
    }
    const start = text.indexOf("<!--", i);
    if (start < 0) {
      out += text.slice(i);
      break;
    }
    out += text.slice(i, start);
    i = start + 4;
    open = true;
  }
  return { text: out, open };
}
