// The artifact zip reader against archives written by other tools: Python's zipfile
// (deflate and stored), and a streamed archive with data descriptors, as upload-artifact writes.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listZipEntries, openZipEntry, ZipError } from "../../src/core/zip/reader.ts";

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

function pythonZip(files: Record<string, string>, compression: "ZIP_DEFLATED" | "ZIP_STORED", streamed = false): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "hcp-zip-"));
  const spec = join(dir, "files.json");
  writeFileSync(spec, JSON.stringify(files));
  const out = join(dir, "a.zip");
  // streamed: write through a non-seekable pipe, so zipfile uses data descriptors (flag bit 3).
  const script = `
import json, sys, zipfile, io
files = json.load(open(${JSON.stringify(spec)}))
class Pipe(io.RawIOBase):
    def __init__(self, f): self.f = f
    def writable(self): return True
    def write(self, b): return self.f.write(b)
    def seekable(self): return False
target = open(${JSON.stringify(out)}, "wb")
sink = Pipe(target) if ${streamed ? "True" : "False"} else target
with zipfile.ZipFile(sink, "w", zipfile.${compression}) as z:
    for name, body in files.items():
        with z.open(name, "w") as f:
            f.write(body.encode())
target.close()
`;
  execFileSync("python3", ["-c", script]);
  return new Uint8Array(readFileSync(out));
}

describe("zip reader", () => {
  const log = Array.from({ length: 5000 }, (_, i) => ` [2026-11-30 10:00:00] iteration ${i}/5000 | lm loss: 1.0E+01 |`).join("\n") + "\n";

  it.each([
    ["deflate", "ZIP_DEFLATED", false],
    ["stored", "ZIP_STORED", false],
    ["deflate with data descriptors", "ZIP_DEFLATED", true],
  ] as const)("reads %s entries written by Python's zipfile", async (_label, method, streamed) => {
    const bytes = pythonZip({ "smoke.log": log, "verdict.json": '{"status":"pass"}', "dir/é.txt": "accent" }, method, streamed);
    const entries = listZipEntries(bytes);
    expect(entries.map((e) => e.name)).toEqual(["smoke.log", "verdict.json", "dir/é.txt"]);
    expect(await text(openZipEntry(bytes, entries[0]!))).toBe(log);
    expect(await text(openZipEntry(bytes, entries[1]!))).toBe('{"status":"pass"}');
    expect(await text(openZipEntry(bytes, entries[2]!))).toBe("accent");
    if (method === "ZIP_DEFLATED") expect(entries[0]!.compressedSize).toBeLessThan(entries[0]!.size);
  });

  it("rejects what is not a zip, and a truncated one, with a clear error", () => {
    expect(() => listZipEntries(new TextEncoder().encode("this is a log, not an archive"))).toThrow(ZipError);
    const bytes = pythonZip({ "a.log": log }, "ZIP_DEFLATED");
    expect(() => listZipEntries(bytes.subarray(0, 10))).toThrow(/not a zip/);
    const entries = listZipEntries(bytes);
    const cut = bytes.slice(0, 200);
    cut.set(bytes.subarray(bytes.length - 22), 200 - 22);
    expect(() => openZipEntry(cut, entries[0]!)).toThrow(ZipError);
  });
});
