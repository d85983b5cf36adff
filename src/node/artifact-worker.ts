// One artifact judged on a thread of its own (src/node/artifact-judge.ts starts it): the job
// arrives as workerData, the zip's bytes transferred, not copied; the outcome is posted back.
// Inflation is Node's zlib with 1 MiB chunks, about four times as fast as DecompressionStream.
import { parentPort, workerData } from "node:worker_threads";
import { createInflateRaw } from "node:zlib";
import { judgeArtifact, type ArtifactJob } from "../core/smoke/artifact.ts";

async function* inflateRaw(compressed: Uint8Array): AsyncGenerator<Uint8Array> {
  const inflater = createInflateRaw({ chunkSize: 1 << 20 });
  inflater.end(compressed);
  try {
    // zlib inflates only as the chunks are read (backpressure): a bomb is never inflated ahead.
    for await (const chunk of inflater) yield chunk as Buffer;
  } finally {
    inflater.destroy();
  }
}

parentPort!.postMessage({ outcome: await judgeArtifact(workerData as ArtifactJob, { inflateRaw }) });
