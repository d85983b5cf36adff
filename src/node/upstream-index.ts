// hcp-bot's index of upstream recipes (data/megatron-bridge-recipes.json, written by
// `npm run index:bridge`), read by the Node hosts: the CLI when no Bridge of the user's own is
// found, the server's reviews. HCP_BRIDGE_INDEX names another index (one generated from the
// Bridge a team runs); the package's own is the default.
import { readFileSync } from "node:fs";
import { parseBridgeIndex, type UpstreamRecipes } from "../core/analyze/bridge-index.ts";
import { shapeRecord } from "./index-check-cache.ts";
import { packageFile } from "./package-files.ts";

export const SHIPPED_INDEX = "data/megatron-bridge-recipes.json";

export type IndexLoad = UpstreamRecipes | { error: string };

/** The index file this process reads. */
export function upstreamIndexPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.HCP_BRIDGE_INDEX || packageFile(SHIPPED_INDEX);
}

/** The index, why there is none (a missing file), or a sentence saying why it cannot be used. */
export function loadUpstreamIndex(env: NodeJS.ProcessEnv = process.env): IndexLoad {
  const path = upstreamIndexPath(env);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A configured index that is not there is a mistake; the package without its own is only poorer.
    if (env.HCP_BRIDGE_INDEX) return { error: `cannot read the index of upstream recipes ${path} (HCP_BRIDGE_INDEX): ${code ?? String(error)}` };
    return { unavailable: `this hcp-bot has no index of upstream recipes (${path} ${code === "ENOENT" ? "is missing" : `cannot be read: ${code}`})` };
  }
  const record = shapeRecord(text, env);
  const parsed = parseBridgeIndex(text, { shapeChecked: record.checked });
  if ("error" in parsed) return { error: `cannot use the index of upstream recipes ${path}: ${parsed.error}` };
  if (!record.checked) record.remember();
  return parsed;
}

let cached: UpstreamRecipes | undefined;

/**
 * The server's index, read once per process (the file does not change under it). One that
 * cannot be used is logged once and leaves the bases unknown, the reason in their info line:
 * a review of other files must not fail for it.
 */
export function serverUpstreamIndex(warn: (message: string) => void = (m) => process.stderr.write(`hcp-bot: ${m}\n`)): UpstreamRecipes {
  if (cached) return cached;
  const loaded = loadUpstreamIndex();
  if ("error" in loaded) warn(loaded.error);
  return (cached = "error" in loaded ? { unavailable: loaded.error } : loaded);
}
