// `hcp-bot init-workflow`: renders templates/hcp-smoke.yml with the runner labels, the job
// time limit and the hcp-bot version, and writes it where GitHub Actions reads workflows.
// Defaults come from the repository's .github/hcp-bot.yml when there is one (smoke.workflow,
// smoke.runner_labels, smoke.timeouts.run_minutes, and where the job runs: smoke.container,
// smoke.launcher, smoke.env), so the workflow and the bot agree.
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import * as z from "zod";
import { CONFIG_PATH, parseRepoConfig, SmokeConfigSchema, type SmokeConfig } from "../core/config/repo-config.ts";
import { ContainerSchema, LAUNCHERS, SmokeEnvSchema, type ContainerConfig, type Launcher } from "../core/config/smoke-runtime.ts";
import { VERSION } from "../version.ts";
import { WORKFLOW_TEMPLATE_VERSION } from "../core/smoke/workflow.ts";
import { packageFile } from "../node/package-files.ts";

export const TEMPLATE_PATH = packageFile("templates/hcp-smoke.yml");
export const DEFAULT_WORKFLOW_PATH = ".github/workflows/hcp-smoke.yml";
const DEFAULT_LABELS: readonly string[] = SmokeConfigSchema.parse({}).runner_labels;
/** Minutes the job keeps after smoke-run's own limit, to stop the run and upload the log. */
const UPLOAD_MARGIN_MINUTES = 5;

export const INIT_WORKFLOW_USAGE = `Usage: hcp-bot init-workflow [--labels ${DEFAULT_LABELS.join(",")}] [--timeout-minutes 35]
                             [--out ${DEFAULT_WORKFLOW_PATH}] [--force]

Writes the GitHub Actions workflow that runs \`hcp-bot smoke-run\` on a self-hosted GPU runner.
Defaults come from ${CONFIG_PATH} when it exists: smoke.workflow (the file name),
smoke.runner_labels, smoke.timeouts.run_minutes (the run's limit; the job gets
${UPLOAD_MARGIN_MINUTES} more minutes to stop it and upload the log), smoke.container (image, options,
credentials: the names of the registry secrets), smoke.launcher (uv or python) and smoke.env. Commit it to the default branch. The npx package spec is hcp-bot@${VERSION}, or $HCP_BOT_SPEC
when set (the repository variable HCP_BOT_SPEC overrides it at run time). With $HCP_BOT_INTEGRITY
(sha512-..., from \`npm view hcp-bot@VERSION dist.integrity\`) the job installs only a tarball with that
hash (the repository variable HCP_BOT_INTEGRITY overrides it at run time, with HCP_BOT_SPEC).
`;

export class InitWorkflowError extends Error {}

/** The flags `init-workflow` takes (its parser's, and what `hcp-bot` checks unknown flags against). */
export const INIT_WORKFLOW_OPTIONS = {
  labels: { type: "string" },
  "timeout-minutes": { type: "string" },
  out: { type: "string" },
  force: { type: "boolean" },
} as const;

const LabelSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "runner labels are letters, digits, . _ - (e.g. self-hosted,linux,gpu-4)");
/** An npm package at an exact version (name@1.2.3): a tag or range would let the registry choose what runs on the GPU runner. */
const SpecSchema = z.string().regex(/^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*@\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/, "HCP_BOT_SPEC must be an npm package spec at an exact version, such as hcp-bot@1.2.3 (no tag or range)");

/** npm's integrity string for one tarball (`dist.integrity`): sha512, base64. */
const IntegritySchema = z.string().regex(/^sha512-[A-Za-z0-9+/]{86}==$/, "HCP_BOT_INTEGRITY must be a sha512 integrity such as npm view hcp-bot@1.2.3 dist.integrity prints (sha512-...==)");

export interface WorkflowSettings {
  labels: string[];
  timeoutMinutes: number;
  spec: string;
  /** The tarball's sha512 integrity the job must find before installing; none: npm's own check against the registry. */
  integrity?: string;
  /** smoke.container / launcher / env of .github/hcp-bot.yml (validated there); none: the bare runner with uv. */
  runtime?: WorkflowRuntime;
}

export interface WorkflowRuntime {
  container: ContainerConfig | null;
  launcher: Launcher;
  env: Readonly<Record<string, string>>;
}

const SettingsSchema = z.object({
  labels: z.array(LabelSchema).min(1, "at least one runner label").max(16),
  timeoutMinutes: z.number().int().min(UPLOAD_MARGIN_MINUTES + 1, `--timeout-minutes must be at least ${UPLOAD_MARGIN_MINUTES + 1}`).max(72 * 60, "--timeout-minutes is at most 4320 (GitHub's limit for self-hosted runners)"),
  spec: SpecSchema,
  integrity: IntegritySchema.optional(),
  runtime: z.object({ container: ContainerSchema.nullable(), launcher: z.enum(LAUNCHERS), env: SmokeEnvSchema }).optional(),
});

/** `container:` of the job (GitHub pulls the image and runs every step in it). Values are JSON strings, which YAML reads as they are. */
function containerBlock(c: ContainerConfig | null): string[] {
  if (!c) return [];
  return [
    "container:",
    `  image: ${JSON.stringify(c.image)}`,
    ...(c.options ? [`  options: ${JSON.stringify(c.options)}`] : []),
    ...(c.credentials ? ["  credentials:", `    username: \${{ secrets.${c.credentials.username} }}`, `    password: \${{ secrets.${c.credentials.password} }}`] : []),
  ];
}

/** Replaces each `# __HCP_NAME__` line with the block's lines at its indentation (none: the line goes). */
function fillBlocks(text: string, blocks: Record<string, string[]>): string {
  return text.replace(/^( *)# (__HCP_[A-Z_]+__)\n/gm, (_, indent: string, name: string) => {
    const lines = blocks[name];
    if (lines === undefined) throw new Error(`template block ${name} has no value`);
    return lines.map((l) => `${indent}${l}\n`).join("");
  });
}

export function readTemplate(): Promise<string> {
  return readFile(TEMPLATE_PATH, "utf8");
}

/** Fills the placeholders. Values are validated first, so plain substitution cannot break the YAML. */
export function renderWorkflow(template: string, settings: WorkflowSettings): string {
  const s = SettingsSchema.parse(settings);
  const runtime = s.runtime ?? { container: null, launcher: "uv" as const, env: {} };
  const blocks = fillBlocks(template, {
    __HCP_CONTAINER__: containerBlock(runtime.container),
    __HCP_EXTRA_ENV__: Object.entries(runtime.env).map(([name, value]) => `${name}: ${JSON.stringify(value)}`),
  });
  const values: Record<string, string> = {
    __HCP_RUNS_ON__: `[${s.labels.join(", ")}]`,
    __HCP_TIMEOUT_MINUTES__: String(s.timeoutMinutes),
    // Two legs, each with the run's limit, plus the one upload margin.
    __HCP_AB_TIMEOUT_MINUTES__: String(2 * (s.timeoutMinutes - UPLOAD_MARGIN_MINUTES) + UPLOAD_MARGIN_MINUTES),
    __HCP_RUN_TIMEOUT__: `${s.timeoutMinutes - UPLOAD_MARGIN_MINUTES}m`,
    __HCP_BOT_SPEC__: s.spec,
    __HCP_BOT_INTEGRITY__: s.integrity ?? "",
    __HCP_TEMPLATE_VERSION__: String(WORKFLOW_TEMPLATE_VERSION),
    __HCP_LAUNCHER__: runtime.launcher,
  };
  const rendered = blocks.replace(/__HCP_[A-Z_]+__/g, (name) => {
    const value = values[name];
    if (value === undefined) throw new Error(`template placeholder ${name} has no value`);
    return value;
  });
  parseYaml(rendered); // a broken template fails here rather than in GitHub
  return rendered;
}

function parseInitArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>, config: SmokeConfig): WorkflowSettings & { out: string; force: boolean } {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: INIT_WORKFLOW_OPTIONS,
    }));
  } catch (error) {
    throw new InitWorkflowError((error as Error).message);
  }
  const timeout = values["timeout-minutes"] ?? String(config.timeouts.run_minutes + UPLOAD_MARGIN_MINUTES);
  if (!/^\d+$/.test(timeout)) throw new InitWorkflowError(`--timeout-minutes must be a whole number of minutes, got ${JSON.stringify(timeout)}`);
  const settings = {
    labels: values.labels === undefined ? [...config.runner_labels] : values.labels.split(",").map((l) => l.trim()).filter(Boolean),
    timeoutMinutes: Number(timeout),
    spec: env.HCP_BOT_SPEC?.trim() || `hcp-bot@${VERSION}`,
    ...(env.HCP_BOT_INTEGRITY?.trim() ? { integrity: env.HCP_BOT_INTEGRITY.trim() } : {}),
    runtime: { container: config.container, launcher: config.launcher, env: config.env },
  };
  const checked = SettingsSchema.safeParse(settings);
  if (!checked.success) throw new InitWorkflowError(checked.error.issues.map((i) => i.message).join("\n"));
  return { ...checked.data, out: values.out ?? `.github/workflows/${config.workflow}`, force: values.force ?? false };
}

function runtimeSummary(r: WorkflowRuntime | undefined): string {
  if (!r) return "uv on the runner";
  const where = r.container ? `container ${r.container.image}` : "on the runner";
  const env = Object.keys(r.env).length ? `, env ${Object.keys(r.env).join(" ")}` : "";
  return `${r.launcher === "uv" ? "uv run python" : "python"} ${where}${env}`;
}

export interface InitWorkflowDeps {
  out(text: string): void;
  err(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}

/** The smoke section of the repository's .github/hcp-bot.yml (defaults when there is none). */
async function readSmokeConfig(cwd: string): Promise<SmokeConfig> {
  const path = resolve(cwd, CONFIG_PATH);
  const result = parseRepoConfig(existsSync(path) ? await readFile(path, "utf8") : undefined);
  if (!result.ok) throw new InitWorkflowError(`${CONFIG_PATH}: ${result.problem}`);
  return result.config.smoke;
}

export async function initWorkflow(argv: readonly string[], deps: InitWorkflowDeps): Promise<number> {
  let args;
  try {
    args = parseInitArgs(argv, deps.env, await readSmokeConfig(deps.cwd));
  } catch (error) {
    if (error instanceof InitWorkflowError) {
      deps.err(`hcp-bot init-workflow: ${error.message}\n\n${INIT_WORKFLOW_USAGE}`);
      return 2;
    }
    throw error;
  }
  const target = resolve(deps.cwd, args.out);
  if (existsSync(target) && !args.force) {
    deps.err(`hcp-bot init-workflow: ${args.out} already exists; pass --force to overwrite it\n`);
    return 2;
  }
  const rendered = renderWorkflow(await readTemplate(), args);
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, rendered);
  deps.out(
    `wrote ${args.out} (runs-on: [${args.labels.join(", ")}], timeout-minutes: ${args.timeoutMinutes}, ${args.spec}${args.integrity ? ` pinned to ${args.integrity.slice(0, 19)}…` : ""}, ${runtimeSummary(args.runtime)})\n` +
      "Commit it to the default branch; the bot dispatches it there with the PR's SHA.\n",
  );
  return 0;
}
