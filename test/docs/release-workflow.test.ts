// .github/workflows/release.yml, the release path the README promises: a tag vX.Y.Z equal to
// package.json's version, the suite, `npm publish --provenance` with an OIDC token, and the
// Action's major tag moved. The tag check and the major-tag step are run as bash runs them.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const TEXT = readFileSync(join(ROOT, ".github", "workflows", "release.yml"), "utf8");

const Step = z.object({ name: z.string(), uses: z.string().optional(), run: z.string().optional(), env: z.record(z.string(), z.string()).optional() });
const Workflow = z.object({
  on: z.object({ push: z.object({ tags: z.array(z.string()) }) }),
  permissions: z.object({ contents: z.literal("read") }),
  jobs: z.record(z.string(), z.object({ needs: z.string().optional(), permissions: z.record(z.string(), z.string()).optional(), steps: z.array(Step) })),
});
const wf = Workflow.parse(parseYaml(TEXT));
const steps = Object.values(wf.jobs).flatMap((j) => j.steps);
const step = (name: RegExp) => {
  const s = steps.find((x) => name.test(x.name));
  if (!s?.run) throw new Error(`release.yml has no step ${name} with a script`);
  return s;
};

/** Runs a step's script under bash in `cwd` with its env plus `env`, as the runner does. */
function runStep(script: string, cwd: string, env: Record<string, string>) {
  return spawnSync("bash", ["-eo", "pipefail", "-c", script], { cwd, encoding: "utf8", env: { PATH: process.env.PATH ?? "", ...env } });
}

describe("the release workflow", () => {
  it("runs on version tags only, with a read-only token by default", () => {
    expect(wf.on.push.tags).toEqual(["v[0-9]+.[0-9]+.[0-9]+"]);
    expect(TEXT).not.toMatch(/^\s*(?:pull_request|workflow_dispatch):/m);
  });

  it("publishes with provenance only after the tests pass, with an OIDC token", () => {
    const publish = Object.values(wf.jobs).find((j) => j.steps.some((s) => s.run?.includes("npm publish")))!;
    expect(publish.steps.find((s) => s.run?.includes("npm publish"))!.run).toMatch(/npm publish --provenance\b/);
    expect(publish.permissions).toMatchObject({ "id-token": "write", contents: "write" });
    expect(publish.needs).toBe("test");
    expect(wf.jobs.test!.steps.some((s) => s.run?.trim() === "npm test")).toBe(true);
  });

  it("pins every action by commit SHA with its release beside it", () => {
    const uses = TEXT.split("\n").filter((l) => /^\s*(?:-\s*)?uses:/.test(l));
    expect(uses.length).toBeGreaterThan(0);
    for (const line of uses) expect(line).toMatch(/uses: [\w.-]+\/[\w.-]+@[0-9a-f]{40} # v\d+(?:\.\d+)*$/);
  });

  it("refuses a tag that is not package.json's version", () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-release-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "hcp-bot", version: "1.2.3" }));
    const check = step(/tag is the package's version/).run!;
    expect(runStep(check, dir, { TAG: "v1.2.3" }).status).toBe(0);
    const wrong = runStep(check, dir, { TAG: "v1.2.4" });
    expect(wrong.status).toBe(1);
    expect(wrong.stdout).toContain("tag v1.2.4 is not package.json's v1.2.3");
  });

  it("refuses to publish while package.json names another repository, or none (npm's provenance check)", () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-release-repo-"));
    const check = step(/names this repository/).run!;
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "hcp-bot", version: "1.2.3" }));
    const none = runStep(check, dir, { GITHUB_REPOSITORY: "acme/hcp-bot" });
    expect(none.status).toBe(1);
    expect(none.stdout).toContain('package.json repository.url is "", not https://github.com/acme/hcp-bot');
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "hcp-bot", version: "1.2.3", repository: { type: "git", url: "git+https://github.com/acme/hcp-bot.git" } }));
    expect(runStep(check, dir, { GITHUB_REPOSITORY: "acme/hcp-bot" }).status).toBe(0);
    expect(runStep(check, dir, { GITHUB_REPOSITORY: "other/hcp-bot" }).status).toBe(1);
  });

  it("publishes hcp-bot, then hcp-bot-server, and refuses a server package of another version or repository", () => {
    const publish = step(/^Publish$/).run!;
    expect(publish.indexOf("npm publish --provenance")).toBeLessThan(publish.indexOf("npm publish ./packages/server --provenance"));
    const dir = mkdtempSync(join(tmpdir(), "hcp-release-server-"));
    const repository = { type: "git", url: "git+https://github.com/acme/hcp-bot.git" };
    const write = (server: object) => {
      spawnSync("mkdir", ["-p", join(dir, "packages", "server")]);
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "hcp-bot", version: "1.2.3", repository }));
      writeFileSync(join(dir, "packages", "server", "package.json"), JSON.stringify(server));
    };
    const check = step(/server package carries the same version/).run!;
    write({ name: "hcp-bot-server", version: "1.2.3", repository, dependencies: { "hcp-bot": "1.2.3" } });
    expect(runStep(check, dir, {}).status).toBe(0);
    write({ name: "hcp-bot-server", version: "1.2.2", repository, dependencies: { "hcp-bot": "1.2.2" } });
    const stale = runStep(check, dir, {});
    expect(stale.status).toBe(1);
    expect(stale.stdout).toContain("packages/server is 1.2.2, not 1.2.3");
    expect(stale.stdout).toContain("packages/server depends on hcp-bot@1.2.2, not 1.2.3");
    write({ name: "hcp-bot-server", version: "1.2.3", dependencies: { "hcp-bot": "1.2.3" } });
    expect(runStep(check, dir, {}).stdout).toContain('packages/server repository.url is "", not "git+https://github.com/acme/hcp-bot.git"');
  });

  it("moves the major tag to the released commit", () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-release-git-"));
    const git = (...args: string[]) => spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: dir, encoding: "utf8" });
    git("init", "-q", "--bare", "origin.git");
    git("init", "-q", "work");
    const work = join(dir, "work");
    const inWork = (...args: string[]) => spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: work, encoding: "utf8" });
    inWork("remote", "add", "origin", join(dir, "origin.git"));
    inWork("commit", "-q", "--allow-empty", "-m", "0.9.0");
    const old = inWork("rev-parse", "HEAD").stdout.trim();
    inWork("tag", "v1", old);
    inWork("push", "-q", "origin", "refs/tags/v1");
    inWork("commit", "-q", "--allow-empty", "-m", "1.2.3");
    const released = inWork("rev-parse", "HEAD").stdout.trim();
    const move = runStep(step(/major tag/).run!, work, { TAG: "v1.2.3", GITHUB_SHA: released, HOME: dir, GIT_CONFIG_GLOBAL: "/dev/null" });
    expect(move.stderr).not.toMatch(/fatal|error/);
    expect(move.status).toBe(0);
    expect(spawnSync("git", ["rev-parse", "refs/tags/v1"], { cwd: join(dir, "origin.git"), encoding: "utf8" }).stdout.trim()).toBe(released);
  });
});
