// The Slack endpoint as an edge runtime serves it: the core's fetch handler under Deno.serve,
// real signed HTTP requests over loopback from here.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signSlackBody } from "../../src/slack/signature.ts";
import { slashCommandForm } from "../support/slack-form.ts";

const root = join(import.meta.dirname, "..", "..");
const deno = join(root, "node_modules", ".bin", "deno");
const SECRET = "deno-signing-secret";

function form(text: string, trigger: string): string {
  return slashCommandForm(text, { trigger_id: trigger });
}

describe("Slack /hcp under Deno.serve", () => {
  let child: ChildProcess;
  let base = "";

  beforeAll(async () => {
    child = spawn(deno, ["run", "--quiet", "--allow-read", "--allow-net=127.0.0.1", "--no-prompt", "test/deno/slack.deno.ts", SECRET], {
      cwd: root,
      env: { ...process.env, DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const [line] = (await once(createInterface({ input: child.stdout! }), "line")) as [string];
    const ready = JSON.parse(line) as { runtime: string; port: number };
    expect(ready.runtime).toBe("deno");
    base = `http://127.0.0.1:${ready.port}`;
  });

  afterAll(async () => {
    if (child.exitCode === null) {
      await fetch(`${base}/test/shutdown`, { method: "POST" }).catch(() => undefined);
      await Promise.race([once(child, "exit"), new Promise((r) => setTimeout(r, 3000))]);
      child.kill();
    }
  });

  async function post(body: string, opts: { secret?: string; timestamp?: number } = {}): Promise<Response> {
    const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
    return fetch(`${base}/slack/events`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-slack-request-timestamp": String(timestamp),
        "x-slack-signature": await signSlackBody(opts.secret ?? SECRET, timestamp, body),
      },
      body,
    });
  }

  it("acks a signed smoke command with its plan and schedules the work once, retries included", async () => {
    const body = form("smoke acme/mb#7 cp=4 sizes=2,2", "deno-trigger-1");
    const first = await post(body);
    expect(first.status).toBe(200);
    const ack = (await first.json()) as { response_type: string; text: string };
    expect(ack.response_type).toBe("ephemeral");
    expect(ack.text).toMatch(/Smoke run on acme\/mb#7/);
    const retry = await post(body);
    expect(((await retry.json()) as { text: string }).text).toMatch(/already received/);
    expect(await (await fetch(`${base}/test/scheduled`)).json()).toEqual([{ key: "acme/mb#7", kind: "smoke" }]);
  });

  it("answers help without scheduling anything", async () => {
    const res = await post(form("help", "deno-trigger-2"));
    expect(res.status).toBe(200);
    const help = (await res.json()) as { text: string; blocks: unknown[] };
    expect(help.text).toBe("hcp-bot commands");
    expect(JSON.stringify(help.blocks)).toMatch(/\/hcp smoke/);
    expect(await (await fetch(`${base}/test/scheduled`)).json()).toHaveLength(1);
  });

  it("refuses a forged signature, a stale timestamp and a GET", async () => {
    expect((await post(form("help", "deno-trigger-3"), { secret: "wrong" })).status).toBe(401);
    expect((await post(form("help", "deno-trigger-4"), { timestamp: Math.floor(Date.now() / 1000) - 3600 })).status).toBe(401);
    expect((await fetch(`${base}/slack/events`)).status).toBe(405);
  });
});
