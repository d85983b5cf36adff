// How `hcp-bot lint` writes its output (src/cli/process-io.ts): straight to a pipe or a
// file descriptor, Node's stream for a terminal or other character device, and the stream
// for the rest of the text once a direct write fails.
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { descriptorWriter } from "../../src/cli/process-io.ts";
import { bin, root } from "../support/cli.ts";

/** A stand-in for process.stdout that records what it is given. */
function recordingStream(isTTY: boolean): { stream: NodeJS.WriteStream; written: string[] } {
  const written: string[] = [];
  const stream = { isTTY, write: (chunk: string | Uint8Array) => written.push(Buffer.from(chunk).toString("utf8")) > 0 } as unknown as NodeJS.WriteStream;
  return { stream, written };
}

describe("descriptorWriter", () => {
  it("writes a regular file's descriptor itself, and says it is no terminal", () => {
    const file = join(mkdtempSync(join(tmpdir(), "hcp-io-")), "out.txt");
    const fd = openSync(file, "w");
    const { stream, written } = recordingStream(true);
    const w = descriptorWriter(fd, () => stream, true);
    w.write("one ");
    w.write("twö\n");
    closeSync(fd);
    expect(readFileSync(file, "utf8")).toBe("one twö\n");
    expect(written).toEqual([]);
    expect(w.tty()).toBe(false);
  });

  it("leaves a character device (/dev/null, like a terminal) to Node's stream", () => {
    const fd = openSync("/dev/null", "w");
    const { stream, written } = recordingStream(true);
    const w = descriptorWriter(fd, () => stream, true);
    w.write("to the stream\n");
    closeSync(fd);
    expect(written).toEqual(["to the stream\n"]);
    expect(w.tty()).toBe(true);
  });

  it("uses the stream only when direct writes are not allowed", () => {
    const fd = openSync(join(mkdtempSync(join(tmpdir(), "hcp-io-")), "out.txt"), "w");
    const { stream, written } = recordingStream(false);
    descriptorWriter(fd, () => stream, false).write("x");
    closeSync(fd);
    expect(written).toEqual(["x"]);
  });

  it("after a failed write (a full non-blocking pipe), hands the unwritten rest and all later text to the stream, in order", () => {
    const fd = openSync(join(mkdtempSync(join(tmpdir(), "hcp-io-")), "out.txt"), "w");
    const direct: string[] = [];
    let calls = 0;
    // The first write(2) takes 5 bytes, the next one fails as a full non-blocking pipe does.
    const write = (_fd: number, buffer: Uint8Array, offset: number, length: number): number => {
      if (++calls > 1) throw Object.assign(new Error("EAGAIN: resource temporarily unavailable, write"), { code: "EAGAIN" });
      const n = Math.min(5, length);
      direct.push(Buffer.from(buffer.subarray(offset, offset + n)).toString("utf8"));
      return n;
    };
    const { stream, written } = recordingStream(false);
    const w = descriptorWriter(fd, () => stream, true, write);
    w.write("first line\n");
    w.write("second line\n");
    closeSync(fd);
    expect(direct).toEqual(["first"]);
    expect(written).toEqual([" line\n", "second line\n"]);
    expect(calls).toBe(2);
  });
});

describe("the real binary", () => {
  it("lints into a file given as stdout with the same text as into a pipe", () => {
    const recipe = join("fixtures", "cli", "clean_recipe.py");
    const env = { ...process.env, NO_COLOR: "1", HCP_BOT_CACHE_DIR: "off" };
    const piped = spawnSync(process.execPath, [bin, "lint", recipe], { cwd: root, env, encoding: "utf8" });
    const file = join(mkdtempSync(join(tmpdir(), "hcp-io-")), "out.txt");
    const fd = openSync(file, "w");
    const toFile = spawnSync(process.execPath, [bin, "lint", recipe], { cwd: root, env, stdio: ["ignore", fd, "pipe"] });
    closeSync(fd);
    expect(piped.status).toBe(0);
    expect(toFile.status).toBe(0);
    expect(piped.stdout).toMatch(/^No findings in 1 file \(1 configuration\)$/m);
    expect(readFileSync(file, "utf8")).toBe(piped.stdout);
  });
});
