// Streaming smoke-run verdict: reads a torchrun log chunk by chunk (bytes or strings, split
// anywhere) in constant memory and decides whether the HCP smoke run really passed.
//
// Three parts: the stream (stream.ts) finds the lines that hold an anchor; the reader
// (lines.ts) hands each to the detectors it concerns (detectors/: config summary, probe
// reports, process-group names, decentralized process groups, iterations and throughput,
// tracebacks, torchrun's failure box, failure signatures); decide() (decide.ts) turns what
// they found into the Verdict.
//
// Memory: the partial last line (capped at MAX_LINE), per-rank traceback states (capped),
// and capped evidence/candidate lists. Nothing grows with the log.
import { ANCHORS } from "./anchors.ts";
import { decide, type VerdictEndExtra } from "./decide.ts";
import { clip } from "./findings.ts";
import { LogReader, MAX_LINE } from "./lines.ts";
import { LogStream } from "./stream.ts";
import { VerdictOptionsSchema, type Verdict, type VerdictOptions } from "./schema.ts";

export { ANCHORS, MAX_LINE, type VerdictEndExtra };

export interface VerdictParser {
  push(chunk: string | Uint8Array): void;
  /**
   * The next bytes of the log, written by `read` straight into the parser's buffer (at most
   * `into.length`; it returns how many, 0 at the end): the same verdict as push, one copy less.
   */
  fill(read: (into: Uint8Array) => number): number;
  end(exitCode?: number | null, extra?: VerdictEndExtra): Verdict;
  /** Sizes of the internal state, for tests that check memory stays bounded. */
  stateSize(): { carryChars: number; tracebacks: number; candidates: number; evidence: number };
  /** "wasm" once a block of the log was searched by the WebAssembly scanner. */
  readonly scanEngine: "wasm" | "regex";
}

export function createVerdictParser(options: VerdictOptions): VerdictParser {
  const opts = VerdictOptionsSchema.parse(options);
  const stream = new LogStream(opts.anchorScan);
  const reader = new LogReader(opts.probeKey, () => stream.previousLine());
  stream.connect(reader);

  function end(exitCode?: number | null, extra: VerdictEndExtra = {}): Verdict {
    const lines = stream.finish();
    reader.finish(lines + 1);
    const { findings } = reader;
    const hcpEvidence = [
      ...reader.probe.evidence.map((e) => ({ kind: "probe" as const, ...e })),
      ...reader.groups.evidence.map((e) => ({ kind: "hcp" as const, line: e.line, text: clip(e.text) })),
    ]
      .sort((a, b) => a.line - b.line)
      .slice(0, 6);
    return decide(
      {
        iterations: reader.iterations.facts(),
        config: reader.config.facts(),
        groups: reader.groups.facts(),
        probe: reader.probe.facts(),
        decentralized: reader.decentralized.facts(),
        ...reader.box.facts(),
        ...reader.signatures.facts(),
        candidates: findings.candidates,
        evidence: findings.evidence,
        hcpEvidence,
        notes: findings.notes,
        stats: { ...stream.stats, examinedLines: reader.examined },
      },
      opts,
      exitCode === undefined ? null : exitCode,
      extra,
    );
  }

  return {
    push: (chunk) => stream.push(chunk),
    fill: (read) => stream.fill(read),
    end,
    get scanEngine() {
      return stream.scanEngine;
    },
    stateSize: () => ({ carryChars: stream.carried, tracebacks: reader.tracebacks.size, candidates: reader.findings.candidates.length, evidence: reader.findings.evidence.length }),
  };
}

/** Convenience for whole strings (tests, small logs). */
export function verdictOf(text: string | Uint8Array, options: VerdictOptions, exitCode?: number | null, extra?: VerdictEndExtra): Verdict {
  const parser = createVerdictParser(options);
  parser.push(text);
  return parser.end(exitCode, extra);
}
