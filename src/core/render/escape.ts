// The one way text from outside (logs, recipes, people's comments, YAML problems) reaches a
// GitHub surface: PR comments, review comments, check-run summaries and job summaries all
// render GitHub-flavoured Markdown, where such text could otherwise become a link, an
// image (a tracking pixel), raw HTML (a forged hidden marker), or a mention that pings a
// team. Quoted values go into code spans or blocks whose fence is longer than any backtick
// run in them; everything else is shown as plain text, character for character.

const ZWSP = "\u200b";

/** The longest run of backticks in the text. */
function longestBacktickRun(text: string): number {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return longest;
}

/**
 * An inline code span the text cannot close (newlines become spaces). In a table cell a
 * pipe must still be escaped: GFM splits cells before it reads code spans.
 */
export function codeSpan(text: string, o: { inTable?: boolean } = {}): string {
  let body = text.replace(/\r?\n|\r/g, " ");
  if (o.inTable) body = body.replace(/\|/g, "\\|");
  const fence = "`".repeat(longestBacktickRun(body) + 1);
  // A space on each side keeps a leading or trailing backtick from joining the fence.
  const pad = body.startsWith("`") || body.endsWith("`") || body.startsWith(" ") ? " " : "";
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** A fenced code block the text cannot close: at least three backticks, longer than any run in it. */
export function codeBlock(text: string, info = ""): string {
  const fence = "`".repeat(Math.max(3, longestBacktickRun(text) + 1));
  return `${fence}${info}\n${text.replace(/\n$/, "")}\n${fence}`;
}

/**
 * Plain text that stays plain: HTML characters as entities, every character that could start
 * Markdown syntax backslash-escaped, @-mentions, #-references and bare URLs (GFM autolinks)
 * broken by a zero-width space. Newlines become spaces (one line of prose).
 */
export function mdText(text: string): string {
  return text
    .replace(/\r?\n|\r/g, " ")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/[\\`*_[\]()!#~|{}]/g, (c) => `\\${c}`)
    .replace(/@(?=[A-Za-z0-9_-])/g, `@${ZWSP}`)
    .replace(/(\\#)(?=[0-9])/g, `$1${ZWSP}`)
    .replace(/:\/\//g, `:${ZWSP}//`)
    .replace(/\b(www)\./gi, `$1${ZWSP}.`);
}

/**
 * A message the bot wrote around quoted values: what it put in backticks becomes a real code
 * span (whatever the value holds), the rest plain text. An odd backtick leaves the rest plain.
 */
export function mdMessage(text: string, o: { inTable?: boolean } = {}): string {
  let out = "";
  let at = 0;
  for (const m of text.matchAll(/`([^`\n]+)`/g)) {
    out += mdText(text.slice(at, m.index)) + codeSpan(m[1]!, o);
    at = m.index + m[0].length;
  }
  return out + mdText(text.slice(at));
}

/** mdMessage for a table cell. */
export function mdCell(text: string): string {
  return mdMessage(text, { inTable: true });
}
