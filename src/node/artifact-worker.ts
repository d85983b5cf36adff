// One artifact judged on a thread of its own (src/node/artifact-judge.ts starts it): the job
// arrives as workerData, the zip's bytes transferred, not copied; the outcome is posted back.
import { parentPort, workerData } from "node:worker_threads";
import { judgeArtifact, type ArtifactJob } from "../core/smoke/artifact.ts";

parentPort!.postMessage({ outcome: await judgeArtifact(workerData as ArtifactJob) });
