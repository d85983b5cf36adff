// A unified diff (`diff -u`'s format, three lines of context) of one file's text before and after
// `--fix`, for `hcp-bot lint --diff`. Lines are compared after the common head and tail are set
// aside; the middle is matched by longest common subsequence when small enough, else replaced whole.
const CONTEXT = 3;
const MAX_CELLS = 4_000_000;

type Op = { kind: " " | "-" | "+"; text: string };

// A last line without a newline carries this mark while lines are compared (so `x` and `x\n`
// differ), and is printed with diff's "\\ No newline at end of file" after it, which
// `patch` and `git apply` read.
const NO_EOL = "\u0000no-eol";
const NO_EOL_NOTE = "\\ No newline at end of file";

function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  else lines[lines.length - 1] += NO_EOL;
  return lines;
}

function printed(o: Op): string[] {
  return o.text.endsWith(NO_EOL) ? [`${o.kind}${o.text.slice(0, -NO_EOL.length)}`, NO_EOL_NOTE] : [`${o.kind}${o.text}`];
}

function middleOps(a: readonly string[], b: readonly string[]): Op[] {
  if (a.length * b.length > MAX_CELLS) return [...a.map((text) => ({ kind: "-" as const, text })), ...b.map((text) => ({ kind: "+" as const, text }))];
  const w = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!);
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ops.push({ kind: " ", text: a[i++]! }), j++;
    else if (i < a.length && (j === b.length || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) ops.push({ kind: "-", text: a[i++]! });
    else ops.push({ kind: "+", text: b[j++]! });
  }
  return ops;
}

function lineOps(before: string, after: string): Op[] {
  const a = splitLines(before);
  const b = splitLines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const same = (lines: string[]): Op[] => lines.map((text) => ({ kind: " ", text }));
  return [...same(a.slice(0, head)), ...middleOps(a.slice(head, a.length - tail), b.slice(head, b.length - tail)), ...same(a.slice(a.length - tail))];
}

/** `--- a/PATH` / `+++ b/PATH` and the hunks; empty when the texts are equal. */
export function unifiedDiff(path: string, before: string, after: string): string {
  if (before === after) return "";
  const ops = lineOps(before, after);
  const out = [`--- a/${path}`, `+++ b/${path}`];
  let k = 0;
  while (k < ops.length) {
    if (ops[k]!.kind === " ") {
      k++;
      continue;
    }
    // A hunk: from CONTEXT lines before the change to CONTEXT after the last change within reach.
    const start = Math.max(0, k - CONTEXT);
    let last = k;
    for (let j = k; j < ops.length && j - last <= 2 * CONTEXT; j++) if (ops[j]!.kind !== " ") last = j;
    const end = Math.min(ops.length, last + 1 + CONTEXT);
    const slice = ops.slice(start, end);
    const oldStart = ops.slice(0, start).filter((o) => o.kind !== "+").length + 1;
    const newStart = ops.slice(0, start).filter((o) => o.kind !== "-").length + 1;
    const oldCount = slice.filter((o) => o.kind !== "+").length;
    const newCount = slice.filter((o) => o.kind !== "-").length;
    out.push(`@@ -${oldCount ? oldStart : oldStart - 1},${oldCount} +${newCount ? newStart : newStart - 1},${newCount} @@`);
    for (const o of slice) out.push(...printed(o));
    k = end;
  }
  return out.join("\n") + "\n";
}
