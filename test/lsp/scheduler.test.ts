// The editor server's scheduling of analyses: changes that arrive while a document's analysis
// runs are folded into one analysis of the newest text, a stale result is never published, and
// a closed document gets nothing. Analyses are promises the test settles itself, so the order
// of events is the test's, not the machine's.
import { describe, expect, it } from "vitest";
import { AnalysisScheduler, type Snapshot } from "../../src/cli/lsp/scheduler.ts";

interface Pending {
  snapshot: Snapshot;
  settle: (result: string) => void;
}

function harness() {
  const docs = new Map<string, Snapshot>();
  const started: Pending[] = [];
  const published: Array<{ version: number; result: string }> = [];
  let onStart: (() => void) | undefined;
  const scheduler = new AnalysisScheduler<string>(
    {
      current: (uri) => docs.get(uri),
      analyze: (snapshot) =>
        new Promise<string>((settle) => {
          started.push({ snapshot, settle });
          onStart?.();
        }),
      publish: (snapshot, result) => published.push({ version: snapshot.version, result }),
    },
    0,
  );
  /** Resolves once the `n`th analysis (1-based) has started. */
  const analysisStarted = (n: number) =>
    new Promise<Pending>((resolve) => {
      const check = () => {
        if (started.length >= n) resolve(started[n - 1]!);
        else onStart = check;
      };
      check();
    });
  const edit = (version: number) => {
    docs.set("u", { uri: "u", version, text: `v${version}` });
    scheduler.changed("u");
  };
  return { docs, started, published, scheduler, analysisStarted, edit };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("AnalysisScheduler", () => {
  it("publishes the result of an analysis whose text is still current", async () => {
    const h = harness();
    h.edit(1);
    (await h.analysisStarted(1)).settle("one");
    await settled();
    expect(h.published).toEqual([{ version: 1, result: "one" }]);
  });

  it("folds changes made during an analysis into one more analysis of the newest text, and drops the stale result", async () => {
    const h = harness();
    h.edit(1);
    const first = await h.analysisStarted(1);
    h.edit(2);
    h.edit(3);
    h.edit(4);
    await settled();
    expect(h.started).toHaveLength(1); // nothing runs beside the analysis in flight
    first.settle("stale");
    const second = await h.analysisStarted(2);
    expect(second.snapshot.text).toBe("v4");
    second.settle("newest");
    await settled();
    expect(h.started).toHaveLength(2);
    expect(h.published).toEqual([{ version: 4, result: "newest" }]);
  });

  it("publishes nothing for a document closed while its analysis ran", async () => {
    const h = harness();
    h.edit(1);
    const first = await h.analysisStarted(1);
    h.docs.delete("u");
    h.scheduler.closed("u");
    first.settle("late");
    await settled();
    expect(h.published).toEqual([]);
  });
});
