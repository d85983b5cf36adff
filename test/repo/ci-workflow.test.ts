// .github/workflows/ci.yml, this repository's own CI, parsed with `yaml` and checked against what
// the project promises: Node 22 and 24, Debian's redis-server and chromium, `npm ci && npm test`,
// a read-only token and every action pinned by commit SHA. Each check is also run on a broken
// copy of the file, so a check that cannot fail would show.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const CI = readFileSync(join(ROOT, ".github", "workflows", "ci.yml"), "utf8");
const TEMPLATE = readFileSync(join(ROOT, "templates", "hcp-smoke.yml"), "utf8");

const Step = z.object({ name: z.string().optional(), uses: z.string().optional(), run: z.string().optional() });
const Job = z.object({
  "runs-on": z.string(),
  permissions: z.unknown().optional(),
  strategy: z.object({ matrix: z.object({ node: z.array(z.number()) }) }).optional(),
  steps: z.array(Step),
});
const Workflow = z.object({
  on: z.union([z.array(z.string()), z.record(z.string(), z.unknown())]),
  permissions: z.unknown(),
  jobs: z.record(z.string(), Job),
});
type Workflow = z.infer<typeof Workflow>;

const PINNED = /^[\w.-]+\/[\w.-]+(?:\/[\w./-]+)?@[0-9a-f]{40}$/;

/** `owner/name` → the commit SHA every `uses:` of `text` pins it to. */
function pinsOf(text: string): Map<string, string> {
  const pins = new Map<string, string>();
  for (const m of text.matchAll(/uses:\s*([\w.-]+\/[\w.-]+)@([0-9a-f]{40})/g)) pins.set(m[1]!, m[2]!);
  return pins;
}

/** What is wrong with a CI workflow's text; empty when nothing is. */
function problems(text: string): string[] {
  const parsed = Workflow.safeParse(parseYaml(text));
  if (!parsed.success) return [`not a workflow of the expected shape: ${z.prettifyError(parsed.error)}`];
  const wf: Workflow = parsed.data;
  const out: string[] = [];
  const triggers = Array.isArray(wf.on) ? wf.on : Object.keys(wf.on);
  for (const t of ["push", "pull_request"]) if (!triggers.includes(t)) out.push(`not run on ${t}`);
  if (JSON.stringify(wf.permissions) !== JSON.stringify({ contents: "read" })) out.push(`top-level permissions ${JSON.stringify(wf.permissions)}, not { contents: read }`);
  for (const [id, job] of Object.entries(wf.jobs)) {
    if (job.permissions !== undefined) out.push(`job ${id} sets its own permissions`);
    for (const step of job.steps) if (step.uses !== undefined && !PINNED.test(step.uses)) out.push(`${step.uses} is not pinned by a 40-hex commit SHA`);
  }
  for (const line of text.split("\n").filter((l) => /^\s*(?:-\s*)?uses:/.test(l))) {
    if (!/#\s*v\d+(?:\.\d+)*\s*$/.test(line)) out.push(`no version comment beside: ${line.trim()}`);
  }
  const tests = Object.entries(wf.jobs).filter(([, job]) => job.steps.some((s) => s.run?.trim() === "npm test"));
  if (tests.length === 0) out.push("no job runs `npm test`");
  for (const [id, job] of tests) out.push(...testJobProblems(id, job));
  return out;
}

function testJobProblems(id: string, job: z.infer<typeof Job>): string[] {
  const out: string[] = [];
  const nodes = [...(job.strategy?.matrix.node ?? [])].sort((a, b) => a - b);
  if (JSON.stringify(nodes) !== JSON.stringify([22, 24])) out.push(`job ${id}: Node matrix ${JSON.stringify(nodes)}, not exactly [22, 24]`);
  const runs = job.steps.map((s) => s.run?.trim() ?? "");
  const ci = runs.indexOf("npm ci");
  const test = runs.indexOf("npm test");
  if (ci < 0 || ci > test) out.push(`job ${id}: \`npm ci\` does not run before \`npm test\``);
  const installs = runs.slice(0, test).filter((r) => /apt-get\s+install/.test(r)).join("\n");
  for (const pkg of ["redis-server", "chromium"]) {
    if (!new RegExp(`(?:^|\\s)${pkg}(?:\\s|$)`).test(installs)) out.push(`job ${id}: ${pkg} is not installed with apt-get before the tests`);
  }
  const setup = job.steps.find((s) => s.uses?.startsWith("actions/setup-node@"));
  if (setup === undefined) out.push(`job ${id}: no actions/setup-node step`);
  return out;
}

describe(".github/workflows/ci.yml", () => {
  it("runs npm ci && npm test on Node 22 and 24 with redis-server and chromium, read-only, every action pinned", () => {
    expect(problems(CI)).toEqual([]);
  });

  it("uses the commits of actions/checkout and actions/setup-node the smoke template pins", () => {
    const ours = pinsOf(CI);
    const template = pinsOf(TEMPLATE);
    for (const action of ["actions/checkout", "actions/setup-node"]) {
      expect(template.get(action), `${action} in templates/hcp-smoke.yml`).toMatch(/^[0-9a-f]{40}$/);
      expect(ours.get(action), action).toBe(template.get(action));
    }
    expect(CI).toMatch(/node-version:\s*\$\{\{\s*matrix\.node\s*\}\}/);
  });

  it.each([
    ["a tag pin", (s: string) => s.replace(/actions\/checkout@[0-9a-f]{40}/, "actions/checkout@v6"), "not pinned"],
    ["a short SHA", (s: string) => s.replace(/(actions\/setup-node@)([0-9a-f]{40})/, (_m, a: string, sha: string) => a + sha.slice(0, 12)), "not pinned"],
    ["no version comment", (s: string) => s.replace(/(actions\/checkout@[0-9a-f]{40}) # v[\d.]+/, "$1"), "no version comment"],
    ["Node 20 in the matrix", (s: string) => s.replace(/node: \[22, 24\]/, "node: [20, 22, 24]"), "not exactly [22, 24]"],
    ["only Node 24", (s: string) => s.replace(/node: \[22, 24\]/, "node: [24]"), "not exactly [22, 24]"],
    ["a write token", (s: string) => s.replace(/permissions:\n  contents: read/, "permissions:\n  contents: write"), "permissions"],
    ["no redis-server", (s: string) => s.replace(/python3 redis-server/, "python3"), "redis-server is not installed"],
    ["no chromium", (s: string) => s.replace(/ chromium\n/, "\n"), "chromium is not installed"],
    ["npm install instead of npm ci", (s: string) => s.replace(/run: npm ci/, "run: npm install"), "`npm ci` does not run"],
    ["no npm test", (s: string) => s.replace(/run: npm test/, "run: npx vitest run test/repo"), "no job runs `npm test`"],
    ["no pull_request trigger", (s: string) => s.replace(/  pull_request:\n/, ""), "not run on pull_request"],
  ])("catches %s", (_name, mutate, expected) => {
    const broken = mutate(CI);
    expect(broken).not.toBe(CI);
    expect(problems(broken).join("\n")).toContain(expected);
  });
});
