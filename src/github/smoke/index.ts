// `/hcp smoke`'s home: the service both front doors call (service.ts), and what they name.
// request.ts asks (policy, pin, pre-flight, dispatch), follow.ts follows the run to its
// verdict (binding.ts, verdict.ts), story.ts tells it, cancel.ts stops it, recovery.ts
// resolves what a crash left half-made, workflow-file.ts reads the installed workflow.
export { createSmokeService, type SmokeGitHub, type SmokeServiceOptions } from "./service.ts";
export { smokeReply, statusText } from "./story.ts";
export { STUCK_AFTER_MS } from "./recovery.ts";
export type * from "./types.ts";
