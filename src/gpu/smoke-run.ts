// `hcp-bot smoke-run`: runs ON the self-hosted GPU runner, inside the hcp-smoke workflow.
// Builds the smoke command (argv, never a shell string), makes HCP observable (env + probe),
// runs it as one process group with a time limit, tees the merged output to our stdout and
// the log file while the verdict parser reads it (constant memory), then writes verdict.json,
// run.json and the job summary. Exit 0 only on a passing verdict, 1 otherwise, 2 on bad usage.
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, mkdtempSync, type WriteStream } from "node:fs";
import { appendFile, mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, isAbsolute } from "node:path";
import { parseArgs } from "node:util";
import type { Writable } from "node:stream";
import * as z from "zod";
import { createVerdictParser, requestedLayout, type Verdict, type VerdictOptions } from "../core/verdict/index.ts";
import { VERSION } from "../version.ts";
import { buildArgv, buildEnv, KEY_FD, RECIPE_RE, type Env } from "./command.ts";
import { checkoutProblem } from "./checkout.ts";
import { composeOverrides, OverrideError, overridesFromEnv, parseOverrides, type ParsedOverride } from "./overrides.ts";
import { keyLines, writeProbeDir } from "./probe.ts";
import { formatMs, parseDuration, runSmokeProcess, type RunResult } from "./process.ts";
import { verdictJson, verdictLine, verdictMarkdown, verdictText } from "./report.ts";
import { commitmentLine, delimiterLine, digestLine, type FileDigest, type ReportedFile } from "../core/smoke/runner-report.ts";
import { COMPARE_MODES, compareLegs, comparisonMarkdown, createSeriesCollector, referenceOverrides, type IterationPoint, type ReferenceMode } from "../core/ab/index.ts";

export const SMOKE_EXIT = { pass: 0, fail: 1, usage: 2 } as const;

export const SMOKE_RUN_USAGE = `Usage: hcp-bot smoke-run --recipe NAME [options] [-- OVERRIDES...]

Runs \`uv run python -u -I -S LAUNCHER --nproc_per_node=N scripts/training/run_recipe.py
--recipe NAME OVERRIDES... HARNESS...\` in the current checkout (\`python ...\` with
--launcher python), where LAUNCHER starts torch's own torch.distributed.run with nothing of the
checkout importable, with HCP made observable (TORCH_CPP_LOG_LEVEL=INFO and a probe), and
writes the verdict. It refuses to start (exit 2) when the launcher is not on PATH or
scripts/training/run_recipe.py is not in the checkout, --dry-run included.

Options:
  --recipe NAME            recipe function (required)
  --nproc N                GPUs / ranks (default 4)
  --launcher uv|python     uv run python (default), or the environment's python (a container)
  --iters N                training iterations (default 2)
  --timeout DUR            wall-time limit, e.g. 30m, 1h, 90s (default 30m)
  --grace DUR              SIGTERM → SIGKILL delay when stopping the run (default 10s)
  --out DIR                verdict.json, run.json and the log, outside the checkout
                           (default $RUNNER_TEMP/hcp-smoke-out, else a new temporary folder)
  --log FILE               the log file (default DIR/smoke.log; outside the checkout too)
  --expect-hcp             the run must prove HCP active (default)
  --no-expect-hcp          a flat-CP run may pass
  --gpu NAME               H100, H200, B200, … for the TFLOP/s sanity check
  --overrides-env VAR      read more overrides from VAR, a JSON array of strings
  --compare MODE           none (default), p2p or a2a: after the run, run the same command
                           again with model.cp_comm_type=MODE and no hierarchical sizes (the
                           reference leg: its own --timeout, probe key, reference.log and
                           reference.verdict.json) and compare throughput and loss
  --dry-run                print the argv (JSON) and the environment changes; run nothing

Overrides are Hydra KEY=VALUE (key optionally prefixed by +, ++ or ~). The harness always sets
logger.log_interval=1 logger.log_throughput=true train.train_iters=ITERS checkpoint.save=null
checkpoint.load=null validation.eval_iters=0 validation.eval_interval=0 (last, so they win):
other values for these keys, or any checkpoint.* key, are refused; exact repeats are dropped.
Unless given, it also sets train.global_batch_size=NPROC train.micro_batch_size=1.
Exit status: 0 pass, 1 any other verdict, 2 bad usage.
`;

export class SmokeUsageError extends Error {}

const Count = (min: number, max: number, name: string) =>
  z.coerce.number({ error: `${name} must be a number` }).int(`${name} must be a whole number`).min(min, `${name} must be at least ${min}`).max(max, `${name} must be at most ${max}`);

const Duration = (name: string, maxMs: number) =>
  z.string().transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined || ms <= 0 || ms > maxMs) {
      ctx.addIssue({ code: "custom", message: `${name} must be a duration such as 90s, 30m or 1h (at most ${formatMs(maxMs)}), got ${JSON.stringify(text)}` });
      return z.NEVER;
    }
    return ms;
  });

const SmokeRunOptionsSchema = z.object({
  recipe: z.string({ error: "--recipe NAME is required" }).regex(RECIPE_RE, "--recipe must be a Python identifier (a recipe function name)"),
  nproc: Count(1, 64, "--nproc").default(4),
  iters: Count(1, 50, "--iters").default(2),
  timeoutMs: Duration("--timeout", 24 * 3_600_000).default(30 * 60_000),
  graceMs: Duration("--grace", 10 * 60_000).default(10_000),
  out: z.string().min(1).optional(),
  log: z.string().min(1).optional(),
  expectHcp: z.boolean().default(true),
  launcher: z.enum(["uv", "python"], { error: "--launcher must be uv or python" }).default("uv"),
  gpu: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, "--gpu must be a GPU name such as H100").optional(),
  overridesEnv: z.string().optional(),
  compare: z.enum(COMPARE_MODES, { error: "--compare must be none, p2p or a2a" }).default("none"),
  dryRun: z.boolean().default(false),
});
export type SmokeRunOptions = z.output<typeof SmokeRunOptionsSchema> & {
  /** The user's overrides, validated (kept for the verdict's layout comparison). */
  userOverrides: ParsedOverride[];
  /** The final override list: user, harness defaults, fixed harness settings. */
  overrides: string[];
  /** User overrides dropped because they repeat a harness setting exactly. */
  duplicates: string[];
};

/** Parses and validates the command line; throws SmokeUsageError with a message for the user. */
export function parseSmokeRunArgs(argv: readonly string[], env: Env): SmokeRunOptions {
  let parsedArgs;
  try {
    parsedArgs = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        recipe: { type: "string" },
        nproc: { type: "string" },
        iters: { type: "string" },
        timeout: { type: "string" },
        grace: { type: "string" },
        out: { type: "string" },
        log: { type: "string" },
        "expect-hcp": { type: "boolean" },
        "no-expect-hcp": { type: "boolean" },
        launcher: { type: "string" },
        gpu: { type: "string" },
        "overrides-env": { type: "string" },
        compare: { type: "string" },
        "dry-run": { type: "boolean" },
      },
    });
  } catch (error) {
    throw new SmokeUsageError((error as Error).message);
  }
  const { values, positionals } = parsedArgs;
  if (values["expect-hcp"] && values["no-expect-hcp"]) throw new SmokeUsageError("--expect-hcp and --no-expect-hcp are exclusive");
  const parsed = SmokeRunOptionsSchema.safeParse({
    recipe: values.recipe,
    nproc: values.nproc,
    iters: values.iters,
    timeoutMs: values.timeout,
    graceMs: values.grace,
    out: values.out,
    log: values.log,
    expectHcp: values["no-expect-hcp"] ? false : values["expect-hcp"],
    launcher: values.launcher,
    gpu: values.gpu,
    overridesEnv: values["overrides-env"],
    compare: values.compare === "" ? undefined : values.compare,
    dryRun: values["dry-run"],
  });
  if (!parsed.success) throw new SmokeUsageError(parsed.error.issues.map((i) => i.message).join("\n"));
  try {
    const texts = [...(parsed.data.overridesEnv ? overridesFromEnv(parsed.data.overridesEnv, env) : []), ...positionals];
    const userOverrides = parseOverrides(texts);
    const { overrides, duplicates } = composeOverrides(userOverrides, parsed.data);
    return { ...parsed.data, userOverrides, overrides, duplicates };
  } catch (error) {
    if (error instanceof OverrideError) throw new SmokeUsageError(error.message);
    throw error;
  }
}

/** What the run asked for, so the verdict can compare it with the configuration the log prints. */

export interface SmokeRunDeps {
  /** Harness messages (stderr). */
  err(text: string): void;
  /** Messages that are the command's result (stdout). */
  out(text: string): void;
  /** The live log (our stdout). */
  live: Writable;
  env: Env;
  cwd: string;
}

export async function smokeRun(argv: readonly string[], deps: SmokeRunDeps): Promise<number> {
  if (argv[0] === "--help" || argv[0] === "-h") {
    deps.out(SMOKE_RUN_USAGE);
    return SMOKE_EXIT.pass;
  }
  let options: SmokeRunOptions;
  try {
    options = parseSmokeRunArgs(argv, deps.env);
  } catch (error) {
    if (error instanceof SmokeUsageError) {
      deps.err(`hcp-bot smoke-run: ${error.message}\n(see \`hcp-bot smoke-run --help\`)\n`);
      return SMOKE_EXIT.usage;
    }
    throw error;
  }
  // A missing launcher or run_recipe.py: --dry-run refuses (exit 2); a real run reports it like a
  // command that could not start (the message in smoke.log, a failing verdict, exit 1), so the bot says why.
  const problem = checkoutProblem(options.launcher, deps.cwd, deps.env);
  if (problem && options.dryRun) {
    deps.err(`hcp-bot smoke-run: ${problem}\n`);
    return SMOKE_EXIT.usage;
  }
  const argvWith = (launcherScript: string) => buildArgv({ ...options, launcherScript });
  const duplicatesNotice = options.duplicates.length > 0 ? [`dropped overrides that repeat the harness settings: ${options.duplicates.join(" ")}`] : [];

  if (options.dryRun) {
    const preview = buildEnv(deps.env, "<probe-dir>/python");
    const reference = options.compare === "none" ? {} : { reference: { argv: buildArgv({ ...options, launcherScript: PREVIEW_LAUNCHER, overrides: referenceOverrides(options.overrides, options.compare) }) } };
    deps.out(`${JSON.stringify({ argv: argvWith(PREVIEW_LAUNCHER), ...reference, env: preview.added, unset: preview.removed, notices: [...duplicatesNotice, ...preview.notices] }, null, 2)}\n`);
    return SMOKE_EXIT.pass;
  }

  let paths: OutputPaths;
  try {
    paths = outputPaths(options, deps);
  } catch (error) {
    if (!(error instanceof SmokeUsageError)) throw error;
    deps.err(`hcp-bot smoke-run: ${error.message}\n(see \`hcp-bot smoke-run --help\`)\n`);
    return SMOKE_EXIT.usage;
  }
  return runAndReport(options, argvWith, duplicatesNotice, paths, deps, problem);
}

/** Where --dry-run says the launcher will be (the probe dir is made per run). */
const PREVIEW_LAUNCHER = "<probe-dir>/launch.py";

interface OutputPaths {
  outDir: string;
  logPath: string;
}

function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * Where the outputs go: never inside the checkout, where the code under test reads and writes
 * as it likes (and where a stale file of its own could be uploaded as ours).
 */
function outputPaths(options: SmokeRunOptions, deps: SmokeRunDeps): OutputPaths {
  const cwd = resolve(deps.cwd);
  const runnerTemp = deps.env.RUNNER_TEMP;
  const outDir = options.out ? resolve(cwd, options.out) : runnerTemp ? join(runnerTemp, "hcp-smoke-out") : mkdtempSync(join(tmpdir(), "hcp-smoke-out-"));
  const logPath = resolve(cwd, options.log ?? join(outDir, "smoke.log"));
  for (const [flag, path] of [["--out", outDir], ["--log", logPath]] as const) {
    if (inside(cwd, path)) throw new SmokeUsageError(`${flag} ${path} is inside the checkout (${cwd}): the code under test could rewrite it; use a folder outside it, such as $RUNNER_TEMP/hcp-smoke-out`);
  }
  return { outDir, logPath };
}

/** SHA-256 and size of everything written through it, computed from the bytes as they pass. */
class Digest {
  private readonly hash = createHash("sha256");
  private bytes = 0;

  update(chunk: Uint8Array | string): void {
    const data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    this.hash.update(data);
    this.bytes += data.byteLength;
  }

  done(): FileDigest {
    return { sha256: this.hash.digest("hex"), bytes: this.bytes };
  }
}

/** One leg of the run: its command, its files, and what its verdict compares the log with. */
interface Leg {
  name: "run" | "reference";
  /** The leg's argv, given the launcher script of its probe dir. */
  command: (launcherScript: string) => string[];
  logPath: string;
  verdictFile: ReportedFile;
  expectHcp: boolean;
  /** The overrides the leg's layout is read from (requestedLayout). */
  layoutOverrides: string[];
  /** Why this leg cannot start here (no launcher, no run_recipe.py): its log is that one line. */
  refusal?: string | null;
}

interface LegOutcome {
  verdict: Verdict;
  /** The argv the leg ran. */
  argv: string[];
  result: RunResult;
  series: IterationPoint[];
  digests: [ReportedFile, FileDigest][];
  notices: string[];
  added: Record<string, string>;
  removed: string[];
  startedAt: Date;
}

/** The real run: probe dir, tee + streaming verdict, then the outputs. Exit 0 only on a pass. */
async function runAndReport(options: SmokeRunOptions, command: (launcherScript: string) => string[], notices: string[], paths: OutputPaths, deps: SmokeRunDeps, refusal: string | null): Promise<number> {
  const say = (message: string) => deps.err(`hcp-bot smoke-run: ${message}\n`);
  const { outDir, logPath } = paths;
  await mkdir(outDir, { recursive: true });
  await mkdir(dirname(logPath), { recursive: true });
  // The report's nonce lives only in this process; its commitment is printed before anything of the PR runs.
  const nonce = randomBytes(32).toString("hex");
  deps.out(`${commitmentLine(createHash("sha256").update(nonce).digest("hex"))}\n`);

  const userLayout = options.userOverrides.map((o) => o.text);
  const run = await runLeg(options, { name: "run", command, logPath, verdictFile: "verdict.json", expectHcp: options.expectHcp, layoutOverrides: userLayout, refusal }, notices, outDir, say, deps);
  const legs = [run];
  const reference = options.compare === "none" ? undefined : await referenceLeg(options, options.compare, run, outDir, say, deps);
  if (reference) legs.push(reference);

  const record = runRecord({ options, command: run.argv, added: run.added, removed: run.removed, notices: run.notices, result: run.result, startedAt: run.startedAt, logPath, env: deps.env });
  const referenceRecord = reference ? { reference: { argv: reference.argv, exitCode: reference.result.exitCode, durationMs: reference.result.durationMs, timedOut: reference.result.timedOut, signal: reference.result.signal, log: join(outDir, "reference.log") } } : {};
  await writeFile(join(outDir, "run.json"), `${JSON.stringify({ ...record, ...referenceRecord }, null, 2)}\n`);
  const comparison = reference && options.compare !== "none" ? runnerComparison(options, options.compare, run, reference) : undefined;
  const summary = deps.env.GITHUB_STEP_SUMMARY;
  if (summary) {
    await appendFile(summary, verdictMarkdown(run.verdict, { recipe: options.recipe, requestId: deps.env.HCP_REQUEST_ID }));
    if (comparison) await appendFile(summary, `\n${comparisonMarkdown(comparison)}\n\n_The runner's view; the bot recomputes both legs from the uploaded logs._\n`);
  }
  // One small write (atomic on a pipe): nothing can land between the delimiter and the hashes.
  deps.out(`\n${[delimiterLine(nonce), ...legs.flatMap((l) => l.digests.map(([name, d]) => digestLine(name, d)))].join("\n")}\n`);
  const keyLines = legs.map((l) => probeKeyLine(l.probeKey, options.nproc, l === run ? "smoke.log" : "reference.log")).join("\n");
  const comparisonLine = comparison ? `\nhcp-bot smoke: A/B ${comparison.summary}` : "";
  deps.out(`${verdictText(run.verdict)}${keyLines}\n${verdictLine(run.verdict, options.recipe)}${comparisonLine}\n`);
  // The exit status is the HCP leg's: a failed reference leg leaves the comparison missing, not the run failed.
  return run.verdict.status === "pass" && run.result.survivors.length === 0 ? SMOKE_EXIT.pass : SMOKE_EXIT.fail;
}

/**
 * The reference leg: the same command with only cp_comm_type (and the sizes) changed, its own
 * probe key and time limit. Skipped when the run itself crashed: nothing would be compared.
 */
async function referenceLeg(options: SmokeRunOptions, mode: ReferenceMode, run: LegOutcome & { probeKey: string }, outDir: string, say: (m: string) => void, deps: SmokeRunDeps) {
  if (run.verdict.status === "fail" || run.result.spawnError) {
    say(`the ${mode} reference leg is skipped: the run itself failed (${run.verdict.cause?.kind ?? "no verdict"})`);
    return undefined;
  }
  const overrides = referenceOverrides(options.overrides, mode);
  const command = (launcherScript: string) => buildArgv({ ...options, launcherScript, overrides });
  say(`reference leg: the same run with model.cp_comm_type=${mode} and no hierarchical sizes`);
  const leg = await runLeg(
    options,
    { name: "reference", command, logPath: join(outDir, "reference.log"), verdictFile: "reference.verdict.json", expectHcp: false, layoutOverrides: referenceOverrides(options.userOverrides.map((o) => o.text), mode) },
    [],
    outDir,
    say,
    deps,
  );
  return leg;
}

function runnerComparison(options: SmokeRunOptions, mode: ReferenceMode, run: LegOutcome, reference: LegOutcome) {
  const layout = requestedLayout(options.userOverrides.map((o) => o.text));
  const sizes = layout.sizes?.length === 2 ? ([layout.sizes[0]!, layout.sizes[1]!] as [number, number]) : undefined;
  const cp = layout.contextParallelSize;
  if (!sizes || !cp) return undefined;
  return compareLegs({ mode, cp, sizes, hcp: { verdict: run.verdict, series: run.series }, reference: { verdict: reference.verdict, series: reference.series } });
}

/** Runs one leg with a fresh probe dir and key; writes its verdict file; returns its digests. */
async function runLeg(options: SmokeRunOptions, leg: Leg, notices: string[], outDir: string, say: (m: string) => void, deps: SmokeRunDeps): Promise<LegOutcome & { probeKey: string }> {
  const probe = await writeProbeDir();
  try {
    const built = buildEnv(deps.env, probe.dir);
    const argv = leg.command(probe.launcher);
    const allNotices = [...notices, ...built.notices];
    for (const n of allNotices) say(n);
    say(`running ${JSON.stringify(argv)} (time limit ${formatMs(options.timeoutMs)}; probe ${probe.dir}/sitecustomize.py; outputs in ${outDir})`);
    const startedAt = new Date();
    const { result, verdict, logDigest, series } = await runJudged(options, leg, argv, built.env, say, deps, probe.key);
    if (result.spawnError) say(`could not start the run: ${result.spawnError}`);
    // The run's processes are gone: the key can no longer sign anything, so it is revealed for
    // the bot (and anyone with the log) to verify the reports with.
    const verdictFile = runnerVerdictJson(verdict, probe.key, options.nproc);
    await writeFile(join(outDir, leg.verdictFile), verdictFile);
    const verdictDigest = new Digest();
    verdictDigest.update(verdictFile);
    const logName: ReportedFile = leg.name === "run" ? "smoke.log" : "reference.log";
    return { verdict, argv, result, series, digests: [[logName, logDigest], [leg.verdictFile, verdictDigest.done()]], notices: allNotices, added: built.added, removed: built.removed, startedAt, probeKey: probe.key };
  } finally {
    await probe.remove();
  }
}

/**
 * verdict.json: the verdict as the schema defines it, plus what the bot needs to recompute it
 * from the log: the run's probe key (revealed only now that the run has exited) and its world
 * size (torchrun's --nproc_per_node).
 */
function runnerVerdictJson(verdict: Verdict, probeKey: string, worldSize: number): string {
  return `${JSON.stringify({ ...JSON.parse(verdictJson(verdict)), probeKey, worldSize }, null, 2)}\n`;
}

function probeKeyLine(probeKey: string, worldSize: number, log: string): string {
  return `hcp-bot smoke: probe key ${probeKey} (revealed after the run exited; check the log with \`hcp-bot verdict ${log} --probe-key ${probeKey} --world-size ${worldSize}\`)`;
}

/** Runs the command while the verdict parser (and the iteration series) read its output; the log file is closed on return. */
async function runJudged(
  options: SmokeRunOptions,
  leg: Leg,
  argv: string[],
  env: Record<string, string>,
  say: (message: string) => void,
  deps: SmokeRunDeps,
  probeKey: string,
): Promise<{ result: RunResult; verdict: Verdict; logDigest: FileDigest; series: IterationPoint[] }> {
  const verdictOptions: VerdictOptions = {
    expectHcp: leg.expectHcp,
    gpu: options.gpu,
    probeKey,
    worldSize: options.nproc,
    ...requestedLayout(leg.layoutOverrides),
  };
  const parser = createVerdictParser(verdictOptions);
  const series = createSeriesCollector();
  const log = createWriteStream(leg.logPath);
  // The hash of what we wrote, not of the file afterwards: anyone may write the file meanwhile.
  const digest = new Digest();
  let result: RunResult;
  try {
    const consume = teeTo(deps.live, log, (chunk) => {
      digest.update(chunk);
      parser.push(chunk);
      series.push(chunk);
    });
    result = leg.refusal ? await refused(leg.refusal, consume) : await runSmokeProcess({
      argv,
      env,
      // The ranks' key lines, on a descriptor only the launcher's children read (launch.py).
      extraFd: { fd: KEY_FD, data: keyLines(probeKey, options.nproc) },
      cwd: deps.cwd,
      timeoutMs: options.timeoutMs,
      graceMs: options.graceMs,
      notice: say,
      onChunk: consume,
    });
  } finally {
    log.end();
    await once(log, "close");
  }
  const verdict = parser.end(result.exitCode, {
    timedOut: result.timedOut,
    signal: result.signal ?? result.cancelledBy ?? undefined,
    ...(result.cancelledBy ? { cancelledBy: result.cancelledBy } : {}),
  });
  return { result, verdict, logDigest: digest.done(), series: series.end() };
}

/** The result of a run that could not start here: its reason is the log's one line. */
async function refused(reason: string, write: (chunk: Uint8Array) => Promise<void>): Promise<RunResult> {
  await write(Buffer.from(`hcp-bot smoke-run: ${reason}\n`));
  return { exitCode: null, signal: null, timedOut: false, cancelledBy: null, spawnError: reason, durationMs: 0, survivors: [] };
}

/** Writes each chunk to every sink, waiting for drain (constant memory), then hands it on. */
function teeTo(live: Writable, log: WriteStream, consume: (chunk: Uint8Array) => void): (chunk: Uint8Array) => Promise<void> {
  let liveOk = true;
  live.on("error", () => {
    liveOk = false; // our stdout went away (closed pipe): keep logging to the file
  });
  return async (chunk) => {
    const waits: Promise<unknown>[] = [];
    if (liveOk && !live.write(chunk)) waits.push(Promise.race([once(live, "drain"), once(live, "error")]));
    if (!log.write(chunk)) waits.push(once(log, "drain"));
    consume(chunk);
    await Promise.all(waits);
  };
}

interface RunRecordInput {
  options: SmokeRunOptions;
  command: string[];
  added: Record<string, string>;
  removed: string[];
  notices: string[];
  result: RunResult;
  startedAt: Date;
  logPath: string;
  env: Env;
}

/** run.json: how the run was made (the verdict itself is in verdict.json). */
function runRecord(input: RunRecordInput) {
  const { env, result } = input;
  return {
    hcpBot: VERSION,
    recipe: input.options.recipe,
    argv: input.command,
    env: input.added,
    unset: input.removed,
    notices: input.notices,
    startedAt: input.startedAt.toISOString(),
    durationMs: result.durationMs,
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    cancelledBy: result.cancelledBy,
    spawnError: result.spawnError,
    log: input.logPath,
    request: {
      requestId: env.HCP_REQUEST_ID ?? null,
      checkRunId: env.HCP_CHECK_RUN_ID ?? null,
      sha: env.HCP_SHA ?? null,
      pr: env.HCP_PR ?? null,
      runId: env.GITHUB_RUN_ID ?? null,
    },
  };
}
