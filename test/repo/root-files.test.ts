// The repository's root: the documents every open-source project carries, nothing stray, and the
// reference notes in docs/ that the code, tests and README cite (each cited file and section exists;
// a quoted "docs/x.md" is a path in a test's fake repository, not a citation).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

// sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt, the standard text.
const APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30";

const TOP_LEVEL = [
  ".ci", ".dockerignore", ".github", ".gitignore", ".npmrc", ".pre-commit-hooks.yaml",
  "CHANGELOG.md", "CONTRIBUTING.md", "Dockerfile", "LICENSE", "README.md", "SECURITY.md",
  "action.yml", "app.yml", "bench", "bin", "data", "deno.json", "deploy", "docs", "fixtures",
  "package-lock.json", "package.json", "packages", "scripts", "slack-manifest.yml", "src", "templates", "test",
  "tsconfig.build.json", "tsconfig.json", "vitest.config.ts", "wrangler.toml",
];

function trackedTopLevel(): string[] {
  const git = spawnSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" });
  if (git.status !== 0) throw new Error(`git ls-files failed (a git checkout is needed): ${git.stderr}`);
  return [...new Set(git.stdout.split("\0").filter(Boolean).map((p) => p.split("/")[0]!))].sort();
}

/** Every text file under `dir` (relative to the root), recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(?:ts|mts|mjs|js|yml|yaml|md)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name).slice(ROOT.length + 1));
}

const CITING = [...["src", "test", "scripts", "bench", "templates"].flatMap(filesUnder), "README.md"];

describe("the repository root", () => {
  it("holds the standard Apache-2.0 LICENSE that package.json declares", () => {
    expect(JSON.parse(read("package.json")).license).toBe("Apache-2.0");
    const license = read("LICENSE");
    expect(license).toContain("Apache License\n                           Version 2.0, January 2004");
    expect(createHash("sha256").update(license).digest("hex")).toBe(APACHE_2_SHA256);
  });

  it("holds CHANGELOG.md, CONTRIBUTING.md and SECURITY.md with what they promise", () => {
    expect(read("CHANGELOG.md")).toMatch(/^## \[Unreleased\]$/m);
    const contributing = read("CONTRIBUTING.md");
    for (const s of ["npm ci && npm test", "redis-server", "chromium", "Node 22 or 24", "npm run test:stress", "src/core/rules/index.ts"]) expect(contributing).toContain(s);
    const security = read("SECURITY.md");
    expect(security).toMatch(/private vulnerability reporting/i);
    expect(security).toContain("(docs/security-model.md)");
  });

  it("tracks only the expected top-level entries (no stray scratch or mis-redirected files)", () => {
    expect(trackedTopLevel().filter((e) => !TOP_LEVEL.includes(e))).toEqual([]);
    for (const e of ["LICENSE", "CHANGELOG.md", "CONTRIBUTING.md", "SECURITY.md"]) expect(trackedTopLevel()).toContain(e);
  });

  it("has issue forms for bugs and wrong findings, and no blank issues", () => {
    const Form = z.object({
      name: z.string().min(1),
      description: z.string().min(1),
      body: z.array(z.object({ type: z.enum(["markdown", "input", "textarea", "dropdown", "checkboxes"]), id: z.string().optional(), attributes: z.record(z.string(), z.unknown()) })).min(1),
    });
    for (const file of ["bug_report.yml", "false_positive.yml"]) {
      const form = Form.parse(parseYaml(read(`.github/ISSUE_TEMPLATE/${file}`)));
      const ids = form.body.filter((b) => b.type !== "markdown").map((b) => b.id);
      expect(ids.every((id) => id !== undefined), file).toBe(true);
      expect(new Set(ids).size, `${file}: ids unique`).toBe(ids.length);
    }
    expect(parseYaml(read(".github/ISSUE_TEMPLATE/config.yml"))).toMatchObject({ blank_issues_enabled: false });
  });
});

describe("documents cited by the code, tests and README", () => {
  const cited = new Map<string, Set<string>>();
  for (const file of CITING) {
    for (const m of read(file).matchAll(/(?<!["'`\/\w])docs\/([\w-]+\.md)(?: (\d+(?:\.\d+)?|[A-I])\b)?/g)) {
      const sections = cited.get(m[1]!) ?? new Set<string>();
      if (m[2] !== undefined) sections.add(m[2]);
      cited.set(m[1]!, sections);
    }
  }

  it("cites the four reference notes", () => {
    expect([...cited.keys()].sort()).toEqual(expect.arrayContaining(["domain.md", "edge-notes.md", "security-model.md", "stack.md"]));
  });

  it("cites only files that exist, and sections that are headings in them", () => {
    for (const [doc, sections] of cited) {
      expect(existsSync(join(ROOT, "docs", doc)), `docs/${doc}`).toBe(true);
      const headings = read(`docs/${doc}`).split("\n").filter((l) => l.startsWith("#"));
      for (const s of sections) {
        const n = s.replace(/\.$/, "");
        expect(headings.some((h) => new RegExp(`^#+ ${n.replace(".", "\\.")}[. ]`).test(h)), `docs/${doc} section ${n}`).toBe(true);
      }
    }
  });

  it("no longer cites documents the repository does not hold", () => {
    const stale = CITING.filter((f) => f !== "test/repo/root-files.test.ts").filter((f) => /\b(?:STACK\.md|EDGE\.md|HCP-RULES)|(?<!\w)SECURITY\.md H\b/.test(read(f)));
    expect(stale).toEqual([]);
  });

  it("keeps the check ids the code cites (B6, M8, T1, SMOKE1) in docs/domain.md", () => {
    const domain = read("docs/domain.md");
    for (const id of ["B6", "B7", "B11", "M4", "M8", "T1", "T2", "T10", "T12", "SMOKE1", "SMOKE2"]) expect(domain).toMatch(new RegExp(`^\\| ${id} \\|`, "m"));
  });
});
