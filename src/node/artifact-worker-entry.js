// Worker threads do not inherit a loader registered through tsx's API: register it here,
// then load the TypeScript worker.
import { register } from "tsx/esm/api";

register();
await import("./artifact-worker.ts");
