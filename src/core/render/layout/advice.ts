// The advisor's answer in words (terminal, PR comment, Slack), followed by its picture.
import { candidateText, type Advice } from "../../advise/advise.ts";
import { formatLayoutMermaid } from "./mermaid.ts";
import { pictureOf, type Picture } from "./picture.ts";
import { formatLayoutGrid, type Tint } from "./text.ts";

export function advicePicture(advice: Advice): Picture {
  return pictureOf({
    grid: advice.grid,
    cpCommType: advice.recommendation.cpCommType,
    domainGpus: advice.input.domainGpus,
    domain: advice.input.domain,
  });
}

/** The recipe lines that set the recommendation. */
export function recommendedSettings(advice: Advice): string[] {
  const r = advice.recommendation;
  return [
    `cfg.model.context_parallel_size = ${advice.input.cp}`,
    `cfg.model.cp_comm_type = "${r.cpCommType}"`,
    `cfg.model.hierarchical_context_parallel_sizes = ${r.sizes ? `[${r.sizes.join(", ")}]` : "None"}`,
  ];
}

export function recommendationText(advice: Advice): string {
  const r = advice.recommendation;
  return `cp_comm_type="${r.cpCommType}"${r.sizes ? `, hierarchical_context_parallel_sizes=[${r.sizes.join(", ")}]` : ""}`;
}

export interface AdviceTextOptions {
  tint?: Tint;
  bold?: (text: string) => string;
  /** Extra lines after the headline (where the numbers came from). */
  preamble?: readonly string[];
}

export function formatAdviceText(advice: Advice, options: AdviceTextOptions = {}): string {
  const bold = options.bold ?? ((t: string) => t);
  const width = Math.max(0, ...advice.rejected.map((c) => candidateText(c).length));
  const out = [
    `${bold("Recommended:")} ${recommendationText(advice)}`,
    ...(options.preamble ?? []).map((l) => `  ${l}`),
    ...advice.recommendation.reasons.map((r) => `  - ${r}`),
    "",
    ...recommendedSettings(advice).map((l) => `    ${l}`),
  ];
  if (advice.rejected.length) {
    out.push("", bold("Rejected:"), ...advice.rejected.map((c) => `  ${candidateText(c).padEnd(width)}  ${c.why}`));
  }
  out.push("", formatLayoutGrid(advicePicture(advice), options.tint ? { tint: options.tint } : {}).trimEnd());
  return out.join("\n") + "\n";
}

/** GitHub Markdown (`/hcp advise`): the answer, the settings, the rejected choices, the Mermaid picture. */
export function formatAdviceMarkdown(advice: Advice): string {
  return [
    `**Recommended:** \`${recommendationText(advice)}\``,
    "",
    ...advice.recommendation.reasons.map((r) => `- ${r}`),
    "",
    "```python",
    ...recommendedSettings(advice),
    "```",
    "",
    ...(advice.rejected.length ? ["**Rejected**", "", ...advice.rejected.map((c) => `- \`${candidateText(c)}\`: ${c.why}`), ""] : []),
    formatLayoutMermaid(advicePicture(advice)).trimEnd(),
  ].join("\n");
}

/** Slack mrkdwn: the same answer with the text grid in a code block (Slack draws no Mermaid). */
export function formatAdviceSlack(advice: Advice): string {
  return [
    `*Recommended:* \`${recommendationText(advice)}\``,
    ...advice.recommendation.reasons.map((r) => `• ${r}`),
    ...(advice.rejected.length ? ["*Rejected*", ...advice.rejected.map((c) => `• \`${candidateText(c)}\`: ${c.why}`)] : []),
    "```",
    formatLayoutGrid(advicePicture(advice), { maxDomains: 4, maxGroups: 12 }).trimEnd(),
    "```",
  ].join("\n");
}
