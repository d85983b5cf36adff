// Slack messages (Block Kit + mrkdwn) for `/hcp` answers and smoke-run stories. Pure: the
// Slack adapter sends what these return. Every piece of text that came from a person or a
// log goes through `mrkdwn()` (no mentions, no links, no `<!channel>`), and every message
// is cut to Slack's limits before it leaves here.
import type { Finding } from "../model/finding.ts";
import type { Verdict } from "../verdict/index.ts";
import { comparisonHeadline, legRows, loss, num, pct } from "../ab/render.ts";
import type { Comparison } from "../ab/schema.ts";
import type { SmokeState, SmokeView } from "./smoke.ts";
import { INIT_COMMAND, UPGRADE_COMMAND, type WorkflowStatus } from "../smoke/workflow.ts";
import { INCONCLUSIVE_NEXT_STEP, stateHeadline } from "./smoke.ts";

/** Slack's documented limits for what we send. */
export const SLACK_LIMITS = {
  blocks: 50,
  /** A section's or context element's text object. */
  text: 3000,
  /** The top-level `text` of a message (the notification / fallback text). */
  messageText: 40_000,
  headerText: 150,
  contextElements: 10,
  sectionFields: 10,
  fieldText: 2000,
  buttonText: 75,
  url: 3000,
} as const;

export interface TextObject {
  type: "mrkdwn" | "plain_text";
  text: string;
  emoji?: boolean;
}

export type Block =
  | { type: "header"; text: TextObject & { type: "plain_text" } }
  | { type: "section"; text?: TextObject; fields?: TextObject[] }
  | { type: "context"; elements: TextObject[] }
  | { type: "divider" }
  | { type: "actions"; elements: Array<{ type: "button"; text: TextObject & { type: "plain_text" }; url: string; action_id: string }> };

export interface SlackMessage {
  text: string;
  blocks: Block[];
}

const ZWSP = "\u200b";

/**
 * User or log text shown as mrkdwn, never interpreted. Escaping `& < >` turns `<!channel>`,
 * `<@U…>`, `<#C…>` and `<url|label>` into plain text; the bare `@channel` words that some
 * clients still notify on get a zero-width space.
 */
export function mrkdwn(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/@(channel|here|everyone)\b/gi, `@${ZWSP}$1`);
}

/** Inline code: backticks inside would end the span early, so they become quotes. */
export function code(text: string): string {
  return `\`${mrkdwn(text.replace(/`/g, "'").replace(/\r?\n/g, " "))}\``;
}

/** A code block; a run of three backticks inside would close it. */
export function codeBlock(text: string): string {
  return `\`\`\`${mrkdwn(text.replace(/```/g, "'''"))}\`\`\``;
}

/** Cuts text to `max` characters (at a line end when one is near) and says it was cut. */
export function fitText(text: string, max: number, note = "… (truncated)"): string {
  if (text.length <= max) return text;
  const room = max - note.length - 1;
  const nl = text.lastIndexOf("\n", room);
  let cut = nl > room * 0.6 ? nl : room;
  // Never split an escape (&amp;) or a surrogate pair.
  const amp = text.lastIndexOf("&", cut);
  if (amp >= 0 && amp > cut - 6 && !text.slice(amp, cut).includes(";")) cut = amp;
  if (/[\uD800-\uDBFF]/.test(text.charAt(cut - 1))) cut -= 1;
  let body = text.slice(0, cut);
  // An unclosed code block would swallow the note.
  if ((body.match(/```/g)?.length ?? 0) % 2 === 1) body += "```";
  return `${body}\n${note}`.slice(0, max);
}

function plain(text: string, max: number): TextObject & { type: "plain_text" } {
  return { type: "plain_text", text: fitText(text, max, "…"), emoji: true };
}

function section(text: string): Block {
  return { type: "section", text: { type: "mrkdwn", text: fitText(text, SLACK_LIMITS.text) } };
}

function context(...texts: string[]): Block {
  return { type: "context", elements: texts.slice(0, SLACK_LIMITS.contextElements).map((t) => ({ type: "mrkdwn", text: fitText(t, SLACK_LIMITS.text) })) };
}

/** Keeps a message within Slack's limits whatever went into it. */
export function fitMessage(message: SlackMessage): SlackMessage {
  let blocks = message.blocks;
  if (blocks.length > SLACK_LIMITS.blocks) {
    const dropped = blocks.length - (SLACK_LIMITS.blocks - 1);
    blocks = [...blocks.slice(0, SLACK_LIMITS.blocks - 1), context(`… ${dropped} more block(s) left out to fit Slack's limit.`)];
  }
  return { text: fitText(message.text, SLACK_LIMITS.messageText), blocks };
}

/** A one-paragraph answer (errors, notes): the same text as blocks and as fallback. */
export function textMessage(text: string): SlackMessage {
  return fitMessage({ text: fitText(text, SLACK_LIMITS.text), blocks: [section(text)] });
}

/**
 * `/hcp help`. The shared help text uses only inline code and `-` bullets, so it reads
 * right as mrkdwn once escaped (backtick spans survive escaping).
 */
export function helpMessage(helpText: string): SlackMessage {
  const chunks = splitParagraphs(mrkdwn(helpText), SLACK_LIMITS.text);
  return fitMessage({ text: "hcp-bot commands", blocks: chunks.map(section) });
}

function splitParagraphs(text: string, max: number): string[] {
  const out: string[] = [];
  let current = "";
  for (const line of text.split("\n")) {
    if (current && current.length + line.length + 1 > max) {
      out.push(current);
      current = "";
    }
    current = current ? `${current}\n${line}` : line;
  }
  if (current.trim()) out.push(current);
  return out.map((c) => fitText(c, max));
}

const SEVERITY_EMOJI = { error: ":octagonal_sign:", warning: ":warning:", info: ":information_source:" } as const;

/** `/hcp check`: each finding with its fix; a clean result says what was and was not seen. */
export function findingsMessage(findings: readonly Finding[], what: string): SlackMessage {
  if (findings.length === 0) {
    return textMessage(`:white_check_mark: No HCP problems found in ${mrkdwn(what)}. Settings the recipe itself sets were not visible to this check unless you named a recipe of an installed repository.`);
  }
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  const head =
    counts.error + counts.warning === 0
      ? `:white_check_mark: No HCP errors or warnings in ${mrkdwn(what)}; ${counts.info} note(s) to read.`
      : `${findings.length} finding(s) in ${mrkdwn(what)}: ${counts.error} error(s), ${counts.warning} warning(s), ${counts.info} note(s).`;
  const shown = findings.slice(0, 20);
  const blocks: Block[] = [section(`*${head}*`)];
  for (const f of shown) {
    const fix = f.fix ? `\n*Fix:* ${mrkdwn(f.fix.description)}` : "";
    blocks.push(section(`${SEVERITY_EMOJI[f.severity]} *${mrkdwn(f.ruleId)}* ${mrkdwn(f.ruleName)} (${mrkdwn(f.unitName)})\n${mrkdwn(f.message)}${fix}`));
  }
  if (findings.length > shown.length) blocks.push(context(`… and ${findings.length - shown.length} more. Run \`npx hcp-bot lint\` on the file for the full list.`));
  blocks.push(context("`hcp-bot explain RULE` documents each rule."));
  return fitMessage({ text: head, blocks });
}

export interface SlackSmokeView extends SmokeView {
  repo: string;
  pr: number;
  prUrl?: string | null;
  /** Slack user id of the person who asked from Slack (shown as a mention: it is ours, not user text). */
  slackUser?: string | null;
}

const STATE_STATUS: Record<SmokeState["kind"], string> = {
  dispatched: "queued",
  running: "running",
  finished: "finished",
  cancelled: "cancelled",
  timed_out: "timed out",
  failed: "failed",
};

function layoutText(p: SmokeView["plan"]): string {
  const type = Array.isArray(p.cpCommType) ? `per-layer ${JSON.stringify(p.cpCommType)}` : String(p.cpCommType);
  return `CP ${p.cp}, ${type}${p.sizes ? `, sizes [${p.sizes.join(", ")}]` : ""} on ${p.gpus} GPU(s), ${p.iters} iteration(s)`;
}

/** The verdict's cause and a short excerpt of its evidence (a few lines, each cut short). */
function verdictBlocks(verdict: Verdict, note: string | undefined, comparison?: Comparison): Block[] {
  const blocks: Block[] = [];
  const cause = verdict.cause ? `*Cause:* ${mrkdwn(verdict.cause.message)}${verdict.cause.ruleId ? ` (${mrkdwn(verdict.cause.ruleId)})` : ""}` : "*Cause:* none";
  const hcp =
    verdict.status === "hcp-degenerate"
      ? "CP on, but not hierarchical (a level of size 1)"
      : verdict.hcp.active === true
        ? "hierarchical CP groups seen"
        : verdict.hcp.active === false
          ? "no hierarchical CP groups"
          : "the log cannot tell";
  const fix = verdict.cause?.fix ? `\n*Fix:* ${mrkdwn(verdict.cause.fix)}` : "";
  blocks.push(section(`*Verdict:* ${mrkdwn(verdict.status)}\n${cause}${fix}\n*HCP:* ${hcp}${verdict.expectHcp ? "" : " (not required)"} · *iterations:* ${verdict.iterations.count}`));
  if (note) blocks.push(context(`_${mrkdwn(note)}_`));
  if (verdict.status === "inconclusive") blocks.push(section(mrkdwn(INCONCLUSIVE_NEXT_STEP.replace(/`/g, ""))));
  const evidence = verdict.evidence.slice(0, 6).map((e) => `${String(e.line).padStart(6)}: ${e.text.length > 300 ? `${e.text.slice(0, 300)}…` : e.text}`);
  if (evidence.length > 0) blocks.push(section(`*Evidence from the log*\n${codeBlock(fitText(evidence.join("\n"), SLACK_LIMITS.text - 200))}`));
  if (comparison) blocks.push(section(comparisonMrkdwn(comparison)));
  return blocks;
}

function stateDetail(state: SmokeState): Block[] {
  switch (state.kind) {
    case "finished":
      return verdictBlocks(state.verdict, state.note, state.comparison);
    case "timed_out":
      return [section(`No GPU runner with the labels ${code(state.labels.join(", "))} picked the job up within ${state.minutes} minute(s); the run was cancelled.`)];
    case "failed":
      return [section(mrkdwn(state.reason))];
    case "cancelled":
      return state.by ? [context(`Cancelled by ${mrkdwn(state.by)} on GitHub.`)] : [];
    case "dispatched":
      return state.skipped?.length
        ? [context(`The installed smoke workflow is older than this hcp-bot and does not take ${state.skipped.map((n) => code(n)).join(", ")}; the check run says what it does instead. Upgrade: ${code(UPGRADE_COMMAND)}`)]
        : [];
    default:
      return [];
  }
}

/** A `<url|label>` link only for plain http(s) URLs that cannot break out of the link syntax. */
function link(url: string | null | undefined, label: string): string {
  return url && /^https?:\/\/[^\s<>|]+$/.test(url) && url.length <= SLACK_LIMITS.url ? ` (<${url}|${label}>)` : "";
}

function linkButton(text: string, url: string | null | undefined, id: string) {
  if (!url || url.length > SLACK_LIMITS.url || !/^https?:\/\//.test(url)) return [];
  return [{ type: "button" as const, text: plain(text, SLACK_LIMITS.buttonText), url, action_id: id }];
}

/** The channel message that follows a smoke run: posted when dispatched, updated in place. */
export function smokeMessage(v: SlackSmokeView, state: SmokeState): SlackMessage {
  // stateHeadline escapes for GitHub markdown; Slack's header is plain text, so it is rebuilt from the kind.
  const headline = state.kind === "cancelled" ? "⏹️ Smoke run cancelled" : stateHeadline(state);
  const who = v.slackUser && /^[UW][A-Z0-9]+$/.test(v.slackUser) ? `<@${v.slackUser}> (GitHub ${mrkdwn(v.requester)})` : `GitHub ${mrkdwn(v.requester)}`;
  const blocks: Block[] = [
    { type: "header", text: plain(`${headline}: ${v.repo}#${v.pr}`, SLACK_LIMITS.headerText) },
    {
      type: "section",
      fields: [
        { type: "mrkdwn", text: `*Status*\n${STATE_STATUS[state.kind]}` },
        { type: "mrkdwn", text: fitText(`*Recipe*\n${code(v.plan.recipe)}`, SLACK_LIMITS.fieldText) },
        { type: "mrkdwn", text: `*Commit*\n${code(v.sha.slice(0, 12))}` },
        { type: "mrkdwn", text: fitText(`*CP layout*\n${mrkdwn(layoutText(v.plan))}`, SLACK_LIMITS.fieldText) },
      ],
    },
    ...stateDetail(state),
  ];
  const buttons = [...linkButton("Pull request", v.prUrl, "hcp_pr"), ...linkButton("Check run", v.checkRunUrl, "hcp_check_run"), ...linkButton("Actions run", v.runUrl, "hcp_actions_run")];
  if (buttons.length > 0) blocks.push({ type: "actions", elements: buttons });
  blocks.push(context(`Asked by ${who} · request ${code(v.requestId)} · \`/hcp status ${mrkdwn(v.repo)}#${v.pr}\``));
  const verdict = state.kind === "finished" ? ` (${state.verdict.status})` : "";
  return fitMessage({ text: `${headline}${verdict}: ${mrkdwn(v.repo)}#${v.pr} at ${v.sha.slice(0, 12)}`, blocks });
}

/** The ephemeral answer for a dry run: what would start. */
export function dryRunMessage(v: SlackSmokeView, launchLine: string): SlackMessage {
  return fitMessage({
    text: `Dry run: this is what /hcp smoke would start on ${mrkdwn(v.repo)}#${v.pr} (nothing was dispatched).`,
    blocks: [
      section(`*Dry run* on ${mrkdwn(v.repo)}#${v.pr}: nothing was dispatched. The pre-flight check passed.`),
      section(`*Recipe* ${code(v.plan.recipe)} · *Commit* ${code(v.sha.slice(0, 12))}\n*CP layout* ${mrkdwn(layoutText(v.plan))}`),
      section(codeBlock(fitText(launchLine, SLACK_LIMITS.text - 100))),
    ],
  });
}

export interface SlackStatusView {
  repo: string;
  pr: number;
  headSha?: string;
  review?: { conclusion: string | null; title: string | null; url: string | null };
  smoke?: { id: string; status: string; githubLogin: string; sha: string; verdictStatus: string | null; verdictSummary: string | null; runUrl: string | null; recipe: string };
  /** The smoke workflow on the default branch; absent when it could not be read. */
  workflow?: WorkflowStatus;
}

/** The installed smoke workflow's line of `/hcp status`: its template version, and what to run when it is not the bot's. */
export function workflowStatusMrkdwn(w: WorkflowStatus): string {
  switch (w.kind) {
    case "missing":
      return `*Smoke workflow:* none at ${code(w.path)} on ${code(w.branch)}: add it with ${code(INIT_COMMAND)}`;
    case "unusable":
      return `*Smoke workflow:* ${code(w.path)} cannot be used: ${mrkdwn(w.problem)}`;
    case "found": {
      const installed = `*Smoke workflow:* ${code(w.path)} is template v${w.version}`;
      if (w.relation === "current") return `${installed}, the version this hcp-bot renders`;
      if (w.relation === "older") return `${installed}, older than this hcp-bot's v${w.template}: upgrade it with ${code(UPGRADE_COMMAND)} and commit it to the default branch`;
      return `${installed}, newer than this hcp-bot's v${w.template}: upgrade hcp-bot`;
    }
  }
}

/** `/hcp status`: the latest review and smoke state of a PR. */
export function statusMessage(s: SlackStatusView): SlackMessage {
  const review = s.review
    ? `*HCP review:* ${mrkdwn(s.review.conclusion ?? "in progress")}${s.review.title ? `: ${mrkdwn(s.review.title)}` : ""}${link(s.review.url, "check run")}`
    : "*HCP review:* none yet on the head commit";
  const m = s.smoke;
  const smoke = m
    ? `*Smoke:* ${mrkdwn(m.status)} (request ${code(m.id)} by ${mrkdwn(m.githubLogin)}, ${code(m.recipe)} at ${code(m.sha.slice(0, 12))})${m.verdictStatus ? `\n*Verdict:* ${mrkdwn(m.verdictSummary ?? m.verdictStatus)}` : ""}${link(m.runUrl, "Actions run")}`
    : "*Smoke:* no smoke run requested for this PR";
  const head = s.headSha ? ` at ${code(s.headSha.slice(0, 12))}` : "";
  const workflow = s.workflow ? [section(workflowStatusMrkdwn(s.workflow))] : [];
  return fitMessage({ text: `Status of ${mrkdwn(s.repo)}#${s.pr}`, blocks: [section(`*${mrkdwn(s.repo)}#${s.pr}*${head}`), section(review), section(smoke), ...workflow] });
}

/** The findings that made the pre-flight refuse a smoke run, as a reply. */
export function refusedMessage(reason: string, findings: readonly Finding[] | undefined): SlackMessage {
  const base = `:no_entry: No smoke run: ${mrkdwn(reason)}.`;
  if (!findings?.length) return textMessage(base);
  const detail = findingsMessage(findings, "the requested configuration");
  return fitMessage({ text: base, blocks: [section(base), ...detail.blocks] });
}

/** The A/B comparison as mrkdwn: the summary, each leg, the losses and the flags. */
export function comparisonMrkdwn(c: Comparison): string {
  const lines = [`*A/B vs ${mrkdwn(c.mode)}:* ${mrkdwn(comparisonHeadline(c))}`];
  for (const [name, l] of legRows(c)) {
    lines.push(`• ${name} (${mrkdwn(l.layout)}): ${mrkdwn(l.verdictStatus)}, ${mrkdwn(l.hcpEvidence)}, ${num(l.tflopsPerGpu)} TFLOP/s/GPU, ${num(l.msPerIteration)} ms/iteration`);
  }
  if (c.losses.length) lines.push(`• lm loss: ${c.losses.map((l) => `${l.iteration}: ${loss(l.hcp)} / ${loss(l.reference)} (${pct(l.relDiff)})`).join(", ")}`);
  for (const f of c.flags) lines.push(`${f.severity === "error" ? ":octagonal_sign:" : ":warning:"} *${f.id}* ${mrkdwn(f.message)}`);
  return lines.join("\n");
}
