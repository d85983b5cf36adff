// A finding's identity across pushes: the PR review's "already commented" marker and the
// CLI's baseline both match findings by it.
import type { Finding } from "../model/finding.ts";

/** FNV-1a 64-bit: a stable, dependency-free fingerprint (not a security hash). */
export function fingerprint(f: Pick<Finding, "ruleId" | "location" | "unitName" | "message">): string {
  // Line numbers move on every push; rule, file, configuration and message without them identify a finding.
  const message = f.message.replace(/:\d+(?::\d+)?\b/g, ":#");
  const key = `${f.ruleId}|${f.location.file}|${f.unitName}|${message}`;
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < key.length; i++) {
    h ^= BigInt(key.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, "0");
}
