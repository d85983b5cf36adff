// The routing table decides, before an edge host loads the app, whether a delivery is work
// and under which key. These tests drive it with GitHub's own example payloads, and check
// that createApp's handler table has a handler for exactly the routes the table names (one
// source of truth).
import { describe, expect, it } from "vitest";
import examples from "@octokit/webhooks-examples/api.github.com/index.json" with { type: "json" };
import { createApp } from "../../src/github/app.ts";
import type { AppHost } from "../../src/github/host.ts";
import { CHECK_NAME, ROUTES, routeBody, routeDelivery, routesEvent, SMOKE_ACTION_IDENTIFIER } from "../../src/github/routes.ts";
import { SMOKE_ACTION } from "../../src/github/review.ts";
import { MemoryStore } from "../../src/store/index.ts";

type Json = Record<string, any>;

function examplesOf(name: string): Json[] {
  const event = (examples as { name: string; examples: Json[] }[]).find((e) => e.name === name);
  if (!event) throw new Error(`no examples for ${name}`);
  return event.examples.map((payload) => structuredClone(payload));
}

function example(name: string, action: string): Json {
  const all = examplesOf(name).filter((p) => p.action === action);
  const found = all.find((p) => p.installation) ?? all[0];
  if (!found) throw new Error(`no ${name}.${action} example`);
  return found;
}

const repoKey = (p: Json) => `${p.repository.owner.login}/${p.repository.name}`;

describe("routeDelivery", () => {
  it("keys each PR event of GitHub's examples by its PR, and ignores the other actions", () => {
    const acted = new Set(ROUTES.review.events.map((e) => e.split(".")[1]));
    const seen = new Set<string>();
    for (const p of examplesOf("pull_request")) {
      p.installation ??= { id: 1, node_id: "x" }; // an App's deliveries name their installation; a repository hook's examples do not
      const routing = routeDelivery("pull_request", p);
      if (acted.has(p.action)) {
        seen.add(p.action);
        expect(routing).toEqual({ kind: "work", key: `${repoKey(p)}#${p.pull_request.number}` });
      } else {
        expect(routing, p.action).toEqual({ kind: "ignored" });
      }
    }
    expect([...seen].sort()).toEqual([...acted].sort());
  });

  it("acts on an /hcp comment by a person on a PR, and on nothing else a comment can be", () => {
    const base = example("issue_comment", "created");
    base.issue.pull_request ??= { url: "https://api.github.com/repos/o/r/pulls/1" };
    base.comment.body = "Thanks!\n/hcp smoke";
    expect(routeDelivery("issue_comment", base)).toEqual({ kind: "work", key: `${repoKey(base)}#${base.issue.number}` });

    const variants: [string, (p: Json) => void][] = [
      ["no command", (p) => (p.comment.body = "You are totally right! I'll get this fixed right away.")],
      ["a command inside an indented code block", (p) => (p.comment.body = "see:\n\n    /hcp smoke")],
      ["a command mid-line", (p) => (p.comment.body = "please run /hcp smoke")],
      ["an issue, not a PR", (p) => delete p.issue.pull_request],
      ["a bot sender", (p) => (p.sender.type = "Bot")],
      ["a bot author", (p) => (p.comment.user.type = "Bot")],
      ["no installation", (p) => delete p.installation],
      ["an edit", (p) => (p.action = "edited")],
      ["a deletion", (p) => (p.action = "deleted")],
    ];
    for (const [what, change] of variants) {
      const p = structuredClone(base);
      change(p);
      expect(routeDelivery("issue_comment", p), what).toEqual({ kind: "ignored" });
    }
  });

  it("acts on Re-run of the review's own check run only", () => {
    const p = example("check_run", "rerequested");
    expect(routeDelivery("check_run", p), `${p.check_run.name} is not ours`).toEqual({ kind: "ignored" });
    p.check_run.name = CHECK_NAME;
    p.installation ??= { id: 1 };
    p.check_run.pull_requests = [{ number: 7, id: 1, url: "u", head: { ref: "h", sha: "a", repo: p.repository }, base: { ref: "main", sha: "b", repo: p.repository } }];
    expect(routeDelivery("check_run", p)).toEqual({ kind: "work", key: `${repoKey(p)}#7` });
    expect(routeDelivery("check_run", example("check_run", "created"))).toEqual({ kind: "ignored" });
  });

  it("acts on the Smoke run button pressed by a person on a PR's check run", () => {
    const p = example("check_run", "requested_action");
    expect(routeDelivery("check_run", p), "another app's button").toEqual({ kind: "ignored" });
    p.requested_action = { identifier: SMOKE_ACTION_IDENTIFIER };
    expect(routeDelivery("check_run", p)).toEqual({ kind: "work", key: `${repoKey(p)}#${p.check_run.pull_requests[0].number}` });
    for (const [what, change] of [
      ["a bot", (q: Json) => (q.sender.type = "Bot")],
      ["no PR", (q: Json) => (q.check_run.pull_requests = [])],
      ["no installation", (q: Json) => delete q.installation],
    ] as const) {
      const q = structuredClone(p);
      change(q);
      expect(routeDelivery("check_run", q), what).toEqual({ kind: "ignored" });
    }
    expect(SMOKE_ACTION.identifier).toBe(SMOKE_ACTION_IDENTIFIER);
  });

  it("keys workflow runs and jobs by the run, for the actions the smoke flow follows", () => {
    for (const p of examplesOf("workflow_run")) {
      expect(routeDelivery("workflow_run", p), p.action).toEqual({ kind: "work", key: `run:${p.workflow_run.id}` });
    }
    for (const p of examplesOf("workflow_job")) {
      const expected = p.action === "in_progress" ? { kind: "work", key: `run:${p.workflow_job.run_id}` } : { kind: "ignored" };
      expect(routeDelivery("workflow_job", p), p.action).toEqual(expected);
    }
  });

  it("ignores events the app does not handle", () => {
    for (const name of ["push", "ping", "installation", "check_suite", "issues"]) {
      for (const p of examplesOf(name)) expect(routeDelivery(name, p), `${name}.${p.action}`).toEqual({ kind: "ignored" });
    }
  });

  it("calls a body that is not an object, or lacks its event's fields, malformed, and says which", () => {
    for (const body of [null, [], "text", 42]) {
      const routing = routeDelivery("pull_request", body);
      expect(routing.kind).toBe("malformed");
    }
    const noPr = example("pull_request", "opened");
    delete noPr.pull_request;
    expect(routeDelivery("pull_request", noPr)).toMatchObject({ kind: "malformed", reason: expect.stringContaining("pull_request delivery without the fields") });
    // Each field the review needs: a delivery without it could only fail as a job, five times.
    const opened = { ...example("pull_request", "opened"), installation: { id: 5 } };
    expect(routeDelivery("pull_request", opened).kind).toBe("work");
    for (const [path, change] of [
      ["pull_request.head.sha", (p: Json) => delete p.pull_request.head],
      ["pull_request.head.sha", (p: Json) => (p.pull_request.head.sha = 7)],
      ["pull_request.number", (p: Json) => delete p.pull_request.number],
      ["pull_request.number", (p: Json) => (p.pull_request.number = "2")],
      ["pull_request.number", (p: Json) => (p.pull_request.number = 0)],
      ["installation.id", (p: Json) => delete p.installation],
      ["repository.owner.login", (p: Json) => delete p.repository.owner],
    ] as const) {
      const p = structuredClone(opened);
      change(p);
      expect(routeDelivery("pull_request", p), path).toEqual({ kind: "malformed", reason: `a pull_request delivery without the fields of one (no valid ${path})` });
    }
    const rerun = example("check_run", "rerequested");
    rerun.check_run.name = CHECK_NAME;
    rerun.check_run.pull_requests = [{ number: 7 }];
    delete rerun.installation;
    expect(routeDelivery("check_run", rerun)).toMatchObject({ kind: "malformed", reason: expect.stringContaining("installation.id") });
    rerun.check_run.pull_requests = [];
    expect(routeDelivery("check_run", rerun), "a fork's PR, not listed on the check run").toEqual({ kind: "ignored" });
    const noRun = example("workflow_run", "requested");
    delete noRun.workflow_run;
    expect(routeDelivery("workflow_run", noRun).kind).toBe("malformed");
  });
});

describe("routeBody and routesEvent", () => {
  it("routes a body as text: JSON is routed, anything else is malformed", () => {
    const p = example("workflow_run", "requested");
    expect(routeBody("workflow_run", JSON.stringify(p))).toEqual({ kind: "work", key: `run:${p.workflow_run.id}` });
    expect(routeBody("workflow_run", "{not json")).toEqual({ kind: "malformed", reason: "a workflow_run delivery whose body is not JSON" });
    expect(routeBody("push", "")).toMatchObject({ kind: "malformed" });
  });

  it("names the events the app acts on, by event, whatever the action", () => {
    for (const name of ["pull_request", "issue_comment", "check_run", "workflow_run", "workflow_job"]) expect(routesEvent(name), name).toBe(true);
    for (const name of ["push", "ping", "installation", "check_suite", "pull", "pull_request_review"]) expect(routesEvent(name), name).toBe(false);
  });
});

describe("createApp and the routing table", () => {
  it("has a handler for exactly the routes the table routes: a job of each reaches its handler, a job of any other route fails", async () => {
    const reached = new Error("the handler asked for its Octokit");
    const host: AppHost = { auth: () => Promise.reject(reached), log: { info() {}, warn() {}, error() {} } };
    const app = createApp({ analyze: () => Promise.reject(new Error("not in this test")), store: new MemoryStore() }, host);
    const lease = { fence: async () => {}, lost: undefined };
    const job = (route: string, name: string) => ({ id: `job-${route}`, payload: JSON.stringify({ id: "d-1", name, route, payload: { installation: { id: 1 } } }) });
    for (const [route, r] of Object.entries(ROUTES)) await expect(app.runDelivery(job(route, r.events[0]!.split(".")[0]!), lease), route).rejects.toBe(reached);
    await expect(app.runDelivery(job("push", "push"), lease)).rejects.toThrow(/unknown route "push"/);
    await expect(app.runDelivery(job("toString", "push"), lease)).rejects.toThrow(/unknown route/);
  });
});
