// Finds the `/hcp` lines of a GitHub comment the way a reader sees them. Only a line that
// starts with `/hcp` (after at most 3 spaces) in plain text counts: text inside fenced or
// indented code, `>` quotes (with their lazy continuation lines) and HTML comments is
// what people paste and quote, and must never dispatch a GPU job on their behalf.
// Neither does anything HTML hides or holds: a line inside an HTML block (CommonMark types
// 6 and 7, up to the next blank line), inside an open HTML element (a collapsed `<details>`
// body is rendered but hidden; `<div hidden>` is not shown at all), inside a tag that spans
// lines (`<img alt="…">`), or inside an image's alt text (`![…]`).

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
// CommonMark HTML block type 6: a block-level tag starts it, a blank line ends it.
const BLOCK_TAG = /^ {0,3}<\/?(address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul)(?=[\s/>]|$)/i;
// Type 7: a line that is one complete open or closing tag (it cannot interrupt a paragraph).
const LONE_TAG = /^ {0,3}(?:<[A-Za-z][A-Za-z0-9-]*(?:\s+[^<>]*)?\/?>|<\/[A-Za-z][A-Za-z0-9-]*\s*>)\s*$/;
// Elements without content: they open nothing.
const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr", "keygen"]);

/** What the HTML and image syntax seen so far leaves open at the start of the next line. */
class HtmlState {
  /** Open elements (names), innermost last. */
  readonly open: string[] = [];
  /** Inside a tag that continues on the next line; the quote it is in, if any. */
  tag: { name: string; closing: boolean; quote: string | null } | undefined;
  /** `![` not yet closed by `]`: alt text, never shown as text. */
  alt = 0;

  get hiding(): boolean {
    return this.open.length > 0 || this.tag !== undefined || this.alt > 0;
  }

  /** Reads one line of visible text (comments already removed). */
  read(text: string): void {
    let i = 0;
    while (i < text.length) {
      if (this.tag) {
        i = this.readInTag(text, i);
        continue;
      }
      const c = text[i]!;
      if (c === "`") {
        // An inline code span on this line: its content is text, not markup.
        const run = /^`+/.exec(text.slice(i))![0];
        const close = text.indexOf(run, i + run.length);
        i = close < 0 ? i + run.length : close + run.length;
        continue;
      }
      if (c === "\\") {
        i += 2;
        continue;
      }
      if (c === "!" && text[i + 1] === "[") {
        this.alt++;
        i += 2;
        continue;
      }
      if (c === "]" && this.alt > 0) {
        this.alt--;
        i++;
        continue;
      }
      const tag = c === "<" ? /^<(\/?)([A-Za-z][A-Za-z0-9-]*)/.exec(text.slice(i)) : null;
      if (tag) {
        this.tag = { name: tag[2]!.toLowerCase(), closing: tag[1] === "/", quote: null };
        i += tag[0].length;
        continue;
      }
      i++;
    }
  }

  private readInTag(text: string, i: number): number {
    const tag = this.tag!;
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (tag.quote) {
        if (c === tag.quote) tag.quote = null;
      } else if (c === '"' || c === "'") tag.quote = c;
      else if (c === ">") {
        const selfClosing = text[i - 1] === "/";
        this.tag = undefined;
        if (tag.closing) {
          const at = this.open.lastIndexOf(tag.name);
          if (at >= 0) this.open.splice(at);
        } else if (!VOID.has(tag.name) && !selfClosing) this.open.push(tag.name);
        return i + 1;
      }
    }
    return i;
  }
}

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
  let htmlBlock = false;
  let previousBlank = true;
  const html = new HtmlState();
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
      htmlBlock = false;
      previousBlank = true;
      continue;
    }
    const afterBlank = previousBlank;
    previousBlank = false;
    const opened = openFence(text);
    if (opened) {
      fence = opened;
      inQuote = false;
      continue;
    }
    const raw = RAW_HTML_OPEN.exec(text);
    if (raw) {
      const tag = (raw[1] ?? "").toLowerCase();
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
    // Whatever HTML or alt text was open when this line began decides about it; then the line is read.
    const hidden = html.hiding || htmlBlock;
    if (!html.tag && (BLOCK_TAG.test(text) || (afterBlank && LONE_TAG.test(text)))) htmlBlock = true;
    html.read(visible.text);
    if (hidden || htmlBlock) continue;
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
