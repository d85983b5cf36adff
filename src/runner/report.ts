// Verdict output for the runner: verdict.json, the job-summary Markdown and the one-line
// result. A thin adapter: src/core/verdict had no renderers when this was written; if it
// grows JSON/text/Markdown renderers, these should delegate to them.
import { VerdictSchema, type Verdict } from "../core/verdict/schema.ts";

const STATUS_WORD: Record<Verdict["status"], string> = {
  pass: "PASS",
  fail: "FAIL",
  "hcp-inactive": "HCP INACTIVE",
  inconclusive: "INCONCLUSIVE",
};

const STATUS_ICON: Record<Verdict["status"], string> = {
  pass: "✅",
  fail: "❌",
  "hcp-inactive": "⚠️",
  inconclusive: "❔",
};

/** verdict.json: the verdict as the schema defines it (validated, so a bad one fails here, not in the bot). */
export function verdictJson(verdict: Verdict): string {
  return `${JSON.stringify(VerdictSchema.parse(verdict), null, 2)}\n`;
}

function hcpPhrase(verdict: Verdict): string {
  const h = verdict.hcp;
  if (h.active === true) {
    const how = [h.probeReports > 0 ? `probe ×${h.probeReports}` : "", h.hierarchicalLines > 0 ? `${h.hierarchicalLines} torch group lines` : ""].filter(Boolean).join(", ");
    return `HCP active (levels ${h.levels.map((l) => `L${l}`).join("/") || "?"}${how ? `; ${how}` : ""})`;
  }
  if (h.active === false) return "HCP not active";
  return "HCP unverified";
}

function lossPhrase(verdict: Verdict): string {
  const it = verdict.iterations;
  if (it.count === 0) return "no training step";
  const loss = it.last?.lmLossText ?? (it.last?.lmLoss !== null && it.last?.lmLoss !== undefined ? String(it.last.lmLoss) : "?");
  return `${it.count} iteration${it.count === 1 ? "" : "s"}, last lm loss ${loss}`;
}

/** One line for the job log: `hcp-bot smoke: PASS llama32_1b_pretrain_config: 2 iterations, …`. */
export function verdictLine(verdict: Verdict, recipe: string): string {
  const cause = verdict.cause ? ` (${verdict.cause.kind}: ${oneLine(verdict.cause.message, 200)})` : "";
  return `hcp-bot smoke: ${STATUS_WORD[verdict.status]} ${recipe}: ${lossPhrase(verdict)}; ${hcpPhrase(verdict)}${cause}`;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Markdown-safe inline text: log lines are untrusted (backticks, HTML, mentions). */
function code(text: string): string {
  const flat = oneLine(text, 300).replace(/`/g, "ˋ");
  return `\`${flat}\``;
}

function escapeMd(text: string): string {
  return oneLine(text, 500).replace(/[\\`*_{}[\]<>()#+!|~@]/g, (c) => `\\${c}`);
}

export interface SummaryContext {
  recipe: string;
  requestId?: string;
}

/** The job summary ($GITHUB_STEP_SUMMARY). */
export function verdictMarkdown(verdict: Verdict, ctx: SummaryContext): string {
  const rows: [string, string][] = [
    ["Status", `${STATUS_ICON[verdict.status]} **${STATUS_WORD[verdict.status]}**`],
    ["Recipe", code(ctx.recipe)],
    ["Training", escapeMd(lossPhrase(verdict))],
    ["HCP", escapeMd(hcpPhrase(verdict))],
    ["Exit", verdict.timedOut ? "timed out" : verdict.exitCode === null ? escapeMd(verdict.signal ?? "unknown") : String(verdict.exitCode)],
  ];
  if (verdict.throughput.maxTflopsPerGpu !== null) rows.push(["TFLOP/s/GPU (max)", String(verdict.throughput.maxTflopsPerGpu)]);
  if (ctx.requestId) rows.push(["Request", code(ctx.requestId)]);
  const lines = [`## hcp-bot smoke: ${STATUS_WORD[verdict.status]}`, "", "| | |", "|---|---|", ...rows.map(([k, v]) => `| ${k} | ${v} |`), ""];
  if (verdict.cause) {
    lines.push(`**Cause** (${verdict.cause.kind}${verdict.cause.line ? `, log line ${verdict.cause.line}` : ""}): ${escapeMd(verdict.cause.message)}`, "");
  }
  const evidence = verdict.hcp.evidence.slice(0, 4);
  if (evidence.length > 0) {
    lines.push("HCP evidence:", "", ...evidence.map((e) => `- line ${e.line}: ${code(e.text)}`), "");
  }
  if (verdict.notes.length > 0) lines.push("Notes:", "", ...verdict.notes.slice(0, 8).map((n) => `- ${escapeMd(n)}`), "");
  lines.push("_The bot recomputes the verdict from the uploaded log; this summary is the runner's view._", "");
  return lines.join("\n");
}
