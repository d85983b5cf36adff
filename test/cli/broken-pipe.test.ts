// A reader that goes away (`hcp-bot advise ... | head -3`) ends the command quietly with the
// status a shell gives a process stopped by SIGPIPE (src/cli/process-io.ts), on both ways
// output leaves the CLI: Node's stream (advise, every command but lint) and the direct
// write(2) on the descriptor (lint's bundle). Each run writes far more than a pipe's buffer
// (64 KiB on Linux) and the test closes its end after the first chunk, so the child's
// writes must meet a closed pipe whatever the machine's speed.
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BROKEN_PIPE_EXIT } from "../../src/cli/process-io.ts";
import { root, startHcpBot, type Run } from "../support/cli.ts";

/** Runs hcp-bot, reads its first chunk of output and closes the pipe, as `| head -c N` does. */
async function readFirstChunkThenClose(args: string[]): Promise<Run & { first: string }> {
  const { child, done } = startHcpBot(args);
  const first = await new Promise<string>((resolve) => child.stdout!.once("data", (d: string) => resolve(d)));
  child.stdout!.destroy();
  return { ...(await done), first };
}

describe("a reader that closes the pipe early", () => {
  it("advise (Node's stream): stops quietly with 141, no stack trace, no EPIPE", async () => {
    const r = await readFirstChunkThenClose(["advise", "--cp", "16", "--nodes", "1024", "--format", "json"]);
    expect(r.first).toMatch(/^\{/);
    expect(r.stderr).not.toMatch(/EPIPE|Error|at /);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(BROKEN_PIPE_EXIT);
  });

  it("lint (direct writes to the descriptor): the same", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hcp-pipe-"));
    for (let i = 0; i < 400; i++) copyFileSync(join(root, "fixtures", "recipes", "yaml", "card.yaml"), join(dir, `card_${i}.yaml`));
    // JSON (the long explanations, ~1 MB here): the one-line text report of 400 files could fit in the pipe after one read.
    const r = await readFirstChunkThenClose(["lint", "--all", "--isolated", "--format", "json", dir]);
    expect(r.first).toContain("HCP009");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(BROKEN_PIPE_EXIT);
  });
});
