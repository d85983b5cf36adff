// The smoke command line and its environment, as data. Nothing here spawns or touches the
// file system, so --dry-run and the tests see exactly what the real run executes.
import { delimiter } from "node:path";

export const RECIPE_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const TRAINING_SCRIPT = "scripts/training/run_recipe.py";

export interface SmokeCommand {
  recipe: string;
  nproc: number;
  /** uv: `uv run python` (default); python: the environment's python (a container's). */
  launcher?: "uv" | "python";
  /** The composed Hydra overrides (overrides.ts composeOverrides: the harness's come last). */
  overrides: readonly string[];
  /** probe/launch.py in the run's probe dir (probe.ts). */
  launcherScript: string;
}

/** The descriptor the launcher receives the ranks' key lines on (launch.py moves it to 0). */
export const KEY_FD = 3;
/** What a rank's probe reads its key line from (torchrun's ranks inherit only 0, 1 and 2). */
export const RANK_KEY_FD = 0;

/** The program that starts torchrun: `uv run python`, or `python` itself (a container's environment). */
export function launcherArgv(launcher: "uv" | "python"): string[] {
  return launcher === "uv" ? ["uv", "run", "python"] : ["python"];
}

/**
 * The seed's smoke command (docs/domain.md 2.1), `uv run python -m torch.distributed.run
 * --nproc_per_node=N scripts/training/run_recipe.py --recipe NAME OVERRIDES...`, with
 * `-u -I -S LAUNCHER` in place of `-m torch.distributed.run`: `-m` would put the checkout first
 * on sys.path and `site` would run its .pth files and sitecustomize, so code of the PR could take
 * the launcher's place. probe/launch.py runs torch's own torch.distributed.run, isolated.
 */
export function buildArgv(cmd: SmokeCommand): string[] {
  return [
    ...launcherArgv(cmd.launcher ?? "uv"),
    "-u",
    "-I",
    "-S",
    cmd.launcherScript,
    `--nproc_per_node=${cmd.nproc}`,
    TRAINING_SCRIPT,
    "--recipe",
    cmd.recipe,
    ...cmd.overrides,
  ];
}

export type Env = Readonly<Record<string, string | undefined>>;

export interface SmokeEnv {
  /** The complete child environment (the parent's plus the additions, minus the removals). */
  env: Record<string, string>;
  /** What changed, for --dry-run and the log header. */
  added: Record<string, string>;
  removed: string[];
  /** Lines to print before the run starts (why something was changed). */
  notices: string[];
}

/**
 * Makes HCP observable (fixtures/logs/README.md):
 * - TORCH_CPP_LOG_LEVEL=INFO: torch's ProcessGroupNCCL names each group (desc) only in C++ INFO lines;
 * - TORCH_DISTRIBUTED_DEBUG=DETAIL wraps every group in ProcessGroupWrapper, which hides the
 *   desc, so it is dropped (INFO and OFF are harmless and kept);
 * - PYTHONUNBUFFERED=1: ranks' lines reach the log as they happen, not at exit (a killed run
 *   would otherwise lose its last lines);
 * - the probe dir first on PYTHONPATH, so every rank imports our sitecustomize (the launcher,
 *   isolated, ignores PYTHONPATH's probe dir);
 * - HCP_PROBE_KEY_FD=0: the descriptor a rank reads its key line from (a marker, never the key,
 *   which is in no environment: any process of the user can read /proc/PID/environ); and no
 *   HCP_PROBE_KEY or HCP_PROBE_KEY_FILE from the runner's own environment.
 */
export function buildEnv(parent: Env, probeDir: string): SmokeEnv {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(parent)) if (v !== undefined) env[k] = v;
  const notices: string[] = [];
  const removed: string[] = [];
  for (const name of ["HCP_PROBE_KEY", "HCP_PROBE_KEY_FILE"] as const) {
    if (env[name] === undefined) continue;
    delete env[name];
    removed.push(name);
    notices.push(`${name} removed from the environment: the probe signs only with the key this run makes`);
  }
  if ((env.TORCH_DISTRIBUTED_DEBUG ?? "").trim().toUpperCase() === "DETAIL") {
    delete env.TORCH_DISTRIBUTED_DEBUG;
    removed.push("TORCH_DISTRIBUTED_DEBUG");
    notices.push("TORCH_DISTRIBUTED_DEBUG=DETAIL removed: it wraps process groups so torch never prints their HCP group names");
  }
  const pythonPath = env.PYTHONPATH ? `${probeDir}${delimiter}${env.PYTHONPATH}` : probeDir;
  const added: Record<string, string> = {
    TORCH_CPP_LOG_LEVEL: "INFO",
    PYTHONUNBUFFERED: "1",
    PYTHONPATH: pythonPath,
    HCP_PROBE_KEY_FD: String(RANK_KEY_FD),
  };
  if (env.TORCH_CPP_LOG_LEVEL && env.TORCH_CPP_LOG_LEVEL.toUpperCase() !== "INFO") {
    notices.push(`TORCH_CPP_LOG_LEVEL=${env.TORCH_CPP_LOG_LEVEL} replaced by INFO: torch names process groups only at INFO`);
  }
  Object.assign(env, added);
  return { env, added, removed, notices };
}
