// What a smoke run asked for, read from its Hydra overrides: the layout the verdict compares
// with the configuration the log prints. Used by the runner (its own overrides) and by the bot
// (the overrides it dispatched), so both judge a log the same way.
import type { VerdictOptions } from "./schema.ts";

export type RequestedLayout = Pick<VerdictOptions, "cpCommType" | "sizes" | "contextParallelSize">;

/** `model.cp_comm_type=a2a+p2p`, `+model.context_parallel_size=4`, … (the last one wins; `~key` deletions are skipped). */
export function requestedLayout(overrides: readonly string[]): RequestedLayout {
  const values = new Map<string, string>();
  for (const text of overrides) {
    const eq = text.indexOf("=");
    if (eq < 0 || text.startsWith("~")) continue;
    values.set(text.slice(0, eq).replace(/^\+{1,2}/, ""), text.slice(eq + 1));
  }
  const layout: RequestedLayout = {};
  const type = values.get("model.cp_comm_type");
  if (type && /^[a-z0-9+]+$/.test(type)) layout.cpCommType = type;
  const cp = values.get("model.context_parallel_size");
  if (cp && /^\d+$/.test(cp) && Number(cp) > 0) layout.contextParallelSize = Number(cp);
  const sizes = values.get("model.hierarchical_context_parallel_sizes")?.match(/^\[(\d+(?:,\d+)*)\]$/);
  if (sizes) layout.sizes = sizes[1]!.split(",").map(Number).filter((n) => n > 0);
  return layout;
}
