// `/hcp smoke compare=p2p|a2a|none`: which reference layout runs after the HCP layout in the
// same job, and the Hydra overrides of that reference leg. Only the CP communication type
// (and the hierarchical sizes, which only a2a+p2p reads) differ between the two legs: the
// recipe, the CP degree, the world size, the seed, the batch and the iterations are the same
// overrides, so the two timings measure the CP communication and nothing else.
import * as z from "zod";

export const COMPARE_MODES = ["none", "p2p", "a2a"] as const;
export const CompareModeSchema = z.enum(COMPARE_MODES);
export type CompareMode = z.infer<typeof CompareModeSchema>;
/** A mode that runs a reference leg. */
export type ReferenceMode = Exclude<CompareMode, "none">;

const TYPE_KEY = "model.cp_comm_type";
const SIZES_KEY = "model.hierarchical_context_parallel_sizes";

function keyOf(override: string): string {
  const eq = override.indexOf("=");
  return (eq < 0 ? override : override.slice(0, eq)).replace(/^[+~]{1,2}/, "");
}

/**
 * The reference leg's overrides: the HCP leg's list with cp_comm_type set to the reference
 * type and the sizes to null, each in the place it had (so "the last one wins" stays true).
 */
export function referenceOverrides(hcpOverrides: readonly string[], mode: ReferenceMode): string[] {
  let typeSet = false;
  let sizesSet = false;
  const out = hcpOverrides.map((o) => {
    const key = keyOf(o);
    if (key === TYPE_KEY) {
      typeSet = true;
      return `${TYPE_KEY}=${mode}`;
    }
    if (key === SIZES_KEY) {
      sizesSet = true;
      return `${SIZES_KEY}=null`;
    }
    return o;
  });
  if (!typeSet) out.unshift(`${TYPE_KEY}=${mode}`);
  if (!sizesSet) out.splice(1, 0, `${SIZES_KEY}=null`);
  return out;
}

/** Words for a leg's layout in tables and summaries. */
export function legLabel(mode: ReferenceMode | "hcp"): string {
  return mode === "hcp" ? "a2a+p2p (HCP)" : mode;
}
