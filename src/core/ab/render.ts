// The comparison as Markdown (check run, PR comment, /runs/ID through the escaping renderer;
// Slack's mrkdwn is in src/core/render/slack.ts). Texts that come from a log (a reference leg's cause) are escaped.
import { mdCell, mdText } from "../render/escape.ts";
import type { Comparison, Leg } from "./schema.ts";

export const num = (x: number | null, digits = 1) => (x === null ? "–" : x.toFixed(digits));
export const loss = (x: number | null) => (x === null ? "–" : x.toFixed(4));
export const pct = (x: number | null) => (x === null ? "–" : `${(x * 100).toFixed(2)} %`);

export function legRows(c: Comparison): [string, Leg][] {
  return [c.hcp ? ["HCP", c.hcp] : null, c.reference ? ["Reference", c.reference] : null].filter((x): x is [string, Leg] => x !== null);
}

export function comparisonHeadline(c: Comparison): string {
  const flag = c.flags.find((f) => f.severity === "error");
  return flag ? `${c.summary}: flagged (${flag.id})` : c.summary;
}

export function comparisonMarkdown(c: Comparison): string {
  const out = [`#### A/B comparison: a2a+p2p vs ${c.mode}`, "", `**${mdText(comparisonHeadline(c))}**`, ""];
  const legs = legRows(c);
  if (legs.length) {
    out.push("| Leg | Layout | Verdict | HCP evidence | TFLOP/s/GPU | ms / iteration |", "|---|---|---|---|---:|---:|");
    for (const [name, l] of legs) out.push(`| ${name} | ${mdCell(l.layout)} | ${mdCell(l.verdictStatus)} | ${mdCell(l.hcpEvidence)} | ${num(l.tflopsPerGpu)} | ${num(l.msPerIteration)} |`);
    out.push("", "_TFLOP/s and time: median of the iterations after the first._", "");
  }
  if (c.losses.length) {
    out.push(`| Iteration | lm loss (HCP) | lm loss (${c.mode}) | relative difference |`, "|---:|---:|---:|---:|");
    for (const l of c.losses) out.push(`| ${l.iteration} | ${loss(l.hcp)} | ${loss(l.reference)} | ${pct(l.relDiff)} |`);
    out.push("");
  }
  for (const f of c.flags) out.push(`- ${f.severity === "error" ? "🛑" : "⚠️"} **${f.id}** ${mdText(f.message)}`);
  if (c.bound) {
    out.push(
      "",
      `<sub>Plausible at most: ${c.bound.maxSpeedup.toFixed(2)}x over ${c.mode} at CP ${c.bound.cp} [${c.bound.sizes.join(", ")}] ` +
        `(1 / (1 − f·r) with f = ${c.bound.commShare} exposed communication, r = ${c.bound.removable} of it removable, plus timing noise; \`hcp-bot explain AB001\`).</sub>`,
    );
  }
  return out.join("\n");
}
