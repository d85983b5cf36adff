// Runs the pure core verdict parser under Deno on the logs named as arguments (bytes in 4 KiB
// chunks, the WebAssembly path) and prints the verdicts as JSON. test/deno/deno.test.ts
// compares them with the same run under Node.
import { createVerdictParser } from "../../src/core/verdict/index.ts";

declare const Deno: { args: string[]; readFile(path: string): Promise<Uint8Array> };

const results = [];
for (const path of Deno.args) {
  const bytes = await Deno.readFile(path);
  const parser = createVerdictParser({ expectHcp: true, gpu: "H100" });
  for (let i = 0; i < bytes.length; i += 4096) parser.push(bytes.subarray(i, i + 4096));
  const verdict = parser.end(0);
  results.push({ path, engine: parser.scanEngine, verdict });
}
console.log(JSON.stringify({ runtime: "deno", results }));
