// Positions, ranges and text edits shared by every extractor, rule and renderer.
// Lines and columns are 1-based (as editors, GitHub and SARIF count them); offsets are
// 0-based indexes into the JavaScript string of the file, so `text.slice(start, end)`
// gives back exactly the text a range covers.
// Schemas are built on first use (deferred.ts): on the lint path they only give types, and
// building zod schemas at module load costs every CLI start and edge cold start (bench:cli).
import * as z from "zod";
import { deferred } from "./deferred.ts";

export const PointSchema = deferred(() =>
  z.object({
    line: z.number().int().min(1),
    column: z.number().int().min(1),
    offset: z.number().int().min(0),
  }),
);
export type Point = z.infer<ReturnType<typeof PointSchema>>;

export const RangeSchema = deferred(() => z.object({ start: PointSchema(), end: PointSchema() }));
export type Range = z.infer<ReturnType<typeof RangeSchema>>;

export const LocationSchema = deferred(() => z.object({ file: z.string(), range: RangeSchema() }));
export type Location = z.infer<ReturnType<typeof LocationSchema>>;

export const EditSchema = deferred(() =>
  z.object({
    file: z.string(),
    range: RangeSchema(),
    newText: z.string(),
  }),
);
export type Edit = z.infer<ReturnType<typeof EditSchema>>;

export interface SourceFile {
  path: string;
  text: string;
}

/** Maps offsets of one text to 1-based line/column points, in O(log lines). */
export class LineIndex {
  private readonly starts: number[];

  constructor(readonly text: string) {
    const starts = [0];
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) === 10) starts.push(i + 1);
    }
    this.starts = starts;
  }

  get lineCount(): number {
    return this.starts.length;
  }

  point(offset: number): Point {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.starts[mid] ?? 0) <= clamped) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: clamped - (this.starts[lo] ?? 0) + 1, offset: clamped };
  }

  range(startOffset: number, endOffset: number): Range {
    return { start: this.point(startOffset), end: this.point(endOffset) };
  }

  /** Offset of the first character of a 1-based line (the text length past the end). */
  lineStart(line: number): number {
    return this.starts[line - 1] ?? this.text.length;
  }

  /** Offset just before the line break that ends a 1-based line. */
  lineEnd(line: number): number {
    const next = this.starts[line];
    if (next === undefined) return this.text.length;
    return this.text.charCodeAt(next - 2) === 13 ? next - 2 : next - 1;
  }

  lineText(line: number): string {
    return this.text.slice(this.lineStart(line), this.lineEnd(line));
  }
}

export function location(file: string, index: LineIndex, start: number, end: number): Location {
  return { file, range: index.range(start, end) };
}

/** A zero-width location at an offset: where an insertion goes. */
export function pointLocation(file: string, index: LineIndex, offset: number): Location {
  return location(file, index, offset, offset);
}
