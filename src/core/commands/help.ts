// `/hcp help`: one text for GitHub and Slack. It keeps to what renders the same in both
// (inline code, plain `-` bullets, no headings or bold), and is built from the grammar
// tables so it cannot drift from what the parser accepts.
import { SmokeConfigSchema, type SmokeConfig } from "../config/repo-config.ts";
import { allowedKeyList, keySpecHelp, LIMITS, RESERVED_KEYS, RESERVED_PREFIXES, VALUE_HELP } from "./grammar.ts";

export interface HelpOptions {
  surface?: "github" | "slack";
  /** The repo's smoke section; without it the built-in defaults are shown. */
  smoke?: SmokeConfig;
}

export function helpText(options: HelpOptions = {}): string {
  const smoke = options.smoke ?? SmokeConfigSchema.parse({});
  const slack = options.surface === "slack";
  const pr = slack ? " OWNER/REPO#PR" : "";
  const sizes = smoke.sizes ? smoke.sizes.join(",") : "none";
  const keys = allowedKeyList(smoke.allowed_keys).map((k) => {
    const allowed = keySpecHelp(k);
    return `- \`${k}\`${allowed ? `: ${allowed}` : " (allowed by this repository)"}`;
  });
  return [
    "hcp-bot commands (write them at the start of a line, outside code blocks and quotes):",
    "",
    `- \`/hcp smoke${pr} [recipe=NAME] [cp=N] [sizes=A,B] [iters=N] [gpus=N] [compare=p2p|a2a|none] [KEY=VALUE ...] [--dry-run]\`: run the ${smoke.gpus}-GPU HCP smoke test of \`scripts/training/run_recipe.py\` on the pull request's head commit. \`compare=p2p\` (or \`a2a\`) runs the same recipe again with that layout in the same job and compares throughput and loss (twice the GPU time). \`--dry-run\` shows the resolved command and its pre-flight check without using a GPU.`,
    `- \`/hcp cancel${pr}\`: cancel the pull request's running smoke test.`,
    `- \`/hcp status${pr}\`: show the pull request's smoke tests.`,
    slack
      ? "- `/hcp check LAUNCH LINE or KEY=VALUE ...`: check a launch line or overrides for HCP problems (nothing runs)."
      : "- `/hcp check [LAUNCH LINE or KEY=VALUE ...]`: check this pull request, or the given launch line or overrides, for HCP problems (nothing runs).",
    "- `/hcp advise cp=N [tp=N] [pp=N] [heads=H kv_heads=K] [gpus_per_node=G | nvlink_domain=G] [nodes=N]`: recommend cp_comm_type and hierarchical sizes, with the reasons, the rejected alternatives and which ranks form each TP group, a2a group and p2p ring (nothing runs).",
    "- `/hcp help`: this text.",
    "",
    `Defaults: recipe=${smoke.recipe} cp=${smoke.cp} sizes=${sizes} iters=${smoke.iters} gpus=${smoke.gpus} compare=${smoke.compare}, cp_comm_type a2a+p2p.`,
    `Limits: cp ${LIMITS.cp.min}-${LIMITS.cp.max}, gpus ${LIMITS.gpus.min}-${LIMITS.gpus.max} (a multiple of cp×tp×pp), iters ${LIMITS.iters.min}-${LIMITS.iters.max}, sizes two integers whose product is cp (sizes=none only with a cp_comm_type other than a2a+p2p). ${smoke.quotas.per_user_per_day} smoke runs per person per day, ${smoke.quotas.max_queued} queued at once (an A/B run counts twice); at most ${LIMITS.commandsPerComment} commands per comment.`,
    "",
    `KEY=VALUE overrides (VALUE is ${VALUE_HELP}):`,
    ...keys,
    "",
    `Set by the harness and not overridable: ${[...RESERVED_KEYS, ...RESERVED_PREFIXES.map((p) => `${p}*`)].map((k) => `\`${k}\``).join(", ")}.`,
    slack ? "" : "Who may run smoke tests, the defaults and extra keys come from `.github/hcp-bot.yml` on the default branch.",
  ]
    .join("\n")
    .trimEnd();
}
