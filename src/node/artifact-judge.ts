// The server judges a smoke run's log artifact off the thread that answers requests: inflating
// and parsing up to the caps' 160 MiB is seconds of CPU, and on the answering thread every
// webhook and Slack ack that arrived meanwhile would share it (1,000 MiB of log once left
// GitHub's deliveries unanswered past their 10 s). Each artifact gets a thread of its own, with
// a bounded heap, that ends with its answer: what a hostile archive leaves behind goes with it.
import type { Worker } from "node:worker_threads";
import { unreadableOutcome, type ArtifactJob, type ArtifactOutcome } from "../core/smoke/artifact.ts";
import { FROM_SOURCE, packageFile } from "./package-files.ts";

// The build has the worker as an entry point of its own; the sources need tsx's loader registered in the thread first.
const WORKER_FILE = FROM_SOURCE ? packageFile("src/node/artifact-worker-entry.js") : packageFile("dist/artifact-worker.js");

/** The judging thread's heap: the parser's state is bounded (the zip's bytes are outside it). */
const MAX_HEAP_MB = 512;

/** The zip's bytes as an ArrayBuffer of their own, which can be handed to the thread without a copy. */
function ownBuffer(zip: Uint8Array): ArrayBuffer {
  const whole = zip.byteOffset === 0 && zip.byteLength === zip.buffer.byteLength && zip.buffer instanceof ArrayBuffer;
  return whole ? (zip.buffer as ArrayBuffer) : (zip.slice().buffer as ArrayBuffer);
}

/** Judges `job` on a new worker thread. The zip's buffer is transferred: the caller must not use it after. */
export function judgeOffThread(job: ArtifactJob): Promise<ArtifactOutcome> {
  const { Worker } = process.getBuiltinModule("node:worker_threads");
  const buffer = ownBuffer(job.zip);
  const worker: Worker = new Worker(WORKER_FILE, {
    workerData: { ...job, zip: new Uint8Array(buffer) },
    transferList: [buffer],
    resourceLimits: { maxOldGenerationSizeMb: MAX_HEAP_MB },
  });
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: ArtifactOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
      void worker.terminate();
    };
    worker.once("message", (m: { outcome: ArtifactOutcome }) => settle(m.outcome));
    // A thread that dies (out of its heap, a bug) leaves the artifact unjudged: never a pass.
    worker.once("error", (error) => settle(unreadableOutcome(job.request, `the thread judging it failed (${error.message})`)));
    worker.once("exit", (code) => settle(unreadableOutcome(job.request, `the thread judging it exited (code ${code}) without a verdict`)));
  });
}
