// What smoke-run needs in the checkout and on PATH before it starts anything: the launcher
// (`uv`, or `python` in a container) and Megatron-Bridge's scripts/training/run_recipe.py at
// the checked-out commit. A missing one is a clear refusal, not a torchrun traceback.
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { TRAINING_SCRIPT, type Env } from "./command.ts";

/** The first executable `name` on PATH, or undefined. */
export function onPath(name: string, env: Env): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue; // a relative PATH entry would resolve inside the checkout
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not there, or not executable
    }
  }
  return undefined;
}

/** Why the run cannot start here, or null. */
export function checkoutProblem(launcher: "uv" | "python", cwd: string, env: Env): string | null {
  const at = env.HCP_SHA ? ` (commit ${env.HCP_SHA.slice(0, 12)})` : "";
  const script = resolve(cwd, TRAINING_SCRIPT);
  let isFile = false;
  try {
    isFile = statSync(script).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) return `${TRAINING_SCRIPT} is not in the checkout ${resolve(cwd)}${at}: smoke-run starts recipes through Megatron-Bridge's run_recipe.py, so run it at the root of a Megatron-Bridge checkout`;
  const program = launcher === "uv" ? "uv" : "python";
  if (!onPath(program, env)) {
    return launcher === "uv"
      ? "uv is not on PATH: install uv on the runner, or set smoke.launcher: python in .github/hcp-bot.yml to use the environment's (a container's) python, and render the workflow again"
      : "python is not on PATH: the container (smoke.container.image) must provide python with torch and Megatron-Bridge's dependencies, or set smoke.launcher: uv";
  }
  return null;
}
