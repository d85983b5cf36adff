// Body caps for every host. GitHub caps webhook payloads at 25 MB (it does not deliver a
// larger one), so the Node server refuses only what GitHub would never send. Edge isolates
// have 128 MB in all (docs/edge-notes.md), so there a delivery stops at 1 MB: real ones are well under
// it (a 65,536-character PR body included). Slack's own requests are small (slack/core.ts).
export const MAX_WEBHOOK_BYTES = 25 * 1024 * 1024;
export const MAX_EDGE_WEBHOOK_BYTES = 1024 * 1024;
