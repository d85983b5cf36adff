// The parent side of a memory measurement: starts bench/support/memory-child.ts, sends it
// huge webhook bodies, and reads its RSS. Shared by `npm run bench:memory` and the measured test.
import { fork, type ChildProcess } from "node:child_process";
import { request } from "node:http";
import { join } from "node:path";

export interface MemoryChild {
  port: number;
  ask(m: "reset" | "peak"): Promise<{ rss: number; peak?: number }>;
  stop(): Promise<void>;
}

export async function startMemoryChild(root?: string): Promise<MemoryChild> {
  const child: ChildProcess = fork(join(import.meta.dirname, "memory-child.ts"), root ? [root] : [], {
    execArgv: ["--import", "tsx", "--expose-gc"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (m) => resolve((m as { port: number }).port));
    child.once("exit", (code) => reject(new Error(`the server exited (${code})`)));
  });
  const ask = (m: "reset" | "peak") =>
    new Promise<{ rss: number; peak?: number }>((resolve) => {
      child.once("message", (answer) => resolve(answer as { rss: number; peak?: number }));
      child.send(m);
    });
  return {
    port,
    ask,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.send("stop");
        setTimeout(() => child.kill("SIGKILL"), 10_000).unref();
      }),
  };
}

/**
 * POSTs `megabytes` MB of JSON-ish padding to the webhook path, chunked (no content-length,
 * so only reading tells its size) unless `declare` is set; resolves with the status, or
 * "closed" when the server cut the connection before answering.
 */
export function sendHugeWebhook(port: number, megabytes: number, o: { signature?: string; declare?: boolean } = {}): Promise<number | "closed"> {
  const chunk = Buffer.alloc(1024 * 1024, 0x61);
  return new Promise((resolve) => {
    let settled = false;
    const done = (v: number | "closed") => {
      if (!settled) {
        settled = true;
        resolve(v);
      }
    };
    const req = request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/api/github/webhooks",
      headers: {
        "content-type": "application/json",
        "x-github-event": "pull_request",
        "x-github-delivery": `huge-${Math.random()}`,
        ...(o.signature ? { "x-hub-signature-256": o.signature } : {}),
        ...(o.declare ? { "content-length": String(megabytes * chunk.length) } : {}),
      },
    });
    req.on("response", (res) => {
      res.resume();
      done(res.statusCode ?? 0);
      req.destroy();
    });
    req.on("error", () => done("closed"));
    let sent = 0;
    const pump = () => {
      while (sent < megabytes && !settled) {
        sent++;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!settled) req.end();
    };
    pump();
  });
}

export const FORGED = `sha256=${"0".repeat(64)}`;
export const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

/**
 * A finished smoke run on `gh` whose only log is a job log of about `megabytes` MB (the
 * runner's output, timestamped like GitHub's, no artifact); what joblog-child.ts needs.
 */
export function seedHugeJobLog(gh: import("../../test/support/fake-github/index.ts").FakeGitHub, megabytes: number): { runId: number; full: string; token: string } {
  gh.addInstallation({ id: 3, account: "acme", accountType: "Organization" });
  gh.addRepo({ owner: "acme", repo: "mb", defaultBranch: "main", installationId: 3, files: { main: { "README.md": "# x\n" } } });
  const wf = gh.addWorkflow({ owner: "acme", repo: "mb", path: ".github/workflows/hcp-smoke.yml", name: "hcp-smoke" });
  const run = gh.addWorkflowRun({ owner: "acme", repo: "mb", workflowId: wf.id, event: "workflow_dispatch", headBranch: "main", headSha: "d".repeat(40), displayTitle: "hcp smoke bench", status: "completed", conclusion: "success" });
  const line = "2026-11-30T04:43:01.1234567Z  [2026-11-30 10:00:01] iteration        1/       2 | consumed samples:            4 | elapsed time per iteration (ms): 1234.5 | lm loss: 1.034561E+01 |\n";
  gh.addJob({ runId: run.id, name: "hcp smoke bench dddd", status: "completed", conclusion: "success", log: line.repeat(Math.ceil((megabytes * 1024 * 1024) / line.length)) });
  return { runId: run.id, full: "acme/mb", token: gh.installationToken(3) };
}

/** Runs joblog-child.ts for ROOT's code; resolves with what it printed. */
export async function measureJobLogVerdict(root: string, apiUrl: string, seeded: { runId: number; full: string; token: string }): Promise<{ baseline: number; peak: number; status: string; ms: number }> {
  const { execFile } = await import("node:child_process");
  return new Promise((resolve, reject) => {
    // The young generation is held at 16 MB (Node 20's size): Node 24 grows it to 64 MB with the
    // heap, and garbage not yet collected there would be counted as what the reader holds.
    execFile(process.execPath, ["--max-semi-space-size=16", "--import", "tsx", "--expose-gc", join(import.meta.dirname, "joblog-child.ts"), root, apiUrl, seeded.token, seeded.full, String(seeded.runId)], { maxBuffer: 1 << 20 }, (error, stdout) => {
      if (error) return reject(error);
      resolve(JSON.parse(stdout.trim().split("\n").at(-1)!) as { baseline: number; peak: number; status: string; ms: number });
    });
  });
}
