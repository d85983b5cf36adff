// Integration point for the layout advisor's rank-layout picture (`hcp-bot advise`, being
// built in src/core/advise). When a finding's fix proposes hierarchical sizes, the page
// shows what this returns in a "Rank layout" section between the inline comments and the
// summary; undefined shows nothing. Until the advisor's picture lands, nothing is shown.
import type { PlaygroundReview } from "./review.ts";

/** Findings whose fix sets hierarchical_context_parallel_sizes: the ones a picture would explain. */
export function proposedSizes(review: PlaygroundReview): { ruleId: string; unitName: string; description: string }[] {
  return review.findings
    .filter((f) => f.fix?.description.includes("hierarchical_context_parallel_sizes"))
    .map((f) => ({ ruleId: f.ruleId, unitName: f.unitName, description: f.fix!.description }));
}

export function layoutPictureFor(review: PlaygroundReview): HTMLElement | undefined {
  if (proposedSizes(review).length === 0) return undefined;
  // The advisor's picture goes here (build it with DOM nodes and textContent, like page.ts).
  return undefined;
}
