// The one-line message a person reads in the CLI's text output and an editor's problem list
// (under about 120 characters: what is wrong with the values found, and the fix), next to the
// finding's long `message`, which stays the explanation (PR comments, SARIF, JSON, `hcp-bot
// explain`). Each rule writes its own next to its logic (`summary` in reportAt): a sentence cut
// out of the long message reads as a fragment, and names places the line's location already gives.

import type { Setting } from "../model/settings.ts";
import { repr } from "./report.ts";

export const SHORT_MESSAGE_MAX = 120;

/** `(recipe.py:14)`, `(recipe.py:25, via recipe x)`: places the location already says. */
const PLACES = /\s*\([^()]*:\d+(?::\d+)?(?:,[^()]*)?\)/g;

/** The message without the places written into it: two reports that differ only there are one finding. */
export function withoutPlaces(message: string): string {
  return message.replace(PLACES, "");
}

/**
 * The first spelling that fits on the line, longest (most specific) first; the last is the
 * compact one a rule writes for values that may be long (a per-layer list, a file's spelling).
 */
export function oneLine(...spellings: readonly [string, ...string[]]): string {
  return spellings.find((s) => s.length <= SHORT_MESSAGE_MAX) ?? spellings.at(-1)!;
}

/** `hierarchical_context_parallel_sizes` for `model.hierarchical_context_parallel_sizes`: the model group is the usual one. */
export function bare(key: string): string {
  return key.replace(/^model\./, "");
}

/** `'a2a+p2p'`, or the per-layer list: cp_comm_type as the user wrote it. */
export function typesText(types: { types: readonly string[]; perLayer: boolean }): string {
  return types.perLayer ? `[${types.types.map((t) => repr(t)).join(", ")}]` : repr(types.types[0] ?? "");
}

/** The setting's value as Python writes it, or `unknown`. */
export function valueOfSetting(setting: Setting): string {
  return setting.value.known ? repr(setting.value.value) : "unknown";
}

/** "Transformer Engine 2.9.0", or "Transformer Engine (version not known)". */
export function teShort(te: { version: string } | undefined): string {
  return te ? `Transformer Engine ${te.version}` : "Transformer Engine (version not known)";
}
