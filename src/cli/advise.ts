// `hcp-bot advise`: the layout advisor on the command line, from numbers or from an
// analyzed recipe function (`FILE::FUNCTION`), as words and a grid, JSON, Markdown or SVG.
import { writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import * as z from "zod";
import { adviseLayout, AdviseError, type AdviseInput, type Advice } from "../core/advise/advise.ts";
import { adviseNumbersOf } from "../core/advise/from-unit.ts";
import { analyze } from "../core/analyze/index.ts";
import { advicePicture, formatAdviceMarkdown, formatAdviceText } from "../core/render/layout/advice.ts";
import { formatLayoutSvg } from "../core/render/layout/svg.ts";
import type { Tint } from "../core/render/layout/text.ts";
import { readSources } from "../node/files.ts";
import { loadPythonLanguage, preferQuickExit } from "../node/treesitter.ts";
import { closest, UsageError } from "./args.ts";
import { commandHelp, flagsOf } from "./spec.ts";
import { defuseControls, type Style, type StyleName } from "./style.ts";

export interface AdviseIo {
  out(text: string): void;
  /** Styles human text for the terminal (colour, control characters defused). */
  style: Style;
}

const Int = (flag: string) =>
  z
    .string()
    .regex(/^\d{1,7}$/, `${flag} must be a positive whole number`)
    .transform(Number)
    .pipe(z.number().int().min(1, `${flag} must be at least 1`))
    .optional();

const AdviseArgs = z.object({
  cp: Int("--cp"),
  tp: Int("--tp"),
  pp: Int("--pp"),
  heads: Int("--heads"),
  "kv-heads": Int("--kv-heads"),
  "gpus-per-node": Int("--gpus-per-node"),
  "nvlink-domain": Int("--nvlink-domain"),
  nodes: Int("--nodes"),
  svg: z.string().min(1).optional(),
  format: z.enum(["text", "json", "markdown"], { error: "--format must be text, json or markdown" }).default("text"),
});
type Args = z.output<typeof AdviseArgs>;

function readArgs(argv: readonly string[]): { args: Args; target?: string } {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const f of flagsOf(commandHelp("advise")!)) {
    options[f.name.slice(2)] = { type: f.takesValue ? "string" : "boolean", ...(f.short ? { short: f.short.slice(1) } : {}) };
  }
  const { values, positionals } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  const parsed = AdviseArgs.safeParse(values);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join("; "));
  if (positionals.length > 1) throw new UsageError("advise takes at most one RECIPE_FILE::FUNCTION");
  const args = parsed.data;
  if (args["gpus-per-node"] !== undefined && args["nvlink-domain"] !== undefined) throw new UsageError("give --gpus-per-node or --nvlink-domain, not both");
  if (positionals.length === 0 && args.cp === undefined) throw new UsageError("advise needs --cp N or a RECIPE_FILE::FUNCTION");
  return positionals[0] === undefined ? { args } : { args, target: positionals[0] };
}

interface FromRecipe {
  input: Partial<AdviseInput>;
  preamble: string[];
  /** The NVLink domain the recipe states or its name or folder gives (as HCP018 reads it); flags outrank it. */
  domainGpus?: number;
}

async function numbersFromRecipe(target: string): Promise<FromRecipe> {
  const sep = target.lastIndexOf("::");
  if (sep <= 0 || sep === target.length - 2) throw new UsageError(`${target}: expected RECIPE_FILE::FUNCTION, e.g. recipes/llama3.py::llama3_8b_pretrain_config`);
  const file = target.slice(0, sep);
  const fn = target.slice(sep + 2);
  const { files: sources, unread } = await readSources([file]);
  if (unread.length > 0) throw new UsageError(`${unread[0]!.path}: ${unread[0]!.reason}`);
  preferQuickExit(); // one file: see treesitter.ts
  const report = analyze(sources, { python: await loadPythonLanguage() });
  const units = report.units.filter((u) => u.location.file === sources[0]!.path && u.kind !== "mlm-launch");
  const unit = units.find((u) => u.name === fn);
  if (!unit) {
    const names = [...new Set(units.map((u) => u.name))];
    const near = closest(fn, names);
    throw new UsageError(
      names.length === 0
        ? `${file} holds no recipe function the analyzer reads`
        : `${file} has no recipe function ${fn}${near ? `; did you mean ${near}?` : ""} (functions: ${names.slice(0, 12).join(", ")}${names.length > 12 ? ", …" : ""})`,
    );
  }
  const read = adviseNumbersOf(unit);
  if (!read.ok) throw new UsageError(read.error);
  const n = read.numbers;
  const now = n.current.cpCommType ? `the recipe sets cp_comm_type="${n.current.cpCommType}"${n.current.sizes ? `, sizes [${n.current.sizes.join(", ")}]` : ""}` : "";
  return {
    input: {
      cp: n.cp,
      tp: n.tp,
      pp: n.pp,
      ...(n.numAttentionHeads !== undefined ? { numAttentionHeads: n.numAttentionHeads } : {}),
      ...(n.numQueryGroups !== undefined ? { numQueryGroups: n.numQueryGroups } : {}),
    },
    // Paths and names come from the recipe: shown, never interpreted by the terminal.
    preamble: [
      `from ${fn}: ${n.sources.join(", ")}`,
      ...(now ? [now] : []),
      ...(unit.nvlinkDomain ? [`NVLink domain: ${unit.nvlinkDomain.gpus} GPUs (${unit.nvlinkDomain.source})`] : []),
    ].map(defuseControls),
    ...(unit.nvlinkDomain ? { domainGpus: unit.nvlinkDomain.gpus } : {}),
  };
}

function adviseInput(args: Args, fromRecipe: FromRecipe | undefined): AdviseInput {
  const base = fromRecipe?.input ?? {};
  const heads = args.heads ?? base.numAttentionHeads;
  // Megatron's num_query_groups defaults to the head count (no GQA).
  const kv = args["kv-heads"] ?? (args.heads !== undefined ? args.heads : base.numQueryGroups);
  const input: AdviseInput = {
    cp: args.cp ?? base.cp!,
    tp: args.tp ?? base.tp ?? 1,
    pp: args.pp ?? base.pp ?? 1,
    // The recipe's own domain (an NVL72 recipe) before the 8-GPU default, so the advice never puts more CP on
    // the slower ring than the hardware the recipe names needs.
    domainGpus: args["nvlink-domain"] ?? args["gpus-per-node"] ?? fromRecipe?.domainGpus ?? 8,
    domain: args["nvlink-domain"] !== undefined || (args["gpus-per-node"] === undefined && fromRecipe?.domainGpus !== undefined) ? "nvlink" : "node",
    ...(heads !== undefined ? { numAttentionHeads: heads } : {}),
    ...(kv !== undefined ? { numQueryGroups: kv } : {}),
    ...(args.nodes !== undefined ? { nodes: args.nodes } : {}),
  };
  return input;
}

const TINTS: readonly StyleName[] = ["blue", "yellow", "green", "magenta", "cyan", "red"];

function tintFor(style: Style): Tint | undefined {
  if (!style.color) return undefined;
  return (kind, index, text) => (kind === "tp" ? style.paint("dim", text) : style.paint(TINTS[index % TINTS.length]!, text));
}

function jsonOf(advice: Advice): string {
  const picture = advicePicture(advice);
  return (
    JSON.stringify(
      {
        input: advice.input,
        recommendation: advice.recommendation,
        rejected: advice.rejected,
        world: advice.grid.world,
        dp: advice.grid.dp,
        domains: picture.domains,
        groups: Object.fromEntries(picture.sets.map((s) => [s.kind, s.groups])),
      },
      null,
      2,
    ) + "\n"
  );
}

export async function adviseCommand(argv: readonly string[], io: AdviseIo): Promise<number> {
  const { args, target } = readArgs(argv);
  const fromRecipe = target ? await numbersFromRecipe(target) : undefined;
  let advice: Advice;
  try {
    advice = adviseLayout(adviseInput(args, fromRecipe));
  } catch (error) {
    if (error instanceof AdviseError) throw new UsageError(error.message);
    throw error;
  }
  if (args.format === "json") io.out(jsonOf(advice));
  else if (args.format === "markdown") io.out(formatAdviceMarkdown(advice));
  else {
    const tint = tintFor(io.style);
    io.out(formatAdviceText(advice, { bold: (t) => io.style.paint("bold", t), ...(tint ? { tint } : {}), ...(fromRecipe ? { preamble: fromRecipe.preamble } : {}) }));
  }
  if (args.svg) {
    await writeFile(args.svg, formatLayoutSvg(advicePicture(advice)));
    if (args.format === "text") io.out(`wrote ${args.svg}\n`);
  }
  return 0;
}
