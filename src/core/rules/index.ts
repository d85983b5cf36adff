// Every rule, sorted by id. Rule modules are pure; the engine runs them.
import type { Rule } from "../model/finding.ts";
import { rule as hcp001 } from "./hcp001-a2a-p2p-without-sizes.ts";
import { rule as hcp002 } from "./hcp002-sizes-product-mismatch.ts";
import { rule as hcp003 } from "./hcp003-sizes-not-two-levels.ts";
import { rule as hcp004 } from "./hcp004-sizes-invalid-values.ts";
import { rule as hcp005 } from "./hcp005-sizes-without-a2a-p2p.ts";
import { rule as hcp006 } from "./hcp006-hcp-with-decentralized-pg.ts";
import { rule as hcp007 } from "./hcp007-seq-length-not-divisible.ts";
import { rule as hcp008 } from "./hcp008-seq-length-mismatch.ts";
import { rule as hcp009 } from "./hcp009-a2a-heads-not-divisible.ts";
import { rule as hcp010 } from "./hcp010-hcp-with-thd.ts";
import { rule as hcp011 } from "./hcp011-hcp-unsupported-attention.ts";
import { rule as hcp012 } from "./hcp012-cp-comm-type-length.ts";
import { rule as hcp013 } from "./hcp013-invalid-cp-comm-type.ts";
import { rule as hcp014 } from "./hcp014-a2a-p2p-te-too-old.ts";
import { rule as hcp016 } from "./hcp016-cp-requires-transformer-engine.ts";
import { rule as hcp017 } from "./hcp017-world-size-not-divisible.ts";
import { rule as hcp018 } from "./hcp018-a2a-spans-nodes.ts";
import { rule as hcp020 } from "./hcp020-a2a-p2p-with-cp1.ts";
import { rule as hcp021 } from "./hcp021-hybrid-cp-confusion.ts";
import { rule as hcp022 } from "./hcp022-sft-cp-loss-settings.ts";
import { rule as hcp023 } from "./hcp023-eval-cp-with-hcp.ts";
import { rule as hcp024 } from "./hcp024-inexact-number.ts";
import { rule as hcp025 } from "./hcp025-mla-cp-comm-type.ts";
import { rule as hcp100 } from "./hcp100-unused-suppression.ts";

// Ids are ASCII ("HCP001"): code-unit order is their order. Not localeCompare: its first
// call builds an ICU collator, 30-60 ms of every CLI start (bench:cli).
function byId(a: Rule, b: Rule): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export const ALL_RULES: readonly Rule[] = [
  hcp001,
  hcp002,
  hcp003,
  hcp004,
  hcp005,
  hcp006,
  hcp007,
  hcp008,
  hcp009,
  hcp010,
  hcp011,
  hcp012,
  hcp013,
  hcp014,
  hcp016,
  hcp017,
  hcp018,
  hcp020,
  hcp021,
  hcp022,
  hcp023,
  hcp024,
  hcp025,
  hcp100,
].sort(byId);

const BY_ID = new Map(ALL_RULES.map((r) => [r.id, r]));

/** The rule with this id (case-insensitive), or undefined. */
export function ruleById(id: string): Rule | undefined {
  return BY_ID.get(id.toUpperCase());
}
