// Unified-diff hunks as GitHub shows them in `pulls/{n}/files[].patch`: which
// lines a review comment may target on each side, and the diff "position".
export type Side = "LEFT" | "RIGHT";

export interface PatchLine {
  readonly kind: "context" | "add" | "del" | "header" | "meta";
  readonly text: string;
  /** 1-based position in the patch (the first hunk header is position 0, as on GitHub) */
  readonly position: number;
  readonly hunk: number;
  readonly oldLine?: number;
  readonly newLine?: number;
}

export interface ParsedPatch {
  readonly lines: readonly PatchLine[];
  readonly additions: number;
  readonly deletions: number;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function parsePatch(patch: string | undefined): ParsedPatch {
  const lines: PatchLine[] = [];
  let additions = 0;
  let deletions = 0;
  if (!patch) return { lines, additions, deletions };
  let oldLine = 0;
  let newLine = 0;
  let hunk = -1;
  let position = -1;
  for (const text of patch.split("\n")) {
    const header = HUNK_HEADER.exec(text);
    // GitHub counts every line after the first header, later headers included
    position++;
    if (header) {
      hunk++;
      oldLine = Number(header[1]);
      newLine = Number(header[2]);
      lines.push({ kind: "header", text, position, hunk });
      continue;
    }
    if (hunk < 0) continue;
    if (text.startsWith("+")) {
      additions++;
      lines.push({ kind: "add", text, position, hunk, newLine: newLine++ });
    } else if (text.startsWith("-")) {
      deletions++;
      lines.push({ kind: "del", text, position, hunk, oldLine: oldLine++ });
    } else if (text.startsWith("\\")) {
      lines.push({ kind: "meta", text, position, hunk });
    } else {
      lines.push({ kind: "context", text, position, hunk, oldLine: oldLine++, newLine: newLine++ });
    }
  }
  return { lines, additions, deletions };
}

/** The patch line a comment on (side, line) anchors to, or undefined when it is outside the diff. */
export function findDiffLine(parsed: ParsedPatch, side: Side, line: number): PatchLine | undefined {
  return parsed.lines.find((l) =>
    side === "RIGHT" ? l.kind !== "del" && l.newLine === line : l.kind !== "add" && l.oldLine === line,
  );
}

export function findPosition(parsed: ParsedPatch, position: number): PatchLine | undefined {
  return parsed.lines.find((l) => l.position === position && l.position > 0 && (l.oldLine !== undefined || l.newLine !== undefined));
}

/** GitHub's `diff_hunk`: the hunk header through the commented line. */
export function diffHunkUpTo(parsed: ParsedPatch, target: PatchLine): string {
  const inHunk = parsed.lines.filter((l) => l.hunk === target.hunk && l.position <= target.position);
  return inHunk.map((l) => l.text).join("\n");
}

function splitLines(content: string): string[] {
  const lines = content.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** The patch GitHub would show for a file added (or removed) whole. */
export function wholeFilePatch(content: string, kind: "added" | "removed"): string {
  const lines = splitLines(content);
  if (lines.length === 0) return "";
  const header = kind === "added" ? `@@ -0,0 +1,${lines.length} @@` : `@@ -1,${lines.length} +0,0 @@`;
  const sign = kind === "added" ? "+" : "-";
  return [header, ...lines.map((l) => sign + l)].join("\n");
}

interface DiffOp {
  readonly kind: " " | "-" | "+";
  readonly text: string;
}

/** Line ops by longest common subsequence (fine for test-sized files). */
function lineOps(a: string[], b: string[]): DiffOp[] {
  const n = a.length;
  const m = b.length;
  const lcs = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number): number => lcs[i * (m + 1) + j]!;
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] = a[i] === b[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
    }
  }
  const ops: DiffOp[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ kind: " ", text: a[i]! });
      i++;
      j++;
    } else if (i < n && (j === m || at(i + 1, j) >= at(i, j + 1))) {
      // deletions first, as git prints them
      ops.push({ kind: "-", text: a[i++]! });
    } else {
      ops.push({ kind: "+", text: b[j++]! });
    }
  }
  return ops;
}

/** A unified diff body (hunks only, no file headers) with `context` lines, as GitHub's `patch`. */
export function unifiedDiff(oldText: string, newText: string, context = 3): string {
  const ops = lineOps(splitLines(oldText), splitLines(newText));
  const changed = ops.map((op, idx) => (op.kind === " " ? -1 : idx)).filter((idx) => idx >= 0);
  if (changed.length === 0) return "";
  // group changes whose context windows touch into one hunk
  const ranges: [number, number][] = [];
  for (const idx of changed) {
    const lo = Math.max(0, idx - context);
    const hi = Math.min(ops.length - 1, idx + context);
    const last = ranges.at(-1);
    if (last && lo <= last[1] + 1) last[1] = hi;
    else ranges.push([lo, hi]);
  }
  const out: string[] = [];
  for (const [lo, hi] of ranges) {
    let oldStart = 1;
    let newStart = 1;
    for (let k = 0; k < lo; k++) {
      if (ops[k]!.kind !== "+") oldStart++;
      if (ops[k]!.kind !== "-") newStart++;
    }
    const body = ops.slice(lo, hi + 1);
    const oldCount = body.filter((o) => o.kind !== "+").length;
    const newCount = body.filter((o) => o.kind !== "-").length;
    out.push(`@@ -${oldCount === 0 ? oldStart - 1 : oldStart},${oldCount} +${newCount === 0 ? newStart - 1 : newStart},${newCount} @@`);
    out.push(...body.map((o) => o.kind + o.text));
  }
  return out.join("\n");
}
