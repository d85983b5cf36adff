// The A/B comparison of an A/B smoke run (`/hcp smoke compare=p2p|a2a`) on /runs/ID: the
// summary, each leg's verdict, HCP evidence, TFLOP/s/GPU and time per iteration, the lm loss
// per iteration and the flags (AB001, AB002). Every value goes through the escaping template
// (a missing comparison's reason can quote a log). undefined for a request without compare.
import { loss, num, pct } from "../../core/ab/render.ts";
import type { Comparison, Leg } from "../../core/ab/schema.ts";
import type { SmokeRequest } from "../../store/types.ts";
import { html, type Html } from "./html.ts";

export function abComparisonFor(request: SmokeRequest): Html | undefined {
  const mode = request.compare;
  if (mode !== "p2p" && mode !== "a2a") return undefined;
  const c = request.comparison ?? null;
  if (!c) {
    const when = request.status === "completed" ? "this run was judged without one" : "it comes when the run finishes";
    return html`<p class="empty" data-ab="pending">A/B run against <code>${mode}</code>: no comparison yet (${when}).</p>`;
  }
  return comparisonHtml(c);
}

function legRow(name: string, l: Leg): Html {
  return html`<tr data-leg="${name}"><th scope="row">${name}</th><td><code>${l.layout}</code></td><td><span class="verdict-${l.verdictStatus}">${l.verdictStatus}</span></td><td>${l.hcpEvidence}</td><td class="num">${num(l.tflopsPerGpu)}</td><td class="num">${num(l.msPerIteration)}</td></tr>`;
}

function comparisonHtml(c: Comparison): Html {
  const legs = [c.hcp ? legRow("HCP", c.hcp) : "", c.reference ? legRow("Reference", c.reference) : ""];
  const flagged = c.flags.some((f) => f.severity === "error");
  return html`<p class="ab-summary${flagged ? " flagged" : ""}" data-ab="${c.status}"><strong>${c.summary}</strong>${c.speedup !== null ? html` <span class="mono">(speedup ${c.speedup.toFixed(3)}${c.bound ? `, plausible at most ${c.bound.maxSpeedup.toFixed(2)}` : ""})</span>` : ""}</p>
${c.hcp || c.reference ? html`<table class="ab-legs"><thead><tr><th>Leg</th><th>Layout</th><th>Verdict</th><th>HCP evidence</th><th>TFLOP/s/GPU</th><th>ms / iteration</th></tr></thead><tbody>${legs}</tbody></table><p class="note">TFLOP/s and time: median of the iterations after the first.</p>` : ""}
${c.losses.length ? html`<table class="ab-losses"><thead><tr><th>Iteration</th><th>lm loss (HCP)</th><th>lm loss (${c.mode})</th><th>Relative difference</th></tr></thead><tbody>${c.losses.map((l) => html`<tr><td class="num">${l.iteration}</td><td class="num">${loss(l.hcp)}</td><td class="num">${loss(l.reference)}</td><td class="num">${pct(l.relDiff)}</td></tr>`)}</tbody></table>` : ""}
${c.flags.length ? html`<ul class="ab-flags">${c.flags.map((f) => html`<li class="${f.severity}" data-flag="${f.id}"><strong>${f.id}</strong> ${f.message}</li>`)}</ul>` : ""}
${c.bound ? html`<p class="note">The bound: 1 / (1 − f·r) + timing noise, with f = ${c.bound.commShare} (the assumed exposed-communication share of a ${c.mode} step) and r = ${c.bound.removable} (the part of it a2a+p2p at CP ${c.bound.cp} [${c.bound.sizes.join(", ")}] no longer does); <code>hcp-bot explain AB001</code>.</p>` : ""}`;
}
