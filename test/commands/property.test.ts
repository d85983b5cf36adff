// Properties of the grammar on arbitrary input: the parsers never throw, and whatever
// they accept is inside the value grammar (so it cannot carry shell syntax to a runner).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  KEY_GRAMMAR,
  LIMITS,
  VALUE_GRAMMAR,
  parseCommentCommands,
  parseSlackCommand,
  resolveSmokeRequest,
  type Command,
  type Override,
} from "../../src/core/commands/index.ts";
import { SmokeConfigSchema } from "../../src/core/config/repo-config.ts";

const DEFAULTS = SmokeConfigSchema.parse({ allowed_keys: ["model.recompute_granularity"] });

/** Words that look like the grammar, mixed with hostile pieces, so both paths get exercised. */
const word = fc.oneof(
  fc.constantFrom(
    "cp=4", "cp=8", "sizes=2,2", "sizes=[4,2]", "sizes=none", "gpus=8", "iters=3", "recipe=llama3_8b_pretrain_config", "--dry-run",
    "model.cp_comm_type=a2a+p2p", "model.cp_comm_type=p2p", "model.tensor_model_parallel_size=2", "model.sequence_parallel=true",
    "model.hierarchical_context_parallel_sizes=[2,2]", "model.recompute_granularity=full", "train.train_iters=9", "checkpoint.load=x",
    "o/r#1", "$(id)", "`id`", ";", "|", "&&", ">x", "'", '"', "\\", "\u200b", "\uff14", "<!--", "-->", "```", "~~~", ">", "\t", "    ",
  ),
  fc.string({ maxLength: 12 }),
  fc.tuple(fc.constantFrom("model.cp_comm_type=", "model.num_layers=", "train.micro_batch_size=", "model.recompute_granularity="), fc.string({ maxLength: 10 })).map(([k, v]) => k + v),
);
const line = fc.array(word, { maxLength: 12 }).map((ws) => ws.join(" "));
const prefix = fc.constantFrom("/hcp smoke ", "/hcp check ", "/hcp ", "/hcp status ", "> /hcp smoke ", "   /hcp smoke ", "", "```\n", "<!-- ");
const comment = fc.array(fc.tuple(prefix, line).map(([p, l]) => p + l), { maxLength: 8 }).map((ls) => ls.join("\n"));

function overridesOf(command: Command): Override[] {
  if (command.kind === "smoke") return command.overrides;
  if (command.kind === "check" && command.input.form === "overrides") return command.input.overrides;
  return [];
}

describe("grammar properties", () => {
  it("parseCommentCommands never throws, and every accepted override matches the grammar", () => {
    fc.assert(
      fc.property(fc.oneof(comment, fc.string({ maxLength: 300 })), (body) => {
        const parsed = parseCommentCommands(body, { allowedKeys: DEFAULTS.allowed_keys });
        expect(parsed.length).toBeLessThanOrEqual(LIMITS.commandsPerComment + 1);
        for (const p of parsed) {
          if (!p.ok) {
            expect(p.error.length).toBeGreaterThan(0);
            continue;
          }
          for (const o of overridesOf(p.command)) {
            expect(o.key).toMatch(KEY_GRAMMAR);
            expect(o.text).toMatch(VALUE_GRAMMAR);
            expect(o.text.length).toBeLessThanOrEqual(LIMITS.valueChars);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("parseSlackCommand never throws", () => {
    fc.assert(
      fc.property(fc.oneof(line, fc.string({ maxLength: 300 })), fc.constantFrom("", "smoke o/r#1 ", "check ", "status "), (text, head) => {
        const p = parseSlackCommand(head + text);
        if (p.ok) for (const o of overridesOf(p.command)) expect(o.text).toMatch(VALUE_GRAMMAR);
      }),
      { numRuns: 2000 },
    );
  });

  it("an accepted smoke command resolves to a plan or a reason, and every plan word is shell-safe", () => {
    fc.assert(
      fc.property(line, (l) => {
        const [p] = parseCommentCommands(`/hcp smoke ${l}`, { allowedKeys: DEFAULTS.allowed_keys });
        if (!p?.ok || p.command.kind !== "smoke") return;
        const r = resolveSmokeRequest(p.command, DEFAULTS);
        if (!r.ok) {
          expect(r.error.length).toBeGreaterThan(0);
          return;
        }
        for (const arg of r.plan.argv) expect(arg).toMatch(/^[A-Za-z0-9_.+\-=/,[\]]+$/);
        expect(r.plan.launchLine()).not.toMatch(/[$`;|&<>'\\\n]/);
      }),
      { numRuns: 2000 },
    );
  });
});
