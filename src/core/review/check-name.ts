// The review's check run name, alone in its module: edge routing (src/github/routes.ts)
// recognises the check's "Re-run" in a first request's path, where plan.ts is too heavy.
export const CHECK_NAME = "HCP review";
