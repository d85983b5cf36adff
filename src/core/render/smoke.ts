// Markdown for the smoke run: the plan, the PR comment that follows the run, the check run.
import type { SmokePlan } from "../commands/index.ts";
import type { Verdict } from "../verdict/index.ts";
import { formatVerdictMarkdown } from "../verdict/index.ts";
import { codeBlock, codeSpan } from "./escape.ts";
import { comparisonMarkdown, type Comparison, type CompareMode } from "../ab/index.ts";
import { untrusted } from "./markdown.ts";

export const SMOKE_CHECK_NAME = "HCP smoke";

export function smokeMarker(requestId: string): string {
  return `<!-- hcp-bot:smoke request=${requestId} -->`;
}

export interface SmokeView {
  requestId: string;
  requester: string;
  sha: string;
  plan: Pick<SmokePlan, "recipe" | "cp" | "cpCommType" | "sizes" | "gpus" | "iters" | "overrides" | "expectHcp"> & { compare?: CompareMode };
  runUrl?: string | null;
  checkRunUrl?: string | null;
}

/** The plan as a stored request remembers it (the cp_comm_type is kept only as "HCP expected or not"). */
export function planOfRequest(request: {
  recipe: string;
  cp: number;
  sizes: [number, number] | null;
  gpus: number;
  iters: number;
  overrides: string[];
  expectHcp: boolean;
  compare?: CompareMode;
}): SmokeView["plan"] {
  return {
    recipe: request.recipe,
    cp: request.cp,
    cpCommType: request.expectHcp ? "a2a+p2p" : "as configured",
    sizes: request.sizes,
    gpus: request.gpus,
    iters: request.iters,
    overrides: request.overrides,
    expectHcp: request.expectHcp,
    compare: request.compare ?? "none",
  };
}

function layout(p: SmokeView["plan"]): string {
  const type = Array.isArray(p.cpCommType) ? `per-layer ${JSON.stringify(p.cpCommType)}` : String(p.cpCommType);
  return `CP ${p.cp}, \`${type}\`${p.sizes ? `, sizes [${p.sizes.join(", ")}]` : ""}`;
}

export function planMarkdown(v: SmokeView): string {
  return [
    "| | |",
    "|---|---|",
    `| Recipe | ${codeSpan(v.plan.recipe, { inTable: true })} |`,
    `| Commit | \`${v.sha}\` (pinned when @${untrusted(v.requester)} asked) |`,
    `| Layout | ${layout(v.plan)} on ${v.plan.gpus} GPU(s), ${v.plan.iters} iteration(s) |`,
    `| Must show HCP groups | ${v.plan.expectHcp ? "yes" : "no"} |`,
    ...(v.plan.compare && v.plan.compare !== "none" ? [`| A/B | then the same run with \`${v.plan.compare}\` (only cp_comm_type and the sizes change; twice the GPU time) |`] : []),
    "",
    "<details><summary>Overrides passed to run_recipe.py</summary>",
    "",
    codeBlock(v.plan.overrides.join("\n")),
    "</details>",
  ].join("\n");
}

export type SmokeState =
  /** `workflow`: markdown about the inputs the installed workflow could not take (core/smoke/workflow.ts), `skipped` their names. */
  | { kind: "dispatched"; note?: string; workflow?: string; skipped?: string[] }
  | { kind: "running" }
  | { kind: "finished"; verdict: Verdict; note?: string; comparison?: Comparison }
  | { kind: "cancelled"; by?: string }
  | { kind: "timed_out"; minutes: number; labels: readonly string[] }
  | { kind: "failed"; reason: string };

const HEADLINE: Record<string, string> = {
  pass: "✅ Smoke run passed",
  fail: "🛑 Smoke run failed",
  "hcp-inactive": "🛑 Smoke run ran without hierarchical CP",
  "hcp-degenerate": "🛑 Smoke run's CP was not hierarchical (a level of size 1)",
  inconclusive: "🛑 Smoke run inconclusive: not a pass",
};

export function stateHeadline(state: SmokeState): string {
  switch (state.kind) {
    case "dispatched":
      return "⏳ Smoke run queued for a GPU runner";
    case "running":
      return "🏃 Smoke run in progress";
    case "finished":
      return `${HEADLINE[state.verdict.status] ?? `Smoke run: ${state.verdict.status}`}${state.comparison ? ` · ${comparisonTitle(state.comparison)}` : ""}`;
    case "cancelled":
      return `⏹️ Smoke run cancelled${state.by ? ` by @${untrusted(state.by)}` : ""}`;
    case "timed_out":
      return "⌛ Smoke run timed out in the queue";
    case "failed":
      return "🛑 Smoke run could not start";
  }
}

/** The comparison in a headline: its summary when made (the bot's own words and numbers), else only that it is missing. */
function comparisonTitle(c: Comparison): string {
  if (c.status === "missing") return `no ${c.mode} comparison`;
  const flag = c.flags.find((f) => f.severity === "error");
  return flag ? `${c.summary} (${flag.id}: implausible)` : c.summary;
}

function stateDetails(state: SmokeState): string {
  switch (state.kind) {
    case "finished":
      return [state.note ? `_${untrusted(state.note)}_\n` : "", state.verdict.status === "inconclusive" ? `${INCONCLUSIVE_NEXT_STEP}\n` : "", formatVerdictMarkdown(state.verdict), ...(state.comparison ? ["", comparisonMarkdown(state.comparison)] : [])].join("\n");
    case "timed_out":
      return `No self-hosted runner with the labels \`${state.labels.join(", ")}\` picked the job up within ${state.minutes} minute(s), so the run was cancelled. Check that a GPU runner with these labels is online, then ask again.`;
    case "failed":
      return untrusted(state.reason);
    case "dispatched":
      return [state.note ? `_${untrusted(state.note)}_` : "", state.workflow ?? ""].filter(Boolean).join("\n\n");
    default:
      return "";
  }
}

export function smokeCommentBody(v: SmokeView, state: SmokeState): string {
  const links = [v.runUrl ? `[Actions run](${v.runUrl})` : "", v.checkRunUrl ? `[check run](${v.checkRunUrl})` : ""].filter(Boolean).join(" · ");
  return [
    smokeMarker(v.requestId),
    `### ${stateHeadline(state)}`,
    links,
    "",
    stateDetails(state),
    "",
    planMarkdown(v),
    "",
    "<sub>`/hcp cancel` stops it; `/hcp help` lists the commands.</sub>",
  ]
    .filter((line, i, all) => !(line === "" && all[i - 1] === ""))
    .join("\n");
}

/**
 * Check-run conclusion for a verdict: only a pass is a success. An inconclusive run is a
 * failure too: GitHub's branch protection counts `neutral` as passing for a required check,
 * and a run that proved nothing must not satisfy one.
 */
export function conclusionForVerdict(verdict: Verdict): "success" | "failure" {
  return verdict.status === "pass" ? "success" : "failure";
}

/** What an inconclusive run asks of the reader, on every surface that shows it. */
export const INCONCLUSIVE_NEXT_STEP =
  "This run proved nothing about HCP, so the smoke check fails: a required check is not satisfied by it. " +
  "Fix what the cause names (a run that did not train, a log cut off, reports that cannot be authenticated), then ask again with `/hcp smoke`.";
