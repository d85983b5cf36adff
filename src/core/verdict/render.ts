// Verdict renderers: JSON (the schema itself), plain text for a terminal, Markdown for a job
// summary or a PR comment.
import { codeBlock, mdCell, mdMessage } from "../render/escape.ts";
import type { Cause, Verdict } from "./schema.ts";

export type VerdictFormat = "json" | "text" | "markdown";

const STATUS_LABEL: Record<Verdict["status"], string> = {
  pass: "PASS",
  fail: "FAIL",
  "hcp-inactive": "HCP INACTIVE",
  "hcp-degenerate": "HCP NOT HIERARCHICAL",
  inconclusive: "INCONCLUSIVE",
};

const STATUS_ICON: Record<Verdict["status"], string> = {
  pass: "✅",
  fail: "❌",
  "hcp-inactive": "⚠️",
  "hcp-degenerate": "⚠️",
  inconclusive: "❔",
};

export function formatVerdict(verdict: Verdict, format: VerdictFormat): string {
  switch (format) {
    case "json":
      return JSON.stringify(verdict, null, 2) + "\n";
    case "text":
      return formatVerdictText(verdict);
    case "markdown":
      return formatVerdictMarkdown(verdict);
  }
}

function hcpSummary(v: Verdict): string {
  const h = v.hcp;
  const state = v.status === "hcp-degenerate" ? "NOT hierarchical (a level of size 1)" : h.active === true ? "active" : h.active === false ? "NOT active" : "unknown (the log cannot tell)";
  const details = [
    h.hierarchicalLines > 0 ? `${h.hierarchicalLines} line(s) name HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L${h.levels.join("/L")}` : "",
    h.flatLines > 0 ? `${h.flatLines} name the flat CONTEXT_PARALLEL_GROUP` : "",
    h.probeReports > 0 ? `${h.probeReports} authenticated HCP-PROBE report(s) from rank(s) ${h.ranksReported.join(", ")}` : "",
    h.levelSizes ? `level sizes ${JSON.stringify(h.levelSizes)}` : "",
    h.untrustedReports > 0 ? `${h.untrustedReports} untrusted report(s), not evidence` : "",
  ].filter(Boolean);
  return `${state}${details.length ? ` (${details.join(", ")})` : ""}`;
}

function causeLine(c: Cause): string {
  const where = [c.line !== null ? `line ${c.line}` : "", c.rank !== null ? `rank ${c.rank}` : ""].filter(Boolean).join(", ");
  const rule = c.ruleId ? ` [${c.ruleId}${c.upstream ? `, upstream ${c.upstream}` : ""}]` : c.upstream ? ` [upstream ${c.upstream}]` : "";
  return `${c.kind}${rule}: ${c.message}${where ? ` (${where})` : ""}`;
}

function iterationSummary(v: Verdict): string {
  const it = v.iterations;
  if (it.count === 0) return "none";
  const last = it.last;
  const loss = last ? (last.lmLoss !== null ? last.lmLoss.toPrecision(6) : (last.lmLossText ?? "n/a")) : "n/a";
  return `${it.count} line(s), last ${last?.iteration ?? "?"}/${last?.total ?? "?"} lm loss ${loss}; nan iterations ${it.nanIterations}, skipped ${it.skippedIterations}`;
}

function throughputSummary(v: Verdict): string {
  const t = v.throughput;
  if (t.maxTflopsPerGpu === null) return "not logged (logger.log_throughput=true adds it)";
  const peak = t.peakTflops !== null ? ` vs ${t.gpu} dense BF16 peak ${t.peakTflops} (${Math.round((t.ratioToPeak ?? 0) * 100)} %)` : t.gpu ? ` (unknown GPU ${t.gpu})` : " (no --gpu: not checked)";
  return `max ${t.maxTflopsPerGpu} TFLOP/s/GPU${peak}${t.implausible ? " — IMPLAUSIBLE: CP was very likely off" : t.suspicious ? " — unusually high" : ""}`;
}

function configSummary(v: Verdict): string {
  const c = v.config;
  if (c.sources.length === 0) return "not printed";
  const parts = [
    c.contextParallelSize !== null ? `context_parallel_size=${c.contextParallelSize}` : "",
    c.cpCommType ? `cp_comm_type=${c.cpCommType.length === 1 ? c.cpCommType[0] : JSON.stringify(c.cpCommType)}` : "",
    c.hierarchicalSizesState === "set" ? `hierarchical_context_parallel_sizes=${JSON.stringify(c.hierarchicalSizes)}` : c.hierarchicalSizesState === "none" ? "hierarchical_context_parallel_sizes=None" : "",
    c.useDecentralizedPg !== null ? `use_decentralized_pg=${c.useDecentralizedPg}` : "",
  ].filter(Boolean);
  return `${parts.join(", ") || "no CP settings"} (from ${c.sources.join(", ")})`;
}

function childFailedSummary(v: Verdict): string | null {
  const cf = v.childFailed;
  if (!cf) return null;
  const r = cf.rootCause;
  const root = r ? `rank ${r.rank ?? "?"} (local_rank ${r.localRank ?? "?"}), exitcode ${r.exitcode ?? "?"}${r.signal ? ` (${r.signal})` : ""}` : "not listed";
  return `${cf.script ?? "script"} FAILED; root cause ${root}${cf.failures.length ? `; ${cf.failures.length} other failure(s)` : ""}`;
}

export function formatVerdictText(v: Verdict): string {
  const lines = [`HCP smoke verdict: ${STATUS_LABEL[v.status]}${v.exitCode !== null ? ` (exit ${v.exitCode})` : ""}`];
  if (v.cause) lines.push(`  cause:      ${causeLine(v.cause)}`);
  if (v.cause?.fix) lines.push(`  fix:        ${v.cause.fix}`);
  lines.push(`  hcp:        ${hcpSummary(v)}${v.expectHcp ? "" : " (not required)"}`);
  lines.push(`  iterations: ${iterationSummary(v)}`);
  lines.push(`  throughput: ${throughputSummary(v)}`);
  lines.push(`  config:     ${configSummary(v)}`);
  const cf = childFailedSummary(v);
  if (cf) lines.push(`  torchrun:   ${cf}`);
  for (const o of v.otherFailures.slice(0, 4)) lines.push(`  also:       ${causeLine(o)}`);
  for (const n of v.notes) lines.push(`  note:       ${n}`);
  if (v.evidence.length > 0) {
    lines.push("  evidence:");
    for (const e of v.evidence.slice(0, 12)) lines.push(`    ${String(e.line).padStart(7)} [${e.kind}] ${e.text}`);
  }
  return lines.join("\n") + "\n";
}

// Log text is quoted: Markdown and HTML in it stay text (src/core/render/escape.ts).
const mdInline = mdCell;

export function formatVerdictMarkdown(v: Verdict): string {
  const out = [`### ${STATUS_ICON[v.status]} HCP smoke run: ${STATUS_LABEL[v.status]}`, ""];
  if (v.cause) out.push(`**Cause:** ${mdMessage(causeLine(v.cause))}`, "");
  if (v.cause?.fix) out.push(`**Fix:** ${mdMessage(v.cause.fix)}`, "");
  out.push(
    "| | |",
    "|---|---|",
    `| HCP | ${mdInline(hcpSummary(v))}${v.expectHcp ? "" : " (not required)"} |`,
    `| Iterations | ${mdInline(iterationSummary(v))} |`,
    `| Throughput | ${mdInline(throughputSummary(v))} |`,
    `| Config | ${mdInline(configSummary(v))} |`,
    `| Exit code | ${v.exitCode ?? "unknown"}${v.timedOut ? " (timed out)" : ""}${v.signal ? ` (${v.signal})` : ""} |`,
  );
  const cf = childFailedSummary(v);
  if (cf) out.push(`| torchrun | ${mdInline(cf)} |`);
  out.push("");
  if (v.otherFailures.length > 0 || v.notes.length > 0) {
    for (const o of v.otherFailures.slice(0, 4)) out.push(`- also: ${mdMessage(causeLine(o))}`);
    for (const n of v.notes) out.push(`- ${mdMessage(n)}`);
    out.push("");
  }
  if (v.evidence.length > 0) {
    const body = v.evidence.slice(0, 12).map((e) => `${String(e.line).padStart(7)}: ${e.text}`).join("\n");
    out.push("<details><summary>Evidence from the log</summary>", "", codeBlock(body, "text"), "", "</details>", "");
  }
  return out.join("\n");
}
