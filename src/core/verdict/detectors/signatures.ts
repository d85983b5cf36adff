// Detector: single failure lines (NCCL watchdog and c10d errors, CUDA OOM, NaN checks, Hydra
// and config assertion texts printed outside a traceback) matched against the catalogue, and
// torchrun's `failed (exitcode: …) local_rank: …` launcher line.
import { matchSignature, type Signature } from "../catalog.ts";
import { clip, type Findings } from "../findings.ts";
import type { Cause } from "../schema.ts";

const LAUNCHER_FAIL_RE = /failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\)/;

export interface LauncherFailure {
  line: number;
  exitcode: number;
  localRank: number;
}

/** Only docs/domain.md section 3 ids (B6, M8, T1) are upstream checks; "oom", "nccl-…" are ours. */
export function upstreamId(id: string): string | undefined {
  return /^[BMT]\d+$/.test(id) ? id : undefined;
}

/** The candidate a catalogue match makes. */
export function signatureCause(sig: Signature, message: string, line: number, rank: number | null, text: string): Cause {
  return { kind: sig.kind, message: clip(message), line, rank, ruleId: sig.ruleId, upstream: upstreamId(sig.id), text: clip(text) };
}

export class SignatureDetector {
  private launcher: LauncherFailure | null = null;

  constructor(private readonly findings: Findings) {}

  failureLine(seg: string, rank: number | null, line: number): void {
    const sig = matchSignature(seg);
    if (sig) {
      this.findings.addCandidate(signatureCause(sig, seg.trim(), line, rank, seg));
      return;
    }
    if (seg.includes("exitcode")) {
      const m = LAUNCHER_FAIL_RE.exec(seg);
      if (m && !this.launcher) this.launcher = { line, exitcode: Number(m[1]), localRank: Number(m[2]) };
    }
  }

  facts(): { launcherFailure: LauncherFailure | null } {
    return { launcherFailure: this.launcher };
  }
}
