// The edge's `octokit.rest` is built from src/github/rest.ts instead of the whole
// @octokit/plugin-rest-endpoint-methods table. Each route must be the plugin's own, each
// method must build the very request the plugin's does, and paginate must take them.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Octokit } from "@octokit/core";
import { paginateRest } from "@octokit/plugin-paginate-rest";
import { restEndpointMethods } from "@octokit/plugin-rest-endpoint-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REST_ROUTES, restFromTable } from "../../src/github/rest.ts";
import { OWNER, REPO, seededFake } from "../support/fake-github/testkit.ts";
import type { FakeGitHub } from "../support/fake-github/server.ts";

type Method = { endpoint: ((params: object) => object) & { DEFAULTS: { method: string; url: string } } };
const table = Object.entries(REST_ROUTES).flatMap(([scope, methods]) => Object.entries(methods).map(([name, route]) => ({ id: `${scope}.${name}`, scope, name, route: route as string })));
const plugin = new (Octokit.plugin(restEndpointMethods))({ baseUrl: "https://ghe.example/api/v3" }).rest as unknown as Record<string, Record<string, Method>>;
const slim = new (Octokit.plugin(restFromTable))({ baseUrl: "https://ghe.example/api/v3" }).rest as unknown as Record<string, Record<string, Method>>;

/** Parameters for a route: each placeholder filled, plus a query or body field. */
function paramsFor(route: string): Record<string, unknown> {
  const params: Record<string, unknown> = { per_page: 100, name: "hcp" };
  for (const [, key] of route.matchAll(/\{(\w+)\}/g)) params[key!] = key === "archive_format" ? "zip" : `${key}-1`;
  return params;
}

describe("REST_ROUTES", () => {
  it.each(table.map((t) => [t.id, t] as const))("%s is the plugin's route and builds the plugin's request", (_, { scope, name, route }) => {
    const real = plugin[scope]?.[name];
    expect(real, `${scope}.${name} is a plugin method`).toBeDefined();
    expect(`${real!.endpoint.DEFAULTS.method} ${real!.endpoint.DEFAULTS.url}`).toBe(route);
    const params = paramsFor(route);
    // As JSON: the request options hold each instance's own hook functions.
    const request = (m: Method) => JSON.parse(JSON.stringify(m.endpoint(params)));
    expect(request(slim[scope]![name]!)).toEqual(request(real!));
  });

  it("lists every endpoint src/ calls as octokit.rest.<scope>.<method>", () => {
    const used = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith(".ts")) for (const [, scope, name] of readFileSync(path, "utf8").matchAll(/\.rest\.(\w+)\.(\w+)/g)) used.add(`${scope}.${name}`);
      }
    };
    walk(join(import.meta.dirname, "..", "..", "src"));
    expect(used.size).toBeGreaterThan(10);
    const listed = new Set(table.map((t) => t.id));
    expect([...used].filter((u) => !listed.has(u))).toEqual([]);
  });
});

describe("restFromTable against the fake GitHub", () => {
  let fake: FakeGitHub;
  let token: string;
  beforeAll(async () => ({ fake, token } = await seededFake()));
  afterAll(() => fake.close());

  it("calls, and paginates, like the plugin", async () => {
    fake.addPullRequest({ owner: OWNER, repo: REPO, number: 1, head: { ref: "feature", sha: "a".repeat(40) }, user: "author", files: Array.from({ length: 150 }, (_, i) => ({ filename: `recipes/r${i}.py`, contents: `x = ${i}\n`, status: "added" as const })) });
    const octokit = new (Octokit.plugin(restFromTable, paginateRest))({ baseUrl: fake.apiUrl, auth: token });
    const { data: repo } = await octokit.rest.repos.get({ owner: OWNER, repo: REPO });
    expect(repo.default_branch).toBe("main");
    const files = await octokit.paginate(octokit.rest.pulls.listFiles, { owner: OWNER, repo: REPO, pull_number: 1, per_page: 100 });
    expect(files.map((f) => f.filename)).toEqual(Array.from({ length: 150 }, (_, i) => `recipes/r${i}.py`));
    expect(fake.calls.filter((c) => c.operationId === "pulls/list-files")).toHaveLength(2);
    expect(fake.violations).toEqual([]);
  });
});
