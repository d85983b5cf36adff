// The contract every extractor fulfils: text in, configuration units and diagnostics out.
import * as z from "zod";
import { deferred } from "../model/deferred.ts";
import { LocationSchema, type Location } from "../model/source.ts";
import type { ConfigUnit } from "../model/settings.ts";

export const DiagnosticSchema = deferred(() =>
  z.object({
    file: z.string(),
    severity: z.enum(["error", "warning", "info"]),
    /** parse-error: the file (or part of it) could not be parsed; unsupported: a construct the analyzer skips; base-unknown: a recipe starts from one that was not analyzed. */
    code: z.enum(["parse-error", "unreadable", "too-large", "unsupported", "base-unknown"]),
    message: z.string(),
    location: LocationSchema().optional(),
  }),
);
export type Diagnostic = z.infer<ReturnType<typeof DiagnosticSchema>>;

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
