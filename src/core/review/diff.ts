// Which lines of a pull request file can carry a review comment. GitHub accepts a comment
// on a RIGHT-side line only when that line appears in the file's diff (added or context);
// a multi-line comment must stay inside one hunk.

export interface Hunk {
  /** First and last new-file line covered by the hunk (inclusive). */
  newStart: number;
  newEnd: number;
  /** New-file lines present in the hunk (added or context). */
  lines: Set<number>;
  /** New-file lines the PR added. */
  added: Set<number>;
}

const HUNK_HEADER = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/;

export function parsePatch(patch: string | undefined): Hunk[] {
  if (!patch) return [];
  const hunks: Hunk[] = [];
  let current: Hunk | undefined;
  let line = 0;
  for (const raw of patch.split("\n")) {
    const header = HUNK_HEADER.exec(raw);
    if (header) {
      line = Number(header[1]);
      current = { newStart: line, newEnd: line - 1, lines: new Set(), added: new Set() };
      hunks.push(current);
      continue;
    }
    if (!current) continue;
    const tag = raw[0];
    if (tag === "+") {
      current.lines.add(line);
      current.added.add(line);
      current.newEnd = line;
      line++;
    } else if (tag === " " || raw === "") {
      current.lines.add(line);
      current.newEnd = line;
      line++;
    }
    // "-" lines exist only on the LEFT side; "\" is "No newline at end of file".
  }
  return hunks;
}

/** The hunk that holds every line from `start` to `end`, if one does. */
export function hunkCovering(hunks: readonly Hunk[], start: number, end: number): Hunk | undefined {
  return hunks.find((h) => {
    for (let l = start; l <= end; l++) if (!h.lines.has(l)) return false;
    return true;
  });
}

export function isCommentable(hunks: readonly Hunk[], line: number): boolean {
  return hunks.some((h) => h.lines.has(line));
}
