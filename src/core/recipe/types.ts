// The contract every extractor fulfils: text in, configuration units and diagnostics out.
import * as z from "zod";
import { deferred } from "../model/deferred.ts";
import { LocationSchema, type Location } from "../model/source.ts";
import type { ConfigUnit } from "../model/settings.ts";

export const DiagnosticSchema = deferred(() =>
  z.object({
    file: z.string(),
    severity: z.enum(["error", "warning", "info"]),
    /**
     * parse-error: the file (or part of it) could not be parsed; unsupported: a construct the analyzer skips;
     * too-large / unreadable / too-complex: the file was not analyzed (over a size, binary, past a nesting or work bound);
     * base-unknown: a recipe starts from one that was not analyzed; base-from-index: from an upstream recipe read from hcp-bot's index.
     */
    code: z.enum(["parse-error", "unreadable", "too-large", "too-complex", "unsupported", "base-unknown", "base-from-index"]),
    message: z.string(),
    location: LocationSchema().optional(),
  }),
);
export type Diagnostic = z.infer<ReturnType<typeof DiagnosticSchema>>;

/** The file was not analyzed at all: too large, binary, or past a bound the analyzer keeps. */
export function isNotAnalyzed(d: Diagnostic): boolean {
  return d.code === "too-large" || d.code === "unreadable" || d.code === "too-complex";
}

/** What was (partly) not analyzed: a file skipped, or an error such as a syntax error that cost part of it. */
export function lostInput(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return diagnostics.filter((d) => d.severity === "error" || isNotAnalyzed(d));
}

/** A Transformer Engine version pin found in a dependency file. */
export interface TePin {
  version: string; // "2.15.0", "1.11", normalised without local suffix
  location: Location;
  source: string; // "uv.lock", "pyproject.toml override-dependencies", ...
}

export interface ExtractResult {
  units: ConfigUnit[];
  diagnostics: Diagnostic[];
  tePins: TePin[];
}

export const emptyResult = (): ExtractResult => ({ units: [], diagnostics: [], tePins: [] });
