// Verdict output for the runner. The renderers are src/core/verdict's (JSON = the schema,
// Markdown for the job summary, text for the job log); this adds the run's context and the
// one-line result that ends smoke-run's output.
import { codeSpan } from "../core/render/escape.ts";
import { INCONCLUSIVE_NEXT_STEP } from "../core/render/smoke.ts";
import { formatVerdict, formatVerdictMarkdown, formatVerdictText, type Verdict } from "../core/verdict/index.ts";

const STATUS_WORD: Record<Verdict["status"], string> = {
  pass: "PASS",
  fail: "FAIL",
  "hcp-inactive": "HCP INACTIVE",
  "hcp-degenerate": "HCP NOT HIERARCHICAL",
  inconclusive: "INCONCLUSIVE",
};

/** verdict.json: the verdict exactly as the schema defines it. */
export function verdictJson(verdict: Verdict): string {
  return formatVerdict(verdict, "json");
}

/** The multi-line verdict for the job log. */
export function verdictText(verdict: Verdict): string {
  return formatVerdictText(verdict);
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function hcpPhrase(verdict: Verdict): string {
  const h = verdict.hcp;
  if (verdict.status === "hcp-degenerate") return "CP on, but HCP not hierarchical (a level of size 1)";
  if (h.active === true) return `HCP active (levels ${h.levels.map((l) => `L${l}`).join("/") || "?"})`;
  if (h.active === false) return "HCP not active";
  return "HCP unverified";
}

function lossPhrase(verdict: Verdict): string {
  const it = verdict.iterations;
  if (it.count === 0) return "no training step";
  const last = it.last;
  const loss = last?.lmLossText ?? (last?.lmLoss != null ? String(last.lmLoss) : "?");
  return `${it.count} iteration${it.count === 1 ? "" : "s"}, last lm loss ${loss}`;
}

/** `hcp-bot smoke: PASS llama32_1b_pretrain_config: 2 iterations, last lm loss …; HCP active (levels L0/L1)`. */
export function verdictLine(verdict: Verdict, recipe: string): string {
  const cause = verdict.cause ? ` (${verdict.cause.kind}: ${oneLine(verdict.cause.message, 200)})` : "";
  return `hcp-bot smoke: ${STATUS_WORD[verdict.status]} ${recipe}: ${lossPhrase(verdict)}; ${hcpPhrase(verdict)}${cause}`;
}

export interface SummaryContext {
  recipe: string;
  requestId?: string;
}

/** Inline code that log or input text cannot break out of. */
function code(text: string): string {
  return codeSpan(oneLine(text, 200));
}

/** The job summary ($GITHUB_STEP_SUMMARY): the run's context, then the core Markdown verdict. */
export function verdictMarkdown(verdict: Verdict, ctx: SummaryContext): string {
  const notAPass = verdict.status === "inconclusive" ? [`**Not a pass.** ${INCONCLUSIVE_NEXT_STEP}`, ""] : [];
  const context = [`## hcp-bot smoke: ${STATUS_WORD[verdict.status]}`, "", ...notAPass, `Recipe ${code(ctx.recipe)}${ctx.requestId ? `, request ${code(ctx.requestId)}` : ""}.`, ""];
  const footer = ["_The bot recomputes the verdict from the uploaded log; this summary is the runner's view._", ""];
  return [...context, formatVerdictMarkdown(verdict), ...footer].join("\n");
}
