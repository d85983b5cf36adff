// The /healthz report every host serves. Anybody gets `{"status":"ok"}` (or "degraded",
// 503 while the store does not answer); the details (version, uptime, the GitHub App's
// state, the store's kind and path, Slack, installed smoke workflows older than the bot,
// what the host adds such as runtime and verdict scanner) only a request bearing the
// operator's HCP_HEALTH_TOKEN.
import { VERSION } from "../version.ts";
import type { Store, StoreStatus } from "../store/types.ts";
import { installedWorkflowReport } from "./smoke/workflow-seen.ts";

export interface HealthInput {
  started: number;
  github: string;
  store: Store | undefined;
  slack: string;
  extra?: Record<string, unknown>;
  /** The request's Authorization header and the operator's token (HCP_HEALTH_TOKEN). */
  authorization?: string | null;
  token?: string;
}

/** `Bearer TOKEN` with the operator's token, compared in constant time; never true without one. */
export function bearsToken(authorization: string | null | undefined, token: string | undefined): boolean {
  if (!token) return false;
  const given = /^Bearer (.+)$/.exec(authorization ?? "")?.[1] ?? "";
  if (given.length !== token.length) return false;
  let diff = 0;
  for (let i = 0; i < token.length; i++) diff |= given.charCodeAt(i) ^ token.charCodeAt(i);
  return diff === 0;
}

export async function healthReport(h: HealthInput): Promise<{ status: number; body: Record<string, unknown> }> {
  const store: StoreStatus | { kind: string; ok: boolean; detail: string } = h.store
    ? await h.store.status().catch((error: Error) => ({ kind: "unknown", ok: false, detail: error.message }))
    : { kind: "none", ok: true, detail: "not used in setup mode" };
  const status = store.ok ? "ok" : "degraded";
  if (!bearsToken(h.authorization, h.token)) return { status: store.ok ? 200 : 503, body: { status } };
  return {
    status: store.ok ? 200 : 503,
    body: {
      status,
      version: VERSION,
      uptimeSeconds: Math.round((Date.now() - h.started) / 1000),
      github: h.github,
      store,
      slack: h.slack,
      // Repositories whose smoke workflow (as last read) is older than this hcp-bot's template.
      workflows: installedWorkflowReport(),
      ...h.extra,
    },
  };
}
