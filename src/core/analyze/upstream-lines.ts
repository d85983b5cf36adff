// The one info line a script built on a recipe of another module gets: which Bridge version
// its upstream base was read from (hcp-bot's index), or why that base stays unknown. Never
// nothing: a script judged only on what it sets itself must say so.
import type { ConfigUnit } from "../model/settings.ts";
import type { Diagnostic } from "../recipe/types.ts";
import { bridgeLabel, indexedRecipe, type UpstreamRecipes } from "./bridge-index.ts";

const WHERE_LINT_LOOKS =
  "hcp-bot lint reads upstream recipes from the megatron.bridge package of the active Python environment (VIRTUAL_ENV, PYTHONPATH, python3) or from MEGATRON_BRIDGE_DIR";

/** `judged[i]` is `units[i]` composed; `fromIndex` holds the units whose base came from the index. */
export function upstreamBaseLines(judged: readonly ConfigUnit[], units: readonly ConfigUnit[], fromIndex: ReadonlySet<ConfigUnit>, upstream: UpstreamRecipes | undefined): Diagnostic[] {
  const out: Diagnostic[] = [];
  judged.forEach((u, i) => {
    const original = units[i]!;
    if (u.kind !== "recipe" || !u.baseRecipe) return;
    const line = (code: Diagnostic["code"], message: string): void => {
      out.push({ file: u.location.file, severity: "info", code, message, location: u.location });
    };
    if (fromIndex.has(original) && upstream && "index" in upstream) {
      const hit = indexedRecipe(upstream.index, original.upstreamBase!.name);
      const shown = hit && hit.name !== u.baseRecipe ? `${u.baseRecipe}() (${hit.name})` : `${u.baseRecipe}()`;
      line(
        "base-from-index",
        `${u.name} starts from ${shown}, judged with its settings in ${bridgeLabel(upstream.index)} from hcp-bot's index of upstream recipes; the Bridge you run may set other values: ${WHERE_LINT_LOOKS} before the index`,
      );
      return;
    }
    if (u.complete) return;
    line("base-unknown", `${u.name} starts from ${u.baseRecipe}(), which was not analyzed${whyUnknown(original, upstream)}: what it sets is unknown, and rules that need those settings stay silent. ${WHERE_LINT_LOOKS}`);
  });
  return out;
}

function whyUnknown(u: ConfigUnit, upstream: UpstreamRecipes | undefined): string {
  const call = u.upstreamBase;
  if (!call || !upstream) return "";
  if ("unavailable" in upstream) return ` (${upstream.unavailable})`;
  if (!call.plainCall) return ` (it is called with arguments, and hcp-bot's index of ${bridgeLabel(upstream.index)} describes each recipe called without any)`;
  return indexedRecipe(upstream.index, call.name) ? "" : ` (hcp-bot's index of ${bridgeLabel(upstream.index)} has no recipe ${call.name})`;
}
