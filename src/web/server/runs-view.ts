// What the runs pages show of a smoke request: one row of /runs and the page /runs/ID.
// The verdict text is the check run's (src/core/render/smoke.ts), rendered through the
// escaping Markdown renderer; everything else goes through the escaping template.
import { planOfRequest, smokeCommentBody, type SmokeState, type SmokeView } from "../../core/render/smoke.ts";
import type { Verdict } from "../../core/verdict/schema.ts";
import type { AuditRecord, SmokeRequest } from "../../store/types.ts";
import { abComparisonFor } from "./ab-slot.ts";
import { html, markdown, type Html } from "./html.ts";

const ORIGIN: Record<SmokeRequest["source"], string> = { "github-comment": "PR comment", "check-run-button": "check-run button", slack: "Slack" };

export interface Links {
  pr: string;
  checkRun?: string;
  actionsRun?: string;
}

/** Links to GitHub for a request; the run URL GitHub gave is kept only when it is http(s). */
export function linksFor(r: SmokeRequest, webUrl: string): Links {
  const repo = r.repo.split("/").map(encodeURIComponent).join("/");
  return {
    pr: `${webUrl}/${repo}/pull/${r.pr}`,
    ...(r.checkRunId ? { checkRun: `${webUrl}/${repo}/runs/${r.checkRunId}` } : {}),
    ...(r.runUrl && /^https?:\/\//.test(r.runUrl) ? { actionsRun: r.runUrl } : {}),
  };
}

export function hcpEvidenceSummary(v: Verdict | null): string {
  if (!v) return "–";
  const h = v.hcp;
  if (h.active === true) {
    const parts = [h.hierarchicalLines ? `${h.hierarchicalLines} HCP group line(s)${h.levels.length ? ` (L${h.levels.join("/L")})` : ""}` : "", h.probeReports ? `${h.probeReports} probe report(s)` : ""].filter(Boolean);
    return `HCP on: ${parts.join(", ") || "proven"}`;
  }
  if (h.active === false) return `HCP off${h.flatLines ? `: ${h.flatLines} flat CP group line(s)` : ""}`;
  return v.expectHcp ? "HCP not shown in the log" : "not required";
}

export function tflops(v: Verdict | null): string {
  const t = v?.throughput.maxTflopsPerGpu;
  return t === null || t === undefined ? "–" : `${t}${v!.throughput.implausible ? " (implausible)" : ""}`;
}

/** GPUs × minutes between the runner starting and the run finishing; unknown until both are known. */
export function gpuMinutes(r: SmokeRequest): string {
  if (!r.startedAt || !r.finishedAt) return "–";
  const minutes = (r.finishedAt.getTime() - r.startedAt.getTime()) / 60_000;
  return minutes < 0 ? "–" : (r.gpus * minutes).toFixed(1);
}

export function causeText(r: SmokeRequest): string {
  const cause = r.verdict?.cause;
  if (cause) return `${cause.kind}: ${cause.message}`;
  return r.reason ?? "";
}

function when(d: Date | null): string {
  return d ? d.toISOString().replace("T", " ").replace(/\.\d{3}Z$/, " UTC") : "–";
}

function verdictCell(r: SmokeRequest): Html {
  if (!r.verdictStatus) return html`–`;
  // Inconclusive concludes the check as a failure; the history says so rather than looking amber.
  const label = r.verdictStatus === "inconclusive" ? "inconclusive (not a pass)" : r.verdictStatus;
  return html`<span class="verdict-${r.verdictStatus}">${label}</span>`;
}

function linkList(l: Links): Html {
  return html`<a href="${l.pr}">PR</a>${l.checkRun ? html` · <a href="${l.checkRun}">check run</a>` : ""}${l.actionsRun ? html` · <a href="${l.actionsRun}">Actions run</a>` : ""}`;
}

export function runRow(r: SmokeRequest, webUrl: string): Html {
  const cause = causeText(r);
  return html`<tr data-id="${r.id}" data-repo="${r.repo}">
<td class="when"><a href="/runs/${encodeURIComponent(r.id)}">${when(r.createdAt).replace(/:\d\d UTC$/, "")}</a></td>
<td>${r.repo}</td><td class="num">#${r.pr}</td><td>${r.githubLogin}</td><td>${ORIGIN[r.source]}</td>
<td class="state">${r.status}</td><td>${verdictCell(r)}</td><td>${cause.length > 160 ? `${cause.slice(0, 157)}…` : cause}</td>
<td>${hcpEvidenceSummary(r.verdict)}</td><td class="num">${tflops(r.verdict)}</td><td class="num">${gpuMinutes(r)}</td><td>${linkList(linksFor(r, webUrl))}</td>
</tr>`;
}

export const RUNS_TABLE_HEAD = html`<tr><th>Requested</th><th>Repository</th><th>PR</th><th>Requester</th><th>Origin</th><th>State</th><th>Verdict</th><th>Cause</th><th>HCP evidence</th><th>TFLOP/s/GPU</th><th>GPU min</th><th>Links</th></tr>`;

/** The state the check run was last given, rebuilt from the stored request. */
export function stateOf(r: SmokeRequest): SmokeState | undefined {
  switch (r.status) {
    case "completed":
      return r.verdict ? { kind: "finished", verdict: r.verdict, ...(r.comparison ? { comparison: r.comparison } : {}) } : undefined;
    case "dispatched":
    case "queued":
      return { kind: "dispatched" };
    case "running":
      return { kind: "running" };
    case "cancelled":
      return { kind: "cancelled" };
    case "failed":
      return { kind: "failed", reason: r.reason ?? "unknown" };
    default:
      return undefined;
  }
}

/** Lifecycle points from the request itself, merged with its audit records, oldest first. */
export function trail(r: SmokeRequest, audit: readonly AuditRecord[]): { at: Date; text: string; denied: boolean }[] {
  const points: { at: Date; text: string; denied: boolean }[] = [
    { at: r.createdAt, text: `${r.githubLogin} asked (${ORIGIN[r.source]}${r.slackUser ? `, Slack user ${r.slackUser}` : ""}) for ${r.recipe} at ${r.sha.slice(0, 12)}`, denied: false },
  ];
  if (r.dispatchedAt) points.push({ at: r.dispatchedAt, text: `dispatched to the GPU runner${r.runId ? `; bound to Actions run ${r.runId}` : " (run not yet bound)"}`, denied: false });
  if (r.startedAt) points.push({ at: r.startedAt, text: "the runner started the job", denied: false });
  if (r.finishedAt) points.push({ at: r.finishedAt, text: `${r.status}${r.verdictStatus ? `: verdict ${r.verdictStatus}` : ""}${r.reason ? ` (${r.reason})` : ""}`, denied: r.status === "refused" || r.status === "failed" || r.status === "timed_out" });
  for (const a of audit) {
    const who = a.githubLogin ? ` by ${a.githubLogin}` : "";
    points.push({ at: a.at, text: `audit: ${a.action} ${a.decision}${who}${a.runId ? `, run ${a.runId}` : ""}${a.verdict ? `, verdict ${a.verdict}` : ""}${a.reason ? `: ${a.reason}` : ""}`, denied: a.decision === "denied" });
  }
  return points.sort((a, b) => a.at.getTime() - b.at.getTime());
}

export function runDetail(r: SmokeRequest, audit: readonly AuditRecord[], webUrl: string): Html {
  const links = linksFor(r, webUrl);
  const view: SmokeView = { requestId: r.id, requester: r.githubLogin, sha: r.sha, plan: planOfRequest(r), runUrl: links.actionsRun ?? null, checkRunUrl: links.checkRun ?? null };
  const state = stateOf(r);
  const evidence = r.verdict?.evidence ?? [];
  const ab = abComparisonFor(r);
  return html`<h1>Smoke run ${r.id}</h1>
<section class="card"><h2>Request</h2><dl class="facts">
<dt>Repository</dt><dd>${r.repo}</dd><dt>Pull request</dt><dd><a href="${links.pr}">#${r.pr}</a></dd>
<dt>Commit</dt><dd><code>${r.sha}</code></dd><dt>Requester</dt><dd>${r.githubLogin}</dd><dt>Origin</dt><dd>${ORIGIN[r.source]}</dd>
<dt>State</dt><dd class="state">${r.status}</dd><dt>Verdict</dt><dd>${verdictCell(r)}</dd><dt>Cause</dt><dd>${causeText(r) || "–"}</dd>
<dt>HCP evidence</dt><dd>${hcpEvidenceSummary(r.verdict)}</dd><dt>TFLOP/s/GPU</dt><dd>${tflops(r.verdict)}</dd><dt>GPU minutes</dt><dd>${gpuMinutes(r)}</dd>
<dt>Links</dt><dd>${linkList(links)}</dd></dl></section>
<section class="card" id="check-run"><h2>As in the check run</h2><div class="markdown">${state ? markdown(smokeCommentBody(view, state)) : html`<p class="empty">No check run: ${r.reason ?? "the request did not get that far"}.</p>`}</div></section>
<section class="card" id="evidence"><h2>Evidence lines from the log</h2>${evidence.length ? html`<pre class="evidence">${evidence.map((e) => `${String(e.line).padStart(7)} [${e.kind}] ${e.text}\n`).join("")}</pre>` : html`<p class="empty">No evidence: ${r.verdict ? "the log had none" : "no verdict yet"}.</p>`}</section>
<section class="card" id="audit"><h2>Audit trail</h2><ol class="trail">${trail(r, audit).map((p) => html`<li${p.denied ? html` class="denied"` : ""}><span class="mono">${when(p.at)}</span> ${p.text}</li>`)}</ol></section>
${ab ? html`<section class="card" id="ab-comparison"><h2>A/B comparison</h2>${ab}</section>` : ""}`;
}
