// What the analyzer reports, and the shape every rule module has.
// Schemas are built on first use (deferred.ts): on the lint path they only give types, and
// building zod schemas at module load costs every CLI start and edge cold start (bench:cli).
import * as z from "zod";
import { deferred } from "./deferred.ts";
import { EditSchema, LocationSchema, type Location } from "./source.ts";
import type { ConfigUnit } from "./settings.ts";

export const SeveritySchema = deferred(() => z.enum(["error", "warning", "info"]));
export type Severity = z.infer<ReturnType<typeof SeveritySchema>>;

export const FixSchema = deferred(() =>
  z.object({
    /** One line, imperative: "Set hierarchical_context_parallel_sizes to [2, 2]". */
    description: z.string(),
    edits: z.array(EditSchema()),
    /** The a2a+p2p layout the fix proposes, so a review can draw which ranks form each group. */
    layout: z
      .object({
        tp: z.number().int().positive(),
        sizes: z.tuple([z.number().int().positive(), z.number().int().positive()]),
        /** GPUs per NVLink domain the sizes were placed for (the recipe's hardware, the repo config, or 8). */
        domainGpus: z.number().int().positive().optional(),
      })
      .optional(),
  }),
);
export type Fix = z.infer<ReturnType<typeof FixSchema>>;

export const FindingSchema = deferred(() =>
  z.object({
    ruleId: z.string(),
    ruleName: z.string(),
    severity: SeveritySchema(),
    message: z.string(),
    /** One line under ~120 characters, what is wrong and the fix (the CLI's text output); `message` is the explanation. */
    summary: z.string().optional(),
    location: LocationSchema(),
    /** The recipe or launch line the finding is about. */
    unitId: z.string(),
    unitName: z.string(),
    fix: FixSchema().optional(),
    /** Other places that explain the finding (where CP was set, the TE pin...). */
    related: z.array(z.object({ message: z.string(), location: LocationSchema() })).default([]),
  }),
);
export type Finding = z.infer<ReturnType<typeof FindingSchema>>;

export const RuleDocSchema = deferred(() =>
  z.object({
    /** What the rule checks, one or two sentences. */
    checks: z.string(),
    /** Why it matters: the crash or the silent failure it prevents. */
    why: z.string(),
    /** A configuration that triggers it. */
    example: z.string(),
    /** How to fix it. */
    fix: z.string(),
  }),
);
export type RuleDoc = z.infer<ReturnType<typeof RuleDocSchema>>;

/** Facts that do not belong to one unit: dependency pins, hardware assumptions. */
export interface ProjectFacts {
  /** Transformer Engine version read from a pin, e.g. "2.15.0", with where it was read. */
  transformerEngine?: { version: string; location: Location; source: string };
  /** GPUs in one NVLink domain where a unit's path does not say; 8 for H100/H200 nodes unless configured. */
  gpusPerNode: number;
  /** Where gpusPerNode came from ("--gpus-per-node", ".github/hcp-bot.yml gpus_per_node", the default). */
  gpusPerNodeSource?: string;
}

/** What a rule returns: the finding without the fields the engine fills in. */
export type RuleReport = Omit<Finding, "ruleId" | "ruleName" | "unitId" | "unitName" | "related" | "severity" | "summary"> & {
  /** Every rule writes its one line itself, with the values it found (short-message.ts). */
  summary: string;
  severity?: Severity;
  related?: Finding["related"];
};

export interface Rule {
  id: string; // HCP001
  name: string; // kebab-case, e.g. a2a-p2p-without-sizes
  /** Default severity; a report may grade itself differently (e.g. HCP004's size-1 slot is a warning). */
  severity: Severity;
  /** One short line (under ~80 characters) for `rules` and one-line output; the doc says the rest. */
  summary?: string;
  doc: RuleDoc;
  check(unit: ConfigUnit, project: ProjectFacts): RuleReport[];
}
