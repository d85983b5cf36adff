// Prints the Teddy bucket grouping for the verdict's anchors that leaves the fewest false
// candidates on the benchmark corpus (paste it into BUCKET_GROUPS in
// src/core/verdict/scan/wasm-scanner.ts after changing ANCHORS).
//
// A bucket's nibble tables accept every mix of its members' first 3 bytes' nibbles, so two
// anchors in one bucket can make a common word a candidate (e.g. "rro" + "NaN" accepts "ran",
// as in every "[rank0]:" prefix). Local search: move one anchor to another bucket while that
// lowers the candidate count on 12 MB of the corpus.
import { backgroundLines, SyntheticLog } from "../bench/verdict-corpus.ts";
import { ANCHORS } from "../src/core/verdict/anchors.ts";
import { bucketOf } from "../src/core/verdict/scan/wasm-scanner.ts";

const BUCKETS = 8;
const log = new SyntheticLog(backgroundLines());
const sample = new TextEncoder().encode(log.header() + log.block(12 * 1024 * 1024));
const prefixes = ANCHORS.map((a) => [0, 1, 2].map((o) => a.charCodeAt(o)));

/** Positions of the sample where the bucket tables of `assignment` report a candidate. */
function candidates(assignment: number[]): number {
  // Per offset, the buckets a byte value passes (low-nibble table AND high-nibble table).
  const pass = [0, 1, 2].map((o) => {
    const lo = new Uint8Array(16);
    const hi = new Uint8Array(16);
    prefixes.forEach((p, k) => {
      lo[p[o]! & 15]! |= 1 << assignment[k]!;
      hi[p[o]! >> 4]! |= 1 << assignment[k]!;
    });
    return Uint8Array.from({ length: 256 }, (_, v) => lo[v & 15]! & hi[v >> 4]!);
  }) as [Uint8Array, Uint8Array, Uint8Array];
  let n = 0;
  for (let i = 0; i + 2 < sample.length; i++) if (pass[0][sample[i]!]! & pass[1][sample[i + 1]!]! & pass[2][sample[i + 2]!]!) n++;
  return n;
}

console.log(`anchor k in bucket k % ${BUCKETS}: ${candidates(ANCHORS.map((a, k) => bucketOf(a, k, [])))} candidates`);
let best = ANCHORS.map((a, k) => bucketOf(a, k));
let bestCount = candidates(best);
console.log(`BUCKET_GROUPS now: ${bestCount} candidates`);
for (let improved = true; improved; ) {
  improved = false;
  for (let k = 0; k < ANCHORS.length; k++) {
    for (let b = 0; b < BUCKETS; b++) {
      const trial = best.with(k, b);
      const count = candidates(trial);
      if (count < bestCount) [best, bestCount, improved] = [trial, count, true];
    }
  }
}
const groups = Array.from({ length: BUCKETS }, (_, b) => ANCHORS.filter((_, k) => best[k] === b)).filter((g) => g.length > 0);
console.log(`best found from there: ${bestCount} candidates`);
console.log(JSON.stringify(groups, null, 2));
