// Body caps for every host. GitHub caps webhook payloads at 25 MB (it does not deliver a
// larger one), so every host, Node and the edge alike, refuses only what GitHub would never
// send: a delivery refused on one host and taken on another would be a failed delivery there
// (an issue_comment on an issue with a long history reaches 1.5 MB). Slack's own requests are
// small (slack/endpoint.ts).
export const MAX_WEBHOOK_BYTES = 25 * 1024 * 1024;
