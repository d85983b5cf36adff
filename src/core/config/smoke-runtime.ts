// Where the smoke job runs, from `.github/hcp-bot.yml` `smoke:`: the repository's container
// image (Megatron-Bridge's own GPU CI runs in the project's container, not on the bare
// runner), the launcher (`uv run python`, or the container's `python`), and extra environment
// variables. `init-workflow` renders them into the workflow; the bot's dispatch does not
// change. Everything here ends up in YAML and in a GPU job's environment, so names and values
// are allowlists, and secrets are never values: the config names repository secrets instead.
import * as z from "zod";

/** registry/name[:tag][@sha256:digest], as Docker reads an image reference (lowercase path). */
const IMAGE_RE = /^(?:[a-z0-9]+(?:[._-][a-z0-9]+)*(?::\d{1,5})?\/)?[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;
/** `docker create` options: words of letters, digits and `= : , . / _ + -` (no quotes, `$` or expressions). */
const OPTIONS_RE = /^[A-Za-z0-9=:,./_+\- ]{0,500}$/;
/** A repository secret's name, as GitHub allows them (GITHUB_ is reserved). */
const SecretName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,99}$/, "a repository secret's name, such as NGC_API_KEY (the config names secrets; it never holds them)")
  .refine((n) => !/^GITHUB_/i.test(n), "secret names starting with GITHUB_ are reserved by GitHub");

export const ContainerSchema = z
  .object({
    image: z.string().max(300).regex(IMAGE_RE, "an image reference such as nvcr.io/nvidia/nemo:25.09 (lowercase name, optional :tag and @sha256:digest)"),
    options: z.string().regex(OPTIONS_RE, "docker options: letters, digits, spaces and = : , . / _ + - only, such as --gpus all --ipc=host --shm-size=16g").optional(),
    /** Names of the repository secrets holding the registry login (for a private registry such as nvcr.io). */
    credentials: z.object({ username: SecretName, password: SecretName }).strict().optional(),
  })
  .strict();
export type ContainerConfig = z.infer<typeof ContainerSchema>;

export const LAUNCHERS = ["uv", "python"] as const;
export type Launcher = (typeof LAUNCHERS)[number];

// Variables a smoke run may tune: the communication and kernel libraries, torch, caches.
const ENV_PREFIXES = ["NCCL_", "NVTE_", "CUDA_", "CUDNN_", "CUBLAS_", "TORCH_", "PYTORCH_", "TRITON_", "NVIDIA_", "UCX_", "HF_", "UV_", "MEGATRON_"];
const ENV_NAMES = new Set(["OMP_NUM_THREADS", "MKL_NUM_THREADS", "TOKENIZERS_PARALLELISM", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "XDG_CACHE_HOME", "TMPDIR"]);
// The harness's own, or ones that change what runs or who it is (smoke-run sets or strips these).
const ENV_RESERVED = new Set(["TORCH_CPP_LOG_LEVEL", "TORCH_DISTRIBUTED_DEBUG", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_DEFAULT_INDEX", "UV_PYTHON", "UV_PROJECT", "UV_CONFIG_FILE"]);
/** Names that say "secret": such a value belongs in a repository secret, never in the config. */
const SECRET_NAME_RE = /(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|PRIVATE|AUTH)/i;
/** Values that look like credentials (GitHub, Hugging Face, NGC, Slack, AWS, JWTs, PEM). */
const SECRET_VALUE_RE = /\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|hf_[A-Za-z0-9]{20,}|nvapi-[\w-]{20,}|xox[abprs]-[\w-]{10,}|AKIA[0-9A-Z]{16}|eyJ[\w-]{10,}\.[\w-]{10,}\.)|-----BEGIN/;
const VALUE_RE = /^[A-Za-z0-9 _.,:/=+@%-]{0,256}$/;

function envNameProblem(name: string): string | null {
  if (!/^[A-Z_][A-Z0-9_]{0,63}$/.test(name)) return `${name}: environment names are upper-case letters, digits and _`;
  if (name.startsWith("HCP_") || ENV_RESERVED.has(name)) return `${name} is set by hcp-bot's harness and cannot be configured`;
  if (SECRET_NAME_RE.test(name)) return `${name} looks like a secret: secrets never go in ${"`.github/hcp-bot.yml`"} (store it as a repository secret; the workflow must read it from there)`;
  if (!ENV_NAMES.has(name) && !ENV_PREFIXES.some((p) => name.startsWith(p))) {
    return `${name} is not an allowed variable (allowed: ${ENV_PREFIXES.map((p) => `${p}*`).join(", ")}, ${[...ENV_NAMES].join(", ")})`;
  }
  return null;
}

export const SmokeEnvSchema = z
  .record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String))
  .superRefine((env, ctx) => {
    for (const [name, value] of Object.entries(env)) {
      const problem = envNameProblem(name);
      if (problem) ctx.addIssue({ code: "custom", path: [name], message: problem });
      else if (SECRET_VALUE_RE.test(value)) ctx.addIssue({ code: "custom", path: [name], message: "the value looks like a credential: secrets never go in the config" });
      else if (!VALUE_RE.test(value)) ctx.addIssue({ code: "custom", path: [name], message: "values are at most 256 letters, digits, spaces and _ . , : / = + @ % - (no quotes, $ or expressions)" });
    }
  })
  .refine((env) => Object.keys(env).length <= 32, "at most 32 variables");

/** The fields SmokeConfigSchema adds (repo-config.ts). */
export const smokeRuntimeFields = {
  /** Run the smoke job in this container (a `container:` job). */
  container: ContainerSchema.nullable().default(null),
  /** `uv`: `uv run python -m torch.distributed.run ...` (default); `python`: the environment's (the container's) python. */
  launcher: z.enum(LAUNCHERS).default("uv"),
  /** Extra environment variables for the smoke job (allowlisted names, no secrets). */
  env: SmokeEnvSchema.default({}),
};
