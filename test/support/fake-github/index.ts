export { startFakeGitHub } from "./server.ts";
export type {
  AddPullFile, AddPullRequestOptions, AddRepoOptions, FakeGitHub, FakeGitHubOptions, Injection, RecordedCall, Violation, ViolationKind,
} from "./server.ts";
export { loadGitHubSpec } from "./spec.ts";
export { parsePatch, findDiffLine, unifiedDiff } from "./diff.ts";
export { readStoredZip, storedZip } from "./zip.ts";
export { executeGraphQL, parseQuery } from "./graphql.ts";
export { blobSha, FakeState } from "./state.ts";
