// The advisor's answer in words (terminal, PR comment, Slack), followed by its picture.
import { AdviseError, adviseLayout, candidateText, type Advice, type AdviseInput } from "../../advise/advise.ts";
import type { AdviseCommand } from "../../commands/types.ts";
import { codeBlock, fitMessage, fitText, mrkdwn, SLACK_LIMITS, type Block, type SlackMessage } from "../slack.ts";
import { formatLayoutMermaid } from "./mermaid.ts";
import { pictureOf, proposedPicture, type Picture } from "./picture.ts";
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
  return adviceSlackParts(advice).join("\n");
}

function adviceSlackParts(advice: Advice): [string, string, string] {
  const summary = [`*Recommended:* \`${recommendationText(advice)}\``, ...advice.recommendation.reasons.map((r) => `• ${r}`)].join("\n");
  const rejected = advice.rejected.length ? ["*Rejected*", ...advice.rejected.map((c) => `• \`${candidateText(c)}\`: ${c.why}`)].join("\n") : "";
  // The grid must fit one section's text: fewer nodes drawn until it does (one picture for all
  // tries: at 65,536 GPUs each picture indexes every rank's groups).
  const picture = advicePicture(advice);
  let grid = "";
  for (const maxDomains of [4, 2, 1]) {
    grid = codeBlock(formatLayoutGrid(picture, { maxDomains, maxGroups: 8, columns: 8 }).trimEnd());
    if (grid.length <= SLACK_LIMITS.text) break;
  }
  return [summary, rejected, grid];
}

/** What `/hcp advise` reads from its numbers, or why it cannot advise. */
export function adviseCommandInput(command: AdviseCommand): AdviseInput {
  return {
    cp: command.cp,
    ...(command.tp !== undefined ? { tp: command.tp } : {}),
    ...(command.pp !== undefined ? { pp: command.pp } : {}),
    ...(command.heads !== undefined ? { numAttentionHeads: command.heads } : {}),
    ...(command.kvHeads !== undefined ? { numQueryGroups: command.kvHeads } : {}),
    ...(command.domainGpus !== undefined ? { domainGpus: command.domainGpus, domain: command.domain ?? "node" } : {}),
    ...(command.nodes !== undefined ? { nodes: command.nodes } : {}),
  };
}

function adviceOrError(command: AdviseCommand): Advice | string {
  try {
    return adviseLayout(adviseCommandInput(command));
  } catch (error) {
    if (error instanceof AdviseError) return error.message;
    throw error;
  }
}

/** The PR-comment reply to `/hcp advise`. Every number in it was computed from the validated command. */
export function adviseReplyMarkdown(command: AdviseCommand): string {
  const advice = adviceOrError(command);
  if (typeof advice === "string") return `hcp-bot cannot lay that out: ${advice}.`;
  return `### hcp-bot layout advice\n\n${formatAdviceMarkdown(advice)}`;
}

/** The Slack reply to `/hcp advise`: the answer, the rejected choices, and the grid as a code block. */
export function adviseReplySlack(command: AdviseCommand): SlackMessage {
  const advice = adviceOrError(command);
  const section = (text: string): Block => ({ type: "section", text: { type: "mrkdwn", text: fitText(text, SLACK_LIMITS.text) } });
  if (typeof advice === "string") return fitMessage({ text: `hcp-bot cannot lay that out: ${advice}`, blocks: [section(`:warning: hcp-bot cannot lay that out: ${mrkdwn(advice)}.`)] });
  const [summary, rejected, grid] = adviceSlackParts(advice);
  return fitMessage({ text: `Recommended: ${recommendationText(advice)}`, blocks: [summary, rejected, grid].filter(Boolean).map(section) });
}

/**
 * How a host renders `/hcp advise` replies: on the Node server a worker thread (the largest
 * layout takes a few hundred milliseconds that the answering thread must not spend), on edge
 * runtimes this thread (the layout is bounded by MAX_ADVISE_GPUS).
 */
export interface AdviseReplies {
  markdown(command: AdviseCommand): Promise<string>;
  slack(command: AdviseCommand): Promise<SlackMessage>;
}

export const inThreadAdvise: AdviseReplies = {
  markdown: async (command) => adviseReplyMarkdown(command),
  slack: async (command) => adviseReplySlack(command),
};

export interface ProposedSizes {
  tp: number;
  sizes: readonly [number, number];
}

/**
 * A collapsed section with the Mermaid picture of a fix's proposed sizes (one model
 * replica on nodes of `gpusPerNode`), for PR comments and the check run's text.
 */
export function proposedLayoutDetails(layout: ProposedSizes, gpusPerNode: number): string {
  const [a2a, p2p] = layout.sizes;
  return [
    `<details><summary>Rank layout of the proposed sizes: a2a ${a2a} × p2p ${p2p} with TP ${layout.tp} on ${gpusPerNode}-GPU nodes</summary>`,
    "",
    formatLayoutMermaid(proposedPicture({ tp: layout.tp, sizes: layout.sizes, domainGpus: gpusPerNode })).trimEnd(),
    "",
    "</details>",
  ].join("\n");
}
