// HCP100: a suppression comment that suppresses nothing (ruff's RUF100). Its findings come from
// the suppression pass (suppress.ts), which reads files, not configuration units, so `check`
// reports nothing; the module gives the rule its id, grade and doc for `rules`, `explain`,
// SARIF and --select/--ignore.
import { defineRule } from "./report.ts";

export const UNUSED_SUPPRESSION_ID = "HCP100";

export const rule = defineRule({
  id: UNUSED_SUPPRESSION_ID,
  name: "unused-suppression",
  severity: "warning",
  summary: "a suppression comment that suppresses no finding",
  doc: {
    checks:
      "A `# noqa: HCPnnn` on a line, or a `# hcp-bot: ignore[HCPnnn] reason` on the line before it, that names a rule " +
      "with no finding on that line (also a rule id that does not exist, or a rule that is not enabled). A bare `# noqa` " +
      "is never reported: other Python linters read it too.",
    why:
      "A suppression outlives the mistake it hid: once the recipe is fixed, a stale `# noqa: HCP001` would silently hide " +
      "the next real HCP001 on that line (a2a+p2p without sizes runs without context parallelism, Bridge issue #2667).",
    example: 'cfg.model.cp_comm_type = "p2p"  # noqa: HCP001',
    fix: "Remove the comment, or the rule ids in it that match nothing (`hcp-bot lint --fix` does it).",
  },
  check: () => [],
});
