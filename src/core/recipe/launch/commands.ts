// Turning lexed shell commands into configuration units: run_recipe-style launch lines
// (Hydra overrides + convenience flags) and Megatron-LM argparse launch lines.
import { location, pointLocation, type LineIndex, type Location } from "../../model/source.ts";
import {
  known,
  unknown,
  type Anchor,
  type ConfigUnit,
  type Known,
  runRecipeMode,
  type Mode,
  type OriginKind,
  type Setting,
  type SettingKey,
  type Syntax,
  type Value,
} from "../../model/settings.ts";
import { basename, type Command, type Word } from "./words.ts";
import { parseHydraValue, settingKeyFor, spanOf } from "./values.ts";
import { domainFromEnv, domainSizeOf } from "../../analyze/hardware.ts";
import { launcherOfScript } from "../../rules/launchers.ts";

export interface UnitContext {
  file: string;
  /** The whole file, to check that a value's span spells it. */
  source: string;
  index: LineIndex;
  /** Where values go when their characters have no source position (a YAML scalar's start). */
  fallbackOffset?: number;
}

const BRIDGE_SCRIPTS = /^(?:run_recipe|setup_experiment|launch_with_nemo_run)\.py$/;
const MLM_SCRIPT = /^pretrain_[A-Za-z0-9_]+\.py$/;

/** run_recipe convenience flags (HEAD) and seed-era flags that take one value. */
const CONVENIENCE_FLAGS: Record<string, SettingKey> = {
  "-tp": "model.tensor_model_parallel_size",
  "--tensor_model_parallel_size": "model.tensor_model_parallel_size",
  "-pp": "model.pipeline_model_parallel_size",
  "--pipeline_model_parallel_size": "model.pipeline_model_parallel_size",
  "-cp": "model.context_parallel_size",
  "--context_parallel_size": "model.context_parallel_size",
  "-ep": "model.expert_model_parallel_size",
  "--expert_model_parallel_size": "model.expert_model_parallel_size",
  "-etp": "model.expert_tensor_parallel_size",
  "--expert_tensor_parallel_size": "model.expert_tensor_parallel_size",
  "-sl": "dataset.seq_length",
  "--seq_length": "dataset.seq_length",
  "--seq-length": "dataset.seq_length",
};

/** The performance launcher's recipe flags (argument_parser.py:178-190, 277: -m, -mr, --task). */
const PERF_RECIPE_FLAGS = ["-m", "--model_family_name", "-mr", "--model_recipe_name", "--task", "-cv", "--config_variant"] as const;

/** What a scripts/performance/setup_experiment.py line says about the recipe it runs. */
interface PerfArgs {
  useRecipes: boolean;
  perfFlags: boolean;
  recipeName?: string;
  task?: string;
  numGpus?: string;
  gpu?: string;
  precision?: string;
  variant?: string;
}
type PerfValue = "recipeName" | "task" | "numGpus" | "gpu" | "precision" | "variant";
const PERF_VALUE_FLAGS: Record<string, PerfValue> = {
  "-mr": "recipeName", "--model_recipe_name": "recipeName", "--task": "task", "-ng": "numGpus", "--num_gpus": "numGpus",
  "-g": "gpu", "--gpu": "gpu", "-c": "precision", "--compute_dtype": "precision", "-cv": "variant", "--config_variant": "variant",
};

/** utils/utils.py _PRECISION_NAME_MAP (HEAD 067f987); any other value is lower-cased without underscores. */
const PRECISION_NAMES: Record<string, string> = { bf16: "bf16", fp8_cs: "fp8cs", fp8_ds: "fp8ds", fp8_mx: "fp8mx", fp8_sc: "fp8sc", nvfp4: "nvfp4" };

/**
 * The recipe a performance launch line runs (Bridge HEAD 067f987, scripts/performance/):
 * with --use_recipes, megatron.bridge.recipes.<family>'s `{mr}_{task}_config` (`{mr}_peft_config`
 * for peft; utils/utils.py:872-880 build_recipe_config); otherwise the flat perf recipe
 * `{mr}_{task}_{ng}gpu_{gpu}_{precision}{_variant}_config` that run_script.py:100-107 asks for by
 * exact name (utils/utils.py _recipe_function_name; -c defaults to bf16, --task to pretrain,
 * argument_parser.py:277-281, 695-702). When no recipe has that exact name upstream falls back to
 * a best match we do not model: the unit then stays incomplete.
 */
function perfRecipeName(launcher: "performance" | "performance-recipes", perf: PerfArgs): string | undefined {
  const mr = perf.recipeName?.toLowerCase();
  if (!mr || !/^[a-z0-9_]+$/.test(mr)) return undefined;
  const task = perf.task ?? "pretrain";
  if (launcher === "performance-recipes") return task === "peft" ? `${mr}_peft_config` : `${mr}_${task}_config`;
  const gpu = perf.gpu?.toLowerCase();
  if (!perf.numGpus || !/^[1-9][0-9]*$/.test(perf.numGpus) || !gpu || !/^[a-z0-9]+$/.test(gpu)) return undefined;
  const raw = (perf.precision ?? "bf16").toLowerCase();
  const precision = PRECISION_NAMES[raw] ?? raw.replace(/_/g, "");
  const variant = perf.variant && !["v1", "v2"].includes(perf.variant.toLowerCase()) ? `_${perf.variant.toLowerCase()}` : "";
  return `${mr}_${task}_${perf.numGpus}gpu_${gpu}_${precision}${variant}_config`;
}
/** Flags only the performance launcher has: a bare setup_experiment.py with them is scripts/performance/'s. */
const PERF_ONLY_FLAGS = new Set(["-m", "--model_family_name", "-mr", "--model_recipe_name", "-ng", "--num_gpus", "-g", "--gpu", "--use_recipes"]);

/** Flags of the launchers whose value is not an override (so it is not read as one). */
const VALUE_FLAGS = new Set([
  "--recipe", "--model", "--mode", "--dataset", "--step_func", "--step-func", "--step", "--peft_scheme", "--hf_path",
  "--nproc_per_node", "--nproc-per-node", "--nnodes", "--nodes", "--gpus-per-node", "--gpus_per_node", "--node_rank",
  "--master_addr", "--master_port", "--rdzv_endpoint", "--script", "-ms", "-gb", "-mb", "-vp", "--max_steps",
  "--global_batch_size", "--micro_batch_size", "--lr", "--min_lr", "--warmup_iters", "--pretrained_checkpoint",
  "--save_dir", "--load_dir", "--save_interval", "--config-file", "--config_file", "--partition", "--account",
  "--container_image", "--time", "--executor", "--log-dir", "--log_dir", "--experiment-name", "--job-name",
  // scripts/performance/argument_parser.py (HEAD 067f987): -m/-mr name the recipe, --task its task.
  ...PERF_RECIPE_FLAGS,
  "-ng", "--num_gpus", "-g", "--gpu", "-c", "--compute_dtype", "--data", "-t", "--time_limit", "-a", "-p", "-i",
]);

type MlmType = "int" | "str" | "bool" | "ints" | "strs";
interface MlmFlag {
  key: SettingKey;
  type: MlmType;
}

/** Megatron-LM argparse flags (megatron/training/arguments.py) that carry SettingKeys. */
const MLM_FLAGS: Record<string, MlmFlag> = {
  "--context-parallel-size": { key: "model.context_parallel_size", type: "int" },
  "--cp-comm-type": { key: "model.cp_comm_type", type: "strs" },
  "--multi-latent-attention": { key: "model.multi_latent_attention", type: "bool" },
  "--hierarchical-context-parallel-sizes": { key: "model.hierarchical_context_parallel_sizes", type: "ints" },
  "--seq-length": { key: "model.seq_length", type: "int" },
  "--tensor-model-parallel-size": { key: "model.tensor_model_parallel_size", type: "int" },
  "--pipeline-model-parallel-size": { key: "model.pipeline_model_parallel_size", type: "int" },
  "--expert-model-parallel-size": { key: "model.expert_model_parallel_size", type: "int" },
  "--expert-tensor-parallel-size": { key: "model.expert_tensor_parallel_size", type: "int" },
  "--num-layers": { key: "model.num_layers", type: "int" },
  "--num-attention-heads": { key: "model.num_attention_heads", type: "int" },
  "--num-query-groups": { key: "model.num_query_groups", type: "int" },
  "--sequence-parallel": { key: "model.sequence_parallel", type: "bool" },
  "--transformer-impl": { key: "model.transformer_impl", type: "str" },
  "--hybrid-context-parallel": { key: "model.hybrid_context_parallel", type: "bool" },
  "--dynamic-context-parallel": { key: "model.dynamic_context_parallel", type: "bool" },
  "--max-seqlen-per-dp-cp-rank": { key: "model.max_seqlen_per_dp_cp_rank", type: "int" },
  "--calculate-per-token-loss": { key: "model.calculate_per_token_loss", type: "bool" },
  "--position-embedding-type": { key: "model.position_embedding_type", type: "str" },
  "--window-size": { key: "model.window_size", type: "ints" },
  "--qkv-format": { key: "model.qkv_format", type: "str" },
  "--softmax-type": { key: "model.softmax_type", type: "str" },
  "--window-attn-skip-freq": { key: "model.window_attn_skip_freq", type: "int" },
  "--experimental-attention-variant": { key: "model.experimental_attention_variant", type: "str" },
};
const MLM_MARKERS = new Set(["--context-parallel-size", "--cp-comm-type", "--hierarchical-context-parallel-sizes"]);

/** Commands that mention a script without running it (`[ -f "$SCRIPT_PATH" ]`, `echo`, `cp`). */
const NOT_LAUNCHERS = new Set([
  "[", "[[", "test", "echo", "printf", "ls", "cat", "cd", "cp", "mv", "rm", "mkdir", "chmod", "touch", "grep", "sed",
  "awk", "head", "tail", "wc", "git", "dirname", "basename", "readlink", "realpath", "source", ".", "wget", "curl",
  "tee", "less", "vim", "nano", "diff", "scp", "rsync", "ln", "find", "stat", "file",
]);

export type LaunchKind = "launch" | "mlm-launch";

/** Which kind of launch line a command is, if any; `echo "... run_recipe.py ..."` is none (one word). */
export function classifyCommand(words: readonly Word[]): LaunchKind | undefined {
  if (NOT_LAUNCHERS.has(basename(words[0]?.text ?? ""))) return undefined;
  let mlm = false;
  for (const w of words) {
    const t = w.text;
    if (BRIDGE_SCRIPTS.test(basename(t)) || t === "--recipe" || t.startsWith("--recipe=")) return "launch";
    const flag = t.startsWith("--") ? t.split("=", 1)[0] ?? t : t;
    if (MLM_MARKERS.has(flag) || MLM_SCRIPT.test(basename(t))) mlm = true;
  }
  return mlm ? "mlm-launch" : undefined;
}

/** A flag's value: the next word, or the text after `=` in `--flag=value`. */
interface FlagValue {
  word: Word;
  from: number;
  consumed: number; // words consumed after the flag word
}

function flagValue(words: readonly Word[], k: number, flag: string): FlagValue | undefined {
  const w = words[k];
  if (!w) return undefined;
  if (w.text.length > flag.length && w.text[flag.length] === "=") return { word: w, from: flag.length + 1, consumed: 0 };
  const next = words[k + 1];
  return next ? { word: next, from: 0, consumed: 1 } : undefined;
}

function flagName(text: string): string {
  const eq = text.indexOf("=");
  return text.startsWith("-") && eq > 0 ? text.slice(0, eq) : text;
}

class UnitBuilder {
  readonly settings: Partial<Record<SettingKey, Setting>> = {};
  readonly notes: ConfigUnit["notes"] = [];
  constructor(private readonly ctx: UnitContext) {}

  /** Records a setting; a later call for the same key replaces it (the last occurrence wins). */
  set(key: SettingKey, value: Value, kind: OriginKind, syntax: Syntax, parts: { word: Word; from: number; to: number }[], fallback: number, editable = true): void {
    const span = spanOf(this.ctx.source, parts);
    const exact = span?.exact === true;
    if (fallback < 0) fallback = this.ctx.fallbackOffset ?? 0;
    const start = exact && span ? span.start : fallback;
    const end = exact && span ? span.end : fallback;
    const written = parts.map((p) => p.word.text.slice(p.from, p.to)).join(" ");
    const loc = location(this.ctx.file, this.ctx.index, start, end);
    const via = this.via(parts.map((p) => p.word));
    const unresolved = parts.find((p) => p.word.unresolved !== undefined)?.word.unresolved;
    const setting: Setting = {
      key,
      value: unresolved !== undefined && value.known ? unknown(`${written}: ${unresolved}`) : value,
      origin: { kind, location: loc, text: exact ? this.ctx.source.slice(start, end) : written, syntax },
      local: exact && editable,
    };
    if (via) setting.origin.via = via;
    if (!exact) {
      this.notes.push({ message: `${key}: value ${written} is not spelled contiguously in the source; it cannot be edited in place`, location: loc });
    }
    this.settings[key] = setting;
  }

  private via(words: readonly Word[]): string | undefined {
    const refs = words.flatMap((w) => w.vars);
    if (refs.length === 0) return undefined;
    const seen = new Set<string>();
    const names = refs
      .filter((r) => !seen.has(r.name) && seen.add(r.name))
      .map((r) => `$${r.name} (line ${this.ctx.index.point(r.offset).line})`);
    return `from ${names.join(", ")}`;
  }
}

/** The zero-width anchor after the command's last word, shared by all four sections. */
function launchAnchors(ctx: UnitContext, command: Command, style: "hydra" | "mlm"): ConfigUnit["anchors"] {
  // A command read out of `bash -c "$CMD"` has no place in the text where a new argument
  // would land in that command: its words live in variable assignments.
  const last = command.words[command.words.length - 1];
  if (command.nested || !last || last.rawEnd < 0) return {};
  const anchor: Anchor = { style, at: pointLocation(ctx.file, ctx.index, last.rawEnd), indent: "", receiver: "" };
  return { model: anchor, dataset: anchor, dist: anchor, ddp: anchor };
}

export function commandStart(ctx: UnitContext, command: Command): number {
  const first = command.words.find((w) => w.rawStart >= 0);
  return first?.rawStart ?? ctx.fallbackOffset ?? 0;
}

function commandLocation(ctx: UnitContext, command: Command): Location {
  const start = commandStart(ctx, command);
  let end = start;
  for (const w of command.words) if (w.rawEnd > end) end = w.rawEnd; // a loop: spreading 10^5 words overflows the stack
  return location(ctx.file, ctx.index, start, end);
}

function literalInt(word: Word | undefined, from = 0): number | undefined {
  if (!word || word.unresolved !== undefined) return undefined;
  const t = word.text.slice(from);
  return /^[0-9]+$/.test(t) ? Number(t) : undefined;
}


function modeFromFlag(value: string): Mode {
  const v = value.toLowerCase();
  if (v === "pretrain") return "pretrain";
  if (v === "sft" || v === "finetune") return "sft";
  if (v === "lora" || v === "dora" || v === "peft") return "peft";
  return "unknown";
}

const HYDRA_OVERRIDE = /^(\+\+|\+|~)?([A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+)*)(=|$)/;

/** A run_recipe-style launch line: Hydra overrides and convenience flags, last one wins. */
export function runRecipeUnit(ctx: UnitContext, command: Command, id: string): ConfigUnit {
  const b = new UnitBuilder(ctx);
  const words = command.words;
  let recipe: string | undefined;
  let modeFlag: Mode | undefined;
  let peft = false;
  let nproc: number | undefined;
  let nnodes: number | undefined;
  let script = "run_recipe";
  let scriptPath: string | undefined;
  const perf: PerfArgs = { useRecipes: false, perfFlags: false };
  for (let k = 0; k < words.length; k++) {
    const w = words[k] as Word;
    const t = w.text;
    if (BRIDGE_SCRIPTS.test(basename(t))) {
      script = basename(t);
      scriptPath = t;
    }
    const flag = flagName(t);
    // Before the script these are the interpreter's (`python -m torch.distributed.run`).
    if (scriptPath !== undefined && PERF_ONLY_FLAGS.has(flag)) perf.perfFlags = true;
    if (scriptPath !== undefined && flag === "--use_recipes") perf.useRecipes = true;
    const conv = CONVENIENCE_FLAGS[flag];
    if (conv) {
      const fv = flagValue(words, k, flag);
      if (fv) {
        const text = fv.word.text.slice(fv.from);
        b.set(conv, parseHydraValue(text), "cli-flag", "hydra", [{ word: fv.word, from: fv.from, to: fv.word.text.length }], fv.word.rawStart);
        k += fv.consumed;
      }
      continue;
    }
    if (flag === "--packed_sequence" || flag === "--packed-sequence") {
      // store_true: no value text to replace, so the setting is not edited in place.
      b.set("dataset.packed_sequence", known(true), "cli-flag", "hydra", [{ word: w, from: 0, to: t.length }], w.rawStart, false);
      continue;
    }
    if (t.startsWith("-")) {
      if (VALUE_FLAGS.has(flag)) {
        const fv = flagValue(words, k, flag);
        if (fv) {
          const v = fv.word.text.slice(fv.from);
          if (flag === "--recipe" || (flag === "--model" && recipe === undefined)) recipe = v;
          else if (scriptPath !== undefined && PERF_VALUE_FLAGS[flag]) perf[PERF_VALUE_FLAGS[flag]] = v;
          else if (flag === "--mode") modeFlag = modeFromFlag(v);
          else if (flag === "--peft_scheme") peft = v !== "" && v.toLowerCase() !== "none";
          else if (flag === "--nproc_per_node" || flag === "--nproc-per-node" || flag === "--gpus-per-node" || flag === "--gpus_per_node") nproc = literalInt(fv.word, fv.from);
          else if (flag === "--nnodes" || flag === "--nodes") nnodes = literalInt(fv.word, fv.from);
          k += fv.consumed;
        }
      }
      continue;
    }
    readHydraOverride(b, w);
  }
  const launcher = scriptPath !== undefined ? launcherOfScript(scriptPath, perf) : "training";
  // --use_recipes: bootstrap runs scripts/performance/run_recipe.py on megatron.bridge.recipes.<family>'s
  // `{mr}_{task}_config` (`{mr}_peft_config` for peft; utils/utils.py:860-880 build_recipe_config).
  if (launcher !== "training" && recipe === undefined) recipe = perfRecipeName(launcher, perf);
  const mode = modeFlag ?? (peft ? "peft" : runRecipeMode(recipe));
  const unit: ConfigUnit = {
    id,
    kind: "launch",
    name: recipe ? `${script} --recipe ${recipe}` : script,
    location: commandLocation(ctx, command),
    settings: b.settings,
    anchors: launchAnchors(ctx, command, "hydra"),
    mode,
    complete: false,
    notes: b.notes,
  };
  if (recipe) unit.baseRecipe = recipe;
  if (launcher !== "training") unit.launcher = launcher;
  // The performance launcher's world is -ng (argument_parser.py:223); its --gpus_per_node is per node only.
  const perfGpus = launcher !== "training" && perf.numGpus !== undefined && /^[1-9][0-9]{0,6}$/.test(perf.numGpus) ? Number(perf.numGpus) : undefined;
  const gpus = perfGpus ?? (nproc !== undefined ? nproc * (nnodes ?? 1) : undefined);
  if (gpus !== undefined && gpus > 0) unit.gpus = gpus;
  const domain = exportedDomain(ctx, command);
  if (domain) unit.nvlinkDomain = domain;
  return unit;
}

/** `key=value`, `+key=value`, `++key=value`, `~key`. */
function readHydraOverride(b: UnitBuilder, w: Word): void {
  const m = HYDRA_OVERRIDE.exec(w.text);
  if (!m) return;
  const key = settingKeyFor(m[2] ?? "");
  if (!key) return;
  const all = { word: w, from: 0, to: w.text.length };
  if (m[1] === "~") {
    // Deleting a key resets it to None; there is no value text to replace, so not editable in place.
    b.set(key, known(null), "hydra-override", "hydra", [all], w.rawStart, false);
    return;
  }
  if (m[3] !== "=") return;
  const from = m[0].length;
  const part = { word: w, from, to: w.text.length };
  const fallback = w.origins[from] ?? w.rawStart;
  b.set(key, parseHydraValue(w.text.slice(from)), "hydra-override", "hydra", [part], fallback < 0 ? w.rawStart : fallback);
}

function mlmValue(type: MlmType, texts: readonly string[]): Value {
  const ints = (xs: readonly string[]): Known[] | undefined => (xs.every((x) => /^-?[0-9]+$/.test(x)) ? xs.map(Number) : undefined);
  switch (type) {
    case "bool":
      return known(true);
    case "int": {
      const v = ints(texts);
      return v && v.length === 1 ? known(v[0] ?? null) : unknown(`not an integer: ${texts.join(" ")}`);
    }
    case "str":
      return known(texts[0] ?? "");
    case "ints": {
      const v = ints(texts);
      return v ? known(v) : unknown(`not a list of integers: ${texts.join(" ")}`);
    }
    case "strs":
      // argument_utils collapses a one-element nargs='+' list to a str.
      return texts.length === 1 ? known(texts[0] ?? "") : known([...texts]);
  }
}

/** Words after a nargs='+' flag up to the next option. */
function nargsWords(words: readonly Word[], k: number): Word[] {
  const out: Word[] = [];
  for (let j = k + 1; j < words.length; j++) {
    const t = (words[j] as Word).text;
    if (t.startsWith("-") && !/^-[0-9]/.test(t)) break;
    out.push(words[j] as Word);
  }
  return out;
}

/**
 * A Megatron-LM launch line. complete is true when every word is literal and no YAML
 * config is loaded: argparse then fills every other flag with its default.
 */
export function mlmUnit(ctx: UnitContext, command: Command, id: string): ConfigUnit {
  const b = new UnitBuilder(ctx);
  const words = command.words;
  let nproc: number | undefined;
  let nnodes: number | undefined;
  let script = "megatron";
  let selfContained = !command.nested;
  for (let k = 0; k < words.length; k++) {
    const w = words[k] as Word;
    const t = w.text;
    // A bare unresolved expansion (`$EXTRA_ARGS`, `"$@"`) may carry any flag; a flag's value may not.
    const prev = words[k - 1]?.text ?? "";
    const isFlagValue = prev.startsWith("--") && !prev.includes("=") && !t.startsWith("-");
    if (w.unresolved !== undefined && !t.startsWith("-") && !isFlagValue) selfContained = false;
    if (MLM_SCRIPT.test(basename(t))) script = basename(t);
    const flag = flagName(t);
    if (flag === "--yaml-cfg" || flag === "--config-file") selfContained = false;
    if (flag === "--nproc_per_node" || flag === "--nproc-per-node") nproc = literalInt(words[k + (t === flag ? 1 : 0)], t === flag ? 0 : flag.length + 1);
    if (flag === "--nnodes") nnodes = literalInt(words[k + (t === flag ? 1 : 0)], t === flag ? 0 : flag.length + 1);
    const spec = MLM_FLAGS[flag];
    if (!spec) continue;
    if (spec.type === "bool") {
      b.set(spec.key, known(true), "mlm-flag", "mlm", [{ word: w, from: 0, to: t.length }], w.rawStart, false);
      continue;
    }
    if (t !== flag) {
      const from = flag.length + 1;
      b.set(spec.key, mlmValue(spec.type, [t.slice(from)]), "mlm-flag", "mlm", [{ word: w, from, to: t.length }], w.rawStart);
      continue;
    }
    const valueWords = spec.type === "ints" || spec.type === "strs" ? nargsWords(words, k) : words.slice(k + 1, k + 2);
    if (valueWords.length === 0) {
      b.notes.push({ message: `${flag} has no value`, location: location(ctx.file, ctx.index, w.rawStart, Math.max(0, w.rawEnd)) });
      continue;
    }
    const parts = valueWords.map((vw) => ({ word: vw, from: 0, to: vw.text.length }));
    b.set(spec.key, mlmValue(spec.type, valueWords.map((vw) => vw.text)), "mlm-flag", "mlm", parts, valueWords[0]?.rawStart ?? -1);
    k += valueWords.length;
  }
  const unit: ConfigUnit = {
    id,
    kind: "mlm-launch",
    name: script,
    location: commandLocation(ctx, command),
    settings: b.settings,
    anchors: launchAnchors(ctx, command, "mlm"),
    mode: "unknown",
    complete: selfContained,
    notes: b.notes,
  };
  const gpus = nproc !== undefined ? nproc * (nnodes ?? 1) : undefined;
  if (gpus !== undefined && gpus > 0) unit.gpus = gpus;
  const domain = exportedDomain(ctx, command);
  if (domain) unit.nvlinkDomain = domain;
  return unit;
}

/**
 * `export NVLINK_DOMAIN_SIZE=72` before the launch (Bridge's examples/models/stepfun/step35/
 * slurm_pretrain.sh:95 at HEAD 067f987; `=8` in kimi_k25_vl/slurm_inference.sh:61): the
 * domain the script was written for. A value that is not a plain number says nothing.
 */
function exportedDomain(ctx: UnitContext, command: Command): ConfigUnit["nvlinkDomain"] {
  const v = command.nvlinkDomainSize;
  const word = v && !v.isArray && v.elements.length === 1 ? v.elements[0] : undefined;
  if (!word || word.unresolved) return undefined;
  const gpus = domainSizeOf(word.text);
  if (gpus === undefined) return undefined;
  const at = word.origins.find((o) => o >= 0) ?? v!.offset;
  return domainFromEnv(gpus, `NVLINK_DOMAIN_SIZE=${gpus} at ${ctx.file}:${ctx.index.point(at).line}`, false);
}
