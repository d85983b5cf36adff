// The /healthz report every host serves: version, how long it has run, the GitHub App's
// state, the store (kind and whether it answers), Slack, plus what the host adds (runtime,
// verdict scanner). 503 while the store does not answer.
import { VERSION } from "../version.ts";
import type { Store, StoreStatus } from "../store/types.ts";

export interface HealthInput {
  started: number;
  github: string;
  store: Store | undefined;
  slack: string;
  extra?: Record<string, unknown>;
}

export async function healthReport(h: HealthInput): Promise<{ status: number; body: Record<string, unknown> }> {
  const store: StoreStatus | { kind: string; ok: boolean; detail: string } = h.store
    ? await h.store.status().catch((error: Error) => ({ kind: "unknown", ok: false, detail: error.message }))
    : { kind: "none", ok: true, detail: "not used in setup mode" };
  return {
    status: store.ok ? 200 : 503,
    body: {
      status: store.ok ? "ok" : "degraded",
      version: VERSION,
      uptimeSeconds: Math.round((Date.now() - h.started) / 1000),
      github: h.github,
      store,
      slack: h.slack,
      ...h.extra,
    },
  };
}
