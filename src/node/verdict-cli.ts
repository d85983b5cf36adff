// `hcp-bot verdict LOG`: streams a torchrun log through the pure verdict parser
// (reads straight into the parser's buffer, never the whole file in memory) and prints the verdict.
import { readLogInto } from "./read-log.ts";
import { stat } from "node:fs/promises";
import { parseArgs } from "node:util";
import * as z from "zod";
import { createVerdictParser, formatVerdict, ProbeKeySchema } from "../core/verdict/index.ts";


export interface VerdictIo {
  out(text: string): void;
  err(text: string): void;
}

/** Thrown for bad arguments or an unreadable log: exit status 2. */
export class VerdictUsageError extends Error {}

const VerdictArgs = z.object({
  format: z.enum(["json", "text", "markdown"]).default("text"),
  "exit-code": z.coerce.number().int().min(-255).max(255).optional(),
  "expect-hcp": z.boolean().optional(),
  "no-expect-hcp": z.boolean().optional(),
  gpu: z.string().min(1).optional(),
  "timed-out": z.boolean().optional(),
  "probe-key": ProbeKeySchema.optional(),
  "world-size": z.coerce.number().int().min(1).max(65_536).optional(),
  cp: z.coerce.number().int().min(1).max(65_536).optional(),
  sizes: z
    .string()
    .regex(/^\[?\d+(?:,\d+)*\]?$/, "sizes are positive integers separated by commas, e.g. 2,2")
    .transform((text) => text.replace(/[[\]]/g, "").split(",").map(Number))
    .refine((sizes) => sizes.every((n) => n >= 1), "every size is at least 1")
    .optional(),
  "cp-comm-type": z.string().regex(/^[a-z0-9+]+$/, "cp_comm_type such as a2a+p2p, p2p, a2a, all_gather").optional(),
});

export const VERDICT_USAGE = `hcp-bot verdict LOG [--exit-code N] [--expect-hcp|--no-expect-hcp] [--probe-key HEX] [--world-size N] [--cp N] [--sizes A,B] [--cp-comm-type TYPE] [--gpu H100|H200|B200|GB200] [--timed-out] [--format text|json|markdown]`;

/** The flags `verdict` takes (its parser's, and what `hcp-bot` checks unknown flags against). */
export const VERDICT_OPTIONS = {
  format: { type: "string", short: "f" },
  "exit-code": { type: "string" },
  "expect-hcp": { type: "boolean" },
  "no-expect-hcp": { type: "boolean" },
  gpu: { type: "string" },
  "timed-out": { type: "boolean" },
  "probe-key": { type: "string" },
  "world-size": { type: "string" },
  cp: { type: "string" },
  sizes: { type: "string" },
  "cp-comm-type": { type: "string" },
} as const;

/** 0 when the verdict is pass, 1 for any other status; throws VerdictUsageError for usage/IO problems. */
export async function verdictCommand(argv: string[], io: VerdictIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: VERDICT_OPTIONS,
  });
  const parsed = VerdictArgs.safeParse(values);
  if (!parsed.success) throw new VerdictUsageError(z.prettifyError(parsed.error));
  const args = parsed.data;
  if (positionals.length !== 1) throw new VerdictUsageError(`verdict needs exactly one log file\n  ${VERDICT_USAGE}`);
  if (args["expect-hcp"] && args["no-expect-hcp"]) throw new VerdictUsageError("--expect-hcp and --no-expect-hcp exclude each other");
  const file = positionals[0]!;
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) throw new VerdictUsageError(`cannot read ${file}: not a file`);

  // The probe key is the run's (smoke-run prints it and writes it to verdict.json once the run is over).
  // --cp, --sizes and --cp-comm-type are what the run asked for: a log that shows another layout does not pass.
  const parser = createVerdictParser({
    expectHcp: !args["no-expect-hcp"],
    gpu: args.gpu,
    probeKey: args["probe-key"],
    worldSize: args["world-size"],
    contextParallelSize: args.cp,
    sizes: args.sizes,
    cpCommType: args["cp-comm-type"],
  });
  try {
    readLogInto(file, parser);
  } catch (error) {
    throw new VerdictUsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const verdict = parser.end(args["exit-code"] ?? null, { timedOut: args["timed-out"] });
  io.out(formatVerdict(verdict, args.format));
  return verdict.status === "pass" ? 0 : 1;
}
