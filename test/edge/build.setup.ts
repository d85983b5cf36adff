// vitest global setup: the edge suites run the built bundle, so it is built once first.
import { buildEdge } from "../../scripts/build-edge.ts";

export default async function setup(): Promise<void> {
  await buildEdge(true);
}
