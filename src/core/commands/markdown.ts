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
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const QUOTE = /^ {0,3}>/;
// Four spaces or a tab before any text: an indented code block or a paragraph continuation.
const INDENTED = /^(?: {0,3}\t| {4})/;

interface Fence {
  char: string;
  length: number;
}

/** Scans line by line; stops once `max` command lines are found (the caller caps replies). */
export function commandLines(body: string, max: number): CommandLine[] {
  const found: CommandLine[] = [];
  const lines = body.split(/\r\n|\r|\n/);
  let fence: Fence | undefined;
  let inComment = false;
  let inQuote = false;
  for (let i = 0; i < lines.length && found.length < max; i++) {
    const text = lines[i] ?? "";
    if (fence) {
      if (closesFence(text, fence)) fence = undefined;
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
  const marker = m[1] ?? "";
  const char = marker[0] ?? "`";
  // CommonMark: a backtick fence's info string cannot hold a backtick (```x``` is inline code).
  if (char === "`" && (m[2] ?? "").includes("`")) return undefined;
  return { char, length: marker.length };
}

function closesFence(text: string, fence: Fence): boolean {
  const m = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(text);
  const marker = m?.[1];
  return marker !== undefined && marker[0] === fence.char && marker.length >= fence.length;
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
