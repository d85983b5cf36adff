// Input checks shared by the text extractors: refuse binary and oversized files with a
// diagnostic instead of spending time (or throwing) on them.
import type { Diagnostic } from "./types.ts";

/** Larger inputs are reported as too-large (the analyzer's one limit, 16 Mi characters). */
export const MAX_TEXT_CHARS = 16 * 1024 * 1024;

/** A NUL in the first 8 KiB is the same heuristic git uses to call a file binary. */
function looksBinary(text: string): boolean {
  const probe = Math.min(text.length, 8192);
  for (let i = 0; i < probe; i++) if (text.charCodeAt(i) === 0) return true;
  return false;
}

/** A diagnostic when the file should not be analyzed, otherwise undefined. */
export function rejectInput(path: string, text: string, limit = MAX_TEXT_CHARS): Diagnostic | undefined {
  if (looksBinary(text)) {
    return { file: path, severity: "warning", code: "unreadable", message: "binary content (NUL bytes); file skipped" };
  }
  if (text.length > limit) {
    return {
      file: path,
      severity: "warning",
      code: "too-large",
      message: `file has ${text.length} characters, over the ${limit} analyzed; file skipped`,
    };
  }
  return undefined;
}
