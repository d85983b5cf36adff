// The GitHub Markdown the bot writes (src/core/render, src/core/review), read back into a
// small tree so a page can show it the way GitHub would. Only the constructs the bot emits
// are understood: headings, paragraphs, lists, pipe tables, fenced code (a `suggestion`
// fence included), `<details><summary>`, `<sub>`, bold, italics, code spans and links.
// Every other `<...>` stays literal text, and the entities `untrusted()` writes (&lt; &gt;
// &amp;) decode to characters, so recipe text can never become markup downstream: the
// emitters (html.ts, dom.ts) only ever create the elements named here.
// Pure: runs in the browser (the playground) and on the server (the runs pages).

export type Inline =
  | { t: "text"; v: string }
  | { t: "code"; v: string }
  | { t: "strong"; c: Inline[] }
  | { t: "em"; c: Inline[] }
  | { t: "sub"; c: Inline[] }
  | { t: "link"; href: string; c: Inline[] }
  | { t: "br" };

export type Block =
  | { t: "heading"; level: number; c: Inline[] }
  | { t: "para"; c: Inline[] }
  | { t: "list"; items: Inline[][] }
  | { t: "table"; head: Inline[][]; rows: Inline[][][] }
  | { t: "code"; lang: string; v: string }
  | { t: "details"; summary: Inline[]; c: Block[] };

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const LIST_ITEM = /^ {0,3}[-*+]\s+(.*)$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const DETAILS_OPEN = /^\s*<details>\s*(?:<summary>(.*?)<\/summary>)?\s*$/;
const DETAILS_CLOSE = /^\s*<\/details>\s*$/;
const COMMENT_LINE = /^\s*<!--.*-->\s*$/;
// Links only to places a page can safely point at: the web, or this site.
const SAFE_HREF = /^(https?:\/\/[^\s"'<>`]+|\/[^\s"'<>`]*|#[\w-]*)$/;
const ENTITIES: Record<string, string> = { "&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#39;": "'" };

/** Markdown text to blocks; any input gives a tree (unknown syntax is text). */
export function parseMarkdown(markdown: string): Block[] {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const root: Block[] = [];
  const stack: { blocks: Block[] }[] = [{ blocks: root }];
  let i = 0;
  const out = () => stack[stack.length - 1]!.blocks;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === "" || COMMENT_LINE.test(line)) {
      i++;
      continue;
    }
    if (line.trimStart().startsWith("<!--")) {
      while (i < lines.length && !lines[i]!.includes("-->")) i++;
      i++;
      continue;
    }
    const fence = FENCE_OPEN.exec(line);
    if (fence) {
      const marker = fence[1]!;
      const body: string[] = [];
      i++;
      while (i < lines.length && !isFenceClose(lines[i]!, marker)) body.push(lines[i++]!);
      i++;
      out().push({ t: "code", lang: fence[2] ?? "", v: body.join("\n") });
      continue;
    }
    const details = DETAILS_OPEN.exec(line);
    if (details) {
      const block: Block = { t: "details", summary: parseInline(details[1] ?? "Details"), c: [] };
      out().push(block);
      stack.push({ blocks: block.c });
      i++;
      continue;
    }
    if (DETAILS_CLOSE.test(line)) {
      if (stack.length > 1) stack.pop();
      i++;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      out().push({ t: "heading", level: heading[1]!.length, c: parseInline(heading[2]!) });
      i++;
      continue;
    }
    if (line.trimStart().startsWith("|") && i + 1 < lines.length && TABLE_SEPARATOR.test(lines[i + 1]!)) {
      const head = splitRow(line).map(parseInline);
      const rows: Inline[][][] = [];
      i += 2;
      while (i < lines.length && lines[i]!.trimStart().startsWith("|")) rows.push(splitRow(lines[i++]!).map(parseInline));
      out().push({ t: "table", head, rows });
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const items: Inline[][] = [];
      while (i < lines.length && LIST_ITEM.test(lines[i]!)) items.push(parseInline(LIST_ITEM.exec(lines[i++]!)![1]!));
      out().push({ t: "list", items });
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== "" && !startsBlock(lines, i)) para.push(lines[i++]!);
    if (para.length === 0) para.push(lines[i++]!); // a line no rule took (a stray </details>): text
    out().push({ t: "para", c: joinLines(para) });
  }
  return root;
}

function isFenceClose(line: string, marker: string): boolean {
  const t = line.trim();
  return t.length >= marker.length && t === marker[0]!.repeat(t.length);
}

function startsBlock(lines: readonly string[], i: number): boolean {
  const line = lines[i]!;
  return (
    FENCE_OPEN.test(line) ||
    HEADING.test(line) ||
    LIST_ITEM.test(line) ||
    DETAILS_OPEN.test(line) ||
    DETAILS_CLOSE.test(line) ||
    COMMENT_LINE.test(line) ||
    (line.trimStart().startsWith("|") && i + 1 < lines.length && TABLE_SEPARATOR.test(lines[i + 1]!))
  );
}

/** GitHub shows a comment's single line breaks as breaks. */
function joinLines(lines: readonly string[]): Inline[] {
  const out: Inline[] = [];
  lines.forEach((l, k) => {
    if (k > 0) out.push({ t: "br" });
    out.push(...parseInline(l.trim()));
  });
  return out;
}

/** Cells of `| a | b \| c |`: split on pipes that are not escaped. */
function splitRow(line: string): string[] {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  const cells: string[] = [];
  let cell = "";
  for (let k = 0; k < s.length; k++) {
    const c = s[k]!;
    if (c === "\\" && s[k + 1] === "|") {
      cell += "\\|";
      k++;
    } else if (c === "|") {
      cells.push(cell.trim());
      cell = "";
    } else cell += c;
  }
  cells.push(cell.trim());
  return cells;
}

/** Inline markup of one line (or cell) into nodes; unmatched markers are text. */
export function parseInline(src: string): Inline[] {
  const out: Inline[] = [];
  let text = "";
  const flush = () => {
    if (text) out.push({ t: "text", v: text });
    text = "";
  };
  let k = 0;
  while (k < src.length) {
    const c = src[k]!;
    const rest = src.slice(k);
    if (c === "\\" && k + 1 < src.length && /[!-/:-@[-`{-~]/.test(src[k + 1]!)) {
      text += src[k + 1];
      k += 2;
      continue;
    }
    if (c === "&") {
      const entity = /^&(?:lt|gt|amp|quot|#39);/.exec(rest);
      if (entity) {
        text += ENTITIES[entity[0]]!;
        k += entity[0].length;
        continue;
      }
    }
    if (c === "`") {
      const run = /^`+/.exec(rest)![0];
      const close = src.indexOf(run, k + run.length);
      if (close > 0) {
        flush();
        out.push({ t: "code", v: decodeEntities(src.slice(k + run.length, close)) });
        k = close + run.length;
        continue;
      }
      text += run;
      k += run.length;
      continue;
    }
    if (rest.startsWith("**")) {
      const close = src.indexOf("**", k + 2);
      if (close > k + 2) {
        flush();
        out.push({ t: "strong", c: parseInline(src.slice(k + 2, close)) });
        k = close + 2;
        continue;
      }
    }
    if (c === "_" && (k === 0 || /\s|\(/.test(src[k - 1]!)) && /\S/.test(src[k + 1] ?? "")) {
      const close = findClosingUnderscore(src, k + 1);
      if (close > 0) {
        flush();
        out.push({ t: "em", c: parseInline(src.slice(k + 1, close)) });
        k = close + 1;
        continue;
      }
    }
    if (c === "[") {
      const link = linkAt(src, k);
      if (link) {
        flush();
        out.push({ t: "link", href: link.href, c: parseInline(link.label) });
        k = link.end;
        continue;
      }
    }
    if (c === "<") {
      const sub = /^<sub>([\s\S]*?)<\/sub>/.exec(rest);
      if (sub) {
        flush();
        out.push({ t: "sub", c: parseInline(sub[1]!) });
        k += sub[0].length;
        continue;
      }
      const br = /^<br\s*\/?>/.exec(rest);
      if (br) {
        flush();
        out.push({ t: "br" });
        k += br[0].length;
        continue;
      }
      const comment = /^<!--[\s\S]*?-->/.exec(rest);
      if (comment) {
        k += comment[0].length;
        continue;
      }
    }
    text += c;
    k++;
  }
  flush();
  return out;
}

function findClosingUnderscore(src: string, from: number): number {
  for (let k = from; k < src.length; k++) {
    if (src[k] === "_" && /\S/.test(src[k - 1]!) && (k + 1 === src.length || /[\s.,;:)!?]/.test(src[k + 1]!))) return k;
  }
  return -1;
}

/** `[label](href)` at k, when the href is one a page may link to. */
function linkAt(src: string, k: number): { label: string; href: string; end: number } | undefined {
  let depth = 0;
  let close = -1;
  // Labels are short; bounding the scan keeps a line of 10,000 "[" linear.
  for (let j = k; j < Math.min(src.length, k + 1000); j++) {
    if (src[j] === "\\") {
      j++;
      continue;
    }
    if (src[j] === "[") depth++;
    else if (src[j] === "]" && --depth === 0) {
      close = j;
      break;
    }
  }
  if (close < 0 || src[close + 1] !== "(") return undefined;
  const end = src.indexOf(")", close + 2);
  if (end < 0) return undefined;
  const href = decodeEntities(src.slice(close + 2, end).trim());
  if (!SAFE_HREF.test(href)) return undefined;
  return { label: src.slice(k + 1, close), href, end: end + 1 };
}

function decodeEntities(s: string): string {
  return s.replace(/&(?:lt|gt|amp|quot|#39);/g, (e) => ENTITIES[e]!);
}

/** The plain text of inline nodes (for titles, tests and screen readers). */
export function inlineText(nodes: readonly Inline[]): string {
  return nodes.map((n) => (n.t === "text" || n.t === "code" ? n.v : n.t === "br" ? "\n" : inlineText(n.c))).join("");
}
