// Generated regions of a Markdown page: `<!-- docs:begin NAME ARGS -->` … `<!-- docs:end NAME -->`.
// `npm run docs` rewrites what lies between the two markers; `--check` only compares. The markers
// are HTML comments, so GitHub shows the generated text and not the markers.

export interface Region {
  name: string;
  /** What follows the name in the begin marker (a command line for `run`). */
  args: string;
  /** The text between the markers, without the newline after the begin marker. */
  body: string;
  /** Offsets of the body in the page. */
  start: number;
  end: number;
}

const BEGIN = /<!-- docs:begin ([\w-]+)(?: (.*?))? -->\n/g;

/** Every generated region of a page, in order; a begin without its end is an error. */
export function findRegions(page: string, file: string): Region[] {
  const regions: Region[] = [];
  for (const m of page.matchAll(BEGIN)) {
    const name = m[1]!;
    const start = m.index + m[0].length;
    const endMarker = `<!-- docs:end ${name} -->`;
    const end = page.indexOf(endMarker, start);
    if (end < 0) throw new Error(`${file}: <!-- docs:begin ${name} --> has no ${endMarker}`);
    regions.push({ name, args: (m[2] ?? "").trim(), body: page.slice(start, end), start, end });
  }
  return regions;
}

/** The page with each region's body replaced by what `generate` makes of it. */
export async function fillRegions(page: string, file: string, generate: (region: Region) => Promise<string>): Promise<string> {
  let out = "";
  let at = 0;
  for (const region of findRegions(page, file)) {
    const body = await generate(region);
    out += page.slice(at, region.start) + (body.endsWith("\n") ? body : `${body}\n`);
    at = region.end;
  }
  return out + page.slice(at);
}

/** A fenced code block (GitHub's ``` form) and the line before it. */
export interface CodeBlock {
  info: string;
  body: string;
  /** 1-based line of the opening fence. */
  line: number;
  before: string;
}

export function codeBlocks(page: string): CodeBlock[] {
  const lines = page.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*(`{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trimStart().startsWith(fence)) j++;
    blocks.push({ info: open[2]!.trim(), body: lines.slice(i + 1, j).join("\n"), line: i + 1, before: i > 0 ? lines[i - 1]!.trim() : "" });
    i = j;
  }
  return blocks;
}

/** A block shows a command and its output when a line starts with the `$ ` prompt and another line follows it. */
export function showsCommandAndOutput(block: CodeBlock): boolean {
  const lines = block.body.split("\n");
  return lines.some((l, i) => l.startsWith("$ ") && i < lines.length - 1) && lines.some((l) => l.trim() !== "" && !l.startsWith("$ "));
}

/** `<!-- docs:not-run REASON -->` on the line before the fence: the reason, or undefined. */
export function notRunReason(block: CodeBlock): string | undefined {
  const m = /^<!-- docs:not-run (.+?) -->$/.exec(block.before);
  return m?.[1]?.trim() || undefined;
}
