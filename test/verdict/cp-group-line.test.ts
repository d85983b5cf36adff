// A failure printed on a CP group's own INFO line (the NCCL watchdog's words) counts wherever
// it sits on the line. The parser looks for it only after the group's name when the scanned
// line is what the detectors read (no anchor can come before the line's first one); a line
// rewritten by colour-code removal or a progress-bar "\r" redraw is searched from its start,
// since either can bring words before the name that the scan never saw there.
import { describe, expect, it } from "vitest";
import { createVerdictParser, type Verdict } from "../../src/core/verdict/index.ts";
import { HCP_NAMES, PROBE_KEY, probeLines, trainingLog } from "./logs.ts";

const GROUP = "[PG ID 5 PG GUID 10(HIERARCHICAL_CONTEXT_PARALLEL_GROUP_L0) Rank 0]";
const STAMP = "[rank0]:[E1130 05:38:05.122069172 ProcessGroupNCCL.cpp:689]";

function verdicts(groupLine: string): Verdict[] {
  const log = trainingLog({ hcp: [...HCP_NAMES, ...probeLines(true), groupLine] });
  return (["auto", "regex"] as const).flatMap((anchorScan) =>
    [new TextEncoder().encode(log), log].map((input) => {
      const parser = createVerdictParser({ expectHcp: true, probeKey: PROBE_KEY, anchorScan });
      parser.push(input);
      return parser.end(0);
    }),
  );
}

const watchdogSeen = (v: Verdict) => [v.cause, ...v.otherFailures].some((f) => f?.message.includes("Watchdog caught collective operation timeout"));

describe("a watchdog failure on a CP group's own line", () => {
  it("after the group's name", () => {
    for (const v of verdicts(`${STAMP} ${GROUP} Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2) ran for 20093 milliseconds`)) {
      expect(v.status).toBe("fail");
      expect(watchdogSeen(v)).toBe(true);
    }
  });

  it("before the name, spelled out only once colour codes are removed", () => {
    for (const v of verdicts(`${STAMP} \x1b[31mWatch\x1b[0mdog caught collective operation timeout: ${GROUP} WorkNCCL(SeqNum=2) ran for 20093 milliseconds`)) {
      expect(v.status).toBe("fail");
      expect(watchdogSeen(v)).toBe(true);
    }
  });

  it("before the name, after a progress bar's \\r redraw that drops an earlier name", () => {
    for (const v of verdicts(`${STAMP} ${GROUP} step 1\r${STAMP} Watchdog caught collective operation timeout: ${GROUP} ran for 20093 milliseconds`)) {
      expect(v.status).toBe("fail");
      expect(watchdogSeen(v)).toBe(true);
    }
  });

  it("a healthy group line fails nothing", () => {
    for (const v of verdicts(`[rank0]:[I1130 05:38:05.122069172 ProcessGroupNCCL.cpp:1068] ${GROUP} Using non-blocking mode: 0`)) {
      expect(v.status).toBe("pass");
      expect(watchdogSeen(v)).toBe(false);
    }
  });
});
