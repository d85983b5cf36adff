// Who may spend GPU time, decided from facts the GitHub layer gathered. Pure, so the whole
// permission matrix is tested without a server. Every refusal says why and what to do.
import { PERMISSION_LEVELS, type PermissionLevel } from "../config/repo-config.ts";

export interface SmokeFacts {
  requester: { login: string; isBot: boolean };
  /** The requester's role on the repository; undefined when the API call failed (fail closed). */
  requesterRole: string | undefined;
  requiredLevel: PermissionLevel;
  pr: { number: number; state: "open" | "closed"; draft: boolean; merged: boolean };
  /** PR from a fork, or whose author lacks write access: GPU time only through an allowed requester (and copy-pr-bot). */
  untrustedHead: boolean;
  copyPrBot: { required: boolean; mirroredSha: string | null | undefined };
  pinnedSha: string;
  activeRun?: { requestId: string; url?: string };
  /** GPU runs this request stands for: 2 for an A/B request (compare ≠ none), else 1 (the default). */
  runs?: number;
  /** The requester's GPU runs in the last 24 hours, in this installation (an A/B request counts 2). */
  requestsToday: number;
  perUserPerDay: number;
  /** Active GPU runs of this repository (an A/B request counts 2), against its own `max_queued`. */
  activeRuns: number;
  maxQueued: number;
  /** All installations' active runs against the operator's cap (HCP_SMOKE_MAX_ACTIVE), when one is set. */
  globalCap?: { active: number; max: number };
}

export type SmokeRefusalCode =
  | "bot"
  | "permission"
  | "permission-unknown"
  | "pr-closed"
  | "pr-draft"
  | "copy-pr-bot"
  | "already-running"
  | "user-quota"
  | "queue-full"
  | "global-cap";

export type SmokeDecision = { allowed: true } | { allowed: false; code: SmokeRefusalCode; reason: string };

/** Built-in roles by strength; a custom role counts as the base permission GitHub reports with it. */
export function roleRank(role: string): number {
  return PERMISSION_LEVELS.indexOf(role as PermissionLevel);
}

/** GitHub's collaborator-permission answer: role_name for built-in roles, else the base permission. */
export function effectiveRole(answer: { permission: string; role_name?: string | null }): string {
  const role = answer.role_name ?? "";
  return roleRank(role) >= 0 ? role : answer.permission;
}

function refuse(code: SmokeRefusalCode, reason: string): SmokeDecision {
  return { allowed: false, code, reason };
}

export function decideSmoke(f: SmokeFacts): SmokeDecision {
  if (f.requester.isBot) return refuse("bot", "commands from bots are ignored");
  if (f.requesterRole === undefined) {
    return refuse("permission-unknown", `could not read @${f.requester.login}'s permission on this repository from GitHub, so no GPU time is granted (try again in a minute)`);
  }
  const rank = roleRank(f.requesterRole);
  if (rank < roleRank(f.requiredLevel)) {
    return refuse("permission", `@${f.requester.login} has ${rank >= 0 ? `${f.requesterRole}` : "no"} access; starting a smoke run needs ${f.requiredLevel} access or more`);
  }
  if (f.pr.state !== "open") return refuse("pr-closed", `PR #${f.pr.number} is ${f.pr.merged ? "merged" : "closed"}`);
  if (f.pr.draft) return refuse("pr-draft", `PR #${f.pr.number} is a draft: mark it ready for review first`);
  if (f.untrustedHead && f.copyPrBot.required && f.copyPrBot.mirroredSha !== f.pinnedSha) {
    const where = f.copyPrBot.mirroredSha ? `points at ${f.copyPrBot.mirroredSha.slice(0, 12)}` : "does not exist";
    return refuse(
      "copy-pr-bot",
      `this PR comes from a fork or an author without write access, and its copy-pr-bot branch pull-request/${f.pr.number} ${where}, not at ${f.pinnedSha.slice(0, 12)}: a maintainer must vet this commit first (\`/ok to test ${f.pinnedSha}\`)`,
    );
  }
  if (f.activeRun) {
    return refuse("already-running", `a smoke run for this PR is already under way (${f.activeRun.url ?? `request ${f.activeRun.requestId}`}); comment \`/hcp cancel\` to stop it`);
  }
  const runs = f.runs ?? 1;
  const ab = runs > 1 ? ` (an A/B run counts as ${runs})` : "";
  if (f.requestsToday + runs > f.perUserPerDay) {
    return refuse("user-quota", `@${f.requester.login} has started ${f.requestsToday} smoke run(s) in the last 24 hours, the daily limit is ${f.perUserPerDay}${ab}`);
  }
  if (f.activeRuns + runs > f.maxQueued) {
    return refuse("queue-full", `${f.activeRuns} smoke run(s) of this repository are already queued or running (its limit is ${f.maxQueued}${ab}); try again when one finishes`);
  }
  if (f.globalCap && f.globalCap.active + runs > f.globalCap.max) {
    return refuse("global-cap", `${f.globalCap.active} smoke run(s) are queued or running on this hcp-bot (the operator's limit is ${f.globalCap.max}${ab}); try again when one finishes`);
  }
  return { allowed: true };
}
