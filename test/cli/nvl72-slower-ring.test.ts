// Issue 27.5, the guarantee: on an NVL72 (72 GPUs in one NVLink domain) no fix `hcp-bot lint`
// proposes and no answer of `hcp-bot advise` puts more CP on the p2p ring, the level that
// crosses domains over the slower fabric, than the hardware needs.
//
// The recipes state their domain the way Bridge's perf recipes do (HEAD 067f987):
// `cfg.env_vars = {**COMMON_PERF_ENV_VARS, ..., "NVLINK_DOMAIN_SIZE": 72, ...}`
// (src/megatron/bridge/perf_recipes/gpt_oss/gb200/gpt_oss.py:55-78). Their names follow no
// hardware scheme and their folder names no GPU, so only env_vars can say 72; without it the
// 8-GPU default applies, and for CP 24 or 72 the 8-GPU answer ([8, 3], [8, 9]) is exactly the
// one that would push CP onto the slower ring of an NVL72.
//
// "Needed" is what Megatron-Core's placement allows (parallel_state.py create_hierarchical_groups
// at Bridge's pin 2a75ac1: an a2a group is a run of TP × a2a consecutive ranks, inside one
// domain only when TP × a2a divides the domain): the fewest p2p steps over every a2a size that
// divides CP and keeps TP × a2a dividing 72. All of CP inside one domain needs no p2p ring at
// all, and the advisor must then not choose a2a+p2p (Bridge's HCP guide: a hierarchy only where
// there is a bandwidth hierarchy).
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hcpBot } from "../support/cli.ts";

const DOMAIN = 72;
const TPS = [1, 2, 4, 8];
const CPS = [2, 3, 4, 6, 8, 9, 12, 16, 18, 24, 32, 36, 48, 64, 72, 96, 144];

interface Layout {
  tp: number;
  sizes: number[];
  domainGpus?: number;
}
interface LintJson {
  findings: { ruleId: string; unitName: string; message: string; fix?: { layout?: Layout } }[];
}

/** The fewest p2p steps a2a+p2p can have for TP × CP on 72-GPU domains, or undefined when no split keeps a2a inside. */
function neededP2p(tp: number, cp: number): number | undefined {
  let best: number | undefined;
  for (let a2a = 2; a2a < cp; a2a++) {
    if (cp % a2a !== 0 || DOMAIN % (tp * a2a) !== 0) continue;
    const p2p = cp / a2a;
    if (best === undefined || p2p < best) best = p2p;
  }
  return best;
}

function recipe(name: string, tp: number, cp: number, extra: string[], env: boolean): string {
  const body = [
    "cfg = _pretrain_common()",
    "cfg.model = GPTModelProvider()",
    `cfg.model.tensor_model_parallel_size = ${tp}`,
    `cfg.model.context_parallel_size = ${cp}`,
    'cfg.model.cp_comm_type = "a2a+p2p"',
    ...extra,
    ...(env ? ['cfg.env_vars = {**COMMON_PERF_ENV_VARS, "NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN": 4, "NVLINK_DOMAIN_SIZE": 72, "USE_MNNVL": 1}'] : []),
    "return cfg",
  ];
  return `def ${name}() -> ConfigContainer:\n${body.map((l) => `    ${l}`).join("\n")}\n`;
}

/** Every (TP, CP) three ways: no sizes (HCP001), sizes whose product is not CP (HCP002), and the 8-GPU answer (HCP018 on 72?). */
function cases(env: boolean): string {
  const out = ["from megatron.bridge.perf_recipes.environment import COMMON_PERF_ENV_VARS", ""];
  for (const tp of TPS) {
    for (const cp of CPS) {
      out.push(recipe(`fam_tp${tp}_cp${cp}_nosizes_config`, tp, cp, [], env));
      out.push(recipe(`fam_tp${tp}_cp${cp}_badproduct_config`, tp, cp, ["cfg.model.hierarchical_context_parallel_sizes = [2, 2]"], env));
      // [CP, 1]: one level only, too wide for 8 GPUs whenever CP > 8 (HCP003/HCP018 propose a split).
      out.push(recipe(`fam_tp${tp}_cp${cp}_onelevel_config`, tp, cp, [`cfg.model.hierarchical_context_parallel_sizes = [${cp}, 1]`], env));
    }
  }
  return out.join("\n");
}

function writeTree(env: boolean): string {
  const dir = join(mkdtempSync(join(tmpdir(), "hcp-nvl72-")), "team", "recipes");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "fam.py");
  writeFileSync(file, cases(env));
  return file;
}

async function lint(file: string): Promise<LintJson> {
  const r = await hcpBot(["lint", file, "--format", "json", "--isolated"]);
  expect(r.stderr).toBe("");
  return JSON.parse(r.stdout) as LintJson;
}

const caseOf = (unitName: string): { tp: number; cp: number } => {
  const m = /^fam_tp(\d+)_cp(\d+)_/.exec(unitName);
  expect(m).not.toBeNull();
  return { tp: Number(m![1]), cp: Number(m![2]) };
};

describe("NVL72 stated in env_vars: no proposed sizes put more CP on the slower ring than needed", () => {
  it("every sizes fix of every rule, over TP 1-8 and CP 2-144", async () => {
    const report = await lint(writeTree(true));
    const proposals = report.findings.filter((f) => f.fix?.layout);
    // The tree has something to fix in every TP, CP pair that has a valid split.
    expect(proposals.length).toBeGreaterThan(TPS.length * CPS.length);
    let checked = 0;
    for (const f of proposals) {
      const { tp, cp } = caseOf(f.unitName);
      const layout = f.fix!.layout!;
      const [a2a, p2p] = layout.sizes as [number, number];
      expect(layout.domainGpus, f.unitName).toBe(DOMAIN);
      expect(a2a * p2p, f.unitName).toBe(cp);
      expect(DOMAIN % (tp * a2a), `${f.ruleId} ${f.unitName}: TP ${tp} × a2a ${a2a} inside 72`).toBe(0);
      expect(p2p, `${f.ruleId} ${f.unitName}: [${a2a}, ${p2p}]`).toBe(neededP2p(tp, cp));
      checked++;
    }
    expect(checked).toBe(proposals.length);
    // And no HCP018 says an a2a level that divides 72 crosses a domain.
    for (const f of report.findings.filter((x) => x.ruleId === "HCP018")) {
      const { tp, cp } = caseOf(f.unitName);
      if (f.unitName.endsWith("_onelevel_config")) expect(DOMAIN % (tp * cp), f.message).not.toBe(0);
      expect(f.message).toContain('env_vars["NVLINK_DOMAIN_SIZE"] = 72');
    }
  });

  it("without env_vars the 8-GPU default gives the answers that would be wrong on an NVL72 (the test can fail)", async () => {
    const report = await lint(writeTree(false));
    const sizesOf = (unit: string) => report.findings.find((f) => f.unitName === unit && f.fix?.layout)?.fix?.layout?.sizes;
    expect(sizesOf("fam_tp1_cp24_nosizes_config")).toEqual([8, 3]);
    expect(sizesOf("fam_tp1_cp72_nosizes_config")).toEqual([8, 9]);
    expect(neededP2p(1, 24)).toBe(2);
    expect(neededP2p(1, 72)).toBe(2);
  });
});

describe("hcp-bot advise on a recipe that states NVLINK_DOMAIN_SIZE 72", () => {
  const ADVISED: Array<[number, number]> = [
    [1, 24],
    [1, 72],
    [1, 144],
    [2, 36],
    [2, 48],
    [4, 18],
    [4, 32],
    [8, 16],
  ];
  it.each(ADVISED)("TP %i, CP %i: all of CP inside one domain is never a2a+p2p; otherwise the fewest p2p steps", async (tp, cp) => {
    const file = writeTree(true);
    const r = await hcpBot(["advise", `${file}::fam_tp${tp}_cp${cp}_nosizes_config`, "--format", "json"]);
    expect(r.stderr).toBe("");
    const out = JSON.parse(r.stdout) as { input: { domainGpus: number }; recommendation: { cpCommType: string; sizes?: number[] } };
    expect(out.input.domainGpus).toBe(DOMAIN);
    if (tp * cp <= DOMAIN) {
      expect(out.recommendation.cpCommType).not.toBe("a2a+p2p");
    } else if (out.recommendation.cpCommType === "a2a+p2p") {
      expect(out.recommendation.sizes![1]).toBe(neededP2p(tp, cp));
    } else {
      expect(neededP2p(tp, cp)).toBeUndefined();
    }
  });
});
