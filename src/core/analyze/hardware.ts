// GPUs per NVLink domain from a file's hardware namespace. Megatron-Bridge keeps recipes
// per GPU (`recipes/<family>/gb200/…`, `perf_recipes/<family>/<gpu>/…`, functional-test
// launchers under `launch_scripts/gb200/…`); its perf recipes state the domain each of them
// assumes in `env_vars["NVLINK_DOMAIN_SIZE"]` (HEAD 067f987: 8 on h100, b200 and b300; 72
// on gb200, gb300 and vr200, the NVL72 racks). Its perf scripts count r100 with the 72-GPU
// targets too (scripts/performance/utils/utils.py:322-327 apply_target_topology_environment,
// utils/overrides.py:271). A folder that names no known GPU says nothing.
import type { ConfigUnit } from "../model/settings.ts";

const DOMAIN_BY_GPU: Record<string, { gpus: number; system: string }> = {
  h100: { gpus: 8, system: "H100 (8-GPU NVLink node)" },
  h200: { gpus: 8, system: "H200 (8-GPU NVLink node)" },
  b200: { gpus: 8, system: "B200 (8-GPU NVLink node)" },
  b300: { gpus: 8, system: "B300 (8-GPU NVLink node)" },
  gb200: { gpus: 72, system: "GB200 NVL72" },
  gb300: { gpus: 72, system: "GB300 NVL72" },
  vr200: { gpus: 72, system: "VR200 NVL72" },
  r100: { gpus: 72, system: "R100 (72-GPU NVLink domain)" },
};

/** The NVLink domain a path's hardware folder names, with a sentence saying where it came from. */
export function nvlinkDomainOf(path: string): ConfigUnit["nvlinkDomain"] {
  const segments = path.split("/");
  // The innermost folder wins (`perf_recipes/llama/gb200/` inside any outer folder).
  for (let i = segments.length - 2; i >= 0; i--) {
    const gpu = segments[i]?.toLowerCase() ?? "";
    const domain = DOMAIN_BY_GPU[gpu];
    if (domain) {
      const folder = segments.slice(Math.max(0, i - 2), i + 1).join("/");
      return { gpus: domain.gpus, source: `${domain.system}, from the hardware folder ${folder}/` };
    }
  }
  return undefined;
}

/**
 * Upstream's flat recipe names carry the hardware: recipes/utils/naming.py
 * recipe_function_name builds `{model}_{task}_{N}gpu_{gpu}_{precision}{variant}_config`
 * (Bridge HEAD 067f987), with the precision tokens of its PRECISION_NAME_MAP. Only a name
 * that matches that scheme exactly, with a GPU listed here, is read; any other name says nothing.
 */
const RECIPE_NAME = /^[a-z0-9][a-z0-9_]*_(?:pretrain|sft|peft)_[1-9][0-9]*gpu_([a-z0-9]+)_(?:bf16|fp8cs|fp8ds|fp8mx|fp8sc|nvfp4)(?:_[a-z0-9_]+)?_config$/;

export function nvlinkDomainOfName(name: string): ConfigUnit["nvlinkDomain"] {
  const gpu = RECIPE_NAME.exec(name)?.[1];
  const domain = gpu ? DOMAIN_BY_GPU[gpu] : undefined;
  if (!domain) return undefined;
  return { gpus: domain.gpus, source: `${domain.system}, from the recipe name ${name} (Bridge's naming scheme {model}_{task}_{N}gpu_{gpu}_{precision}_config, recipes/utils/naming.py)` };
}

/**
 * The GPUs a stated `NVLINK_DOMAIN_SIZE` gives: a positive integer, as Bridge's perf recipes
 * write it (`"NVLINK_DOMAIN_SIZE": 72` in cfg.env_vars, perf_recipes/*\/<gpu>/*.py at HEAD
 * 067f987; `"72"` once, a string, since env_vars values are exported as text), or as a
 * launch script exports it (`export NVLINK_DOMAIN_SIZE=72`, examples/models/stepfun/step35/
 * slurm_pretrain.sh:95). Anything else (0, `$X`, a float) says nothing.
 */
export function domainSizeOf(value: unknown): number | undefined {
  const n = typeof value === "number" ? value : typeof value === "string" && /^\s*[1-9][0-9]{0,5}\s*$/.test(value) ? Number(value) : NaN;
  return Number.isInteger(n) && n > 0 && n <= 100_000 ? n : undefined;
}

/** Where a stated domain size came from, for HCP018's messages. */
export function domainFromEnv(gpus: number, source: string, inherited: boolean): NonNullable<ConfigUnit["nvlinkDomain"]> {
  const domain: NonNullable<ConfigUnit["nvlinkDomain"]> = { gpus, source };
  if (inherited) domain.inherited = true;
  return domain;
}
