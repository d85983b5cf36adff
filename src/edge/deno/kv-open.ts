// The store's Deno KV is opened first thing in the entry's own code (deno/main.ts imports this
// module before any other), so the open (a SQLite file locally) runs while the entry's other
// modules are evaluated. (The chunk the entry shares with its lazily imported work, zod among
// it, is a module of its own and is evaluated before the entry.)
import type { Kv } from "../../store/kv/store.ts";

interface DenoKvApi {
  env: { toObject(): Record<string, string> };
  mkdirSync(path: string, options: { recursive: boolean }): void;
  openKv(path?: string): Promise<Kv>;
}

const Deno = (globalThis as unknown as { Deno: DenoKvApi }).Deno;
export const env = Deno.env.toObject();

/** HCP_DATA_DIR/hcp-bot.kv locally; Deno Deploy's own KV when deployed (and no folder is named). */
async function openKv(): Promise<{ kv: Kv; label: string }> {
  if (env.DENO_DEPLOYMENT_ID && !env.HCP_DATA_DIR) return { kv: await Deno.openKv(), label: "Deno Deploy KV" };
  const dir = env.HCP_DATA_DIR ?? ".hcp-bot-data";
  Deno.mkdirSync(dir, { recursive: true });
  const path = `${dir.replace(/\/$/, "")}/hcp-bot.kv`;
  return { kv: await Deno.openKv(path), label: path };
}

/** Awaited by main.ts, which reports a failure as any other start-up error. */
export const kvOpening = openKv();
