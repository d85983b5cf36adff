// The Octokit the Node server hands Probot: Probot's, with its throttling and retry
// plugins replaced by the bot's own policy (src/github/octokit.ts).
import { ProbotOctokit } from "probot";
import { DEFAULT_RETRY_POLICY, retryPlugin, SYSTEM_CLOCK, type Clock, type RetryObserver, type RetryPolicy } from "../github/octokit.ts";
import { rateGatePlugin, type RateGate } from "../github/rate-gate.ts";

/** With a gate (replicas on Redis), each attempt waits for and reports GitHub's limits there first. */
export function botOctokit(o: { policy?: RetryPolicy; clock?: Clock; observer?: RetryObserver; gate?: RateGate } = {}) {
  // Function form: Probot's object form is shallow-merged away and throttling stays on (docs/stack.md 4a).
  // The plugin is typed against the one hook it uses; Octokit's plugin type wants the whole client.
  const plugins = [...(o.gate ? [rateGatePlugin(o.gate)] : []), retryPlugin(o.policy ?? DEFAULT_RETRY_POLICY, o.clock ?? SYSTEM_CLOCK, o.observer)];
  return ProbotOctokit.plugin(...(plugins as never[])).defaults((options: Record<string, unknown>) => ({
    ...options,
    retry: { enabled: false },
    throttle: { enabled: false },
  }));
}
