// A baseline: the findings a repository already had when it turned the linter on. A finding in
// it is not reported again, a new one is, and one that was fixed simply leaves it unused. Findings
// match by fingerprint (rule, file, configuration, message without line numbers: the PR review's
// identity), counted, so a second copy of a baselined finding is new.
import * as z from "zod";
import type { Finding } from "../model/finding.ts";
import { deferred } from "../model/deferred.ts";
import { fingerprint } from "../review/fingerprint.ts";

export const BaselineSchema = deferred(() =>
  z
    .object({
      tool: z.literal("hcp-bot"),
      version: z.literal(1),
      findings: z.array(
        z
          .object({
            file: z.string(),
            ruleId: z.string(),
            fingerprint: z.string().regex(/^[0-9a-f]{16}$/),
            /** For the person reading the file; matching uses the fingerprint. */
            message: z.string().optional(),
          })
          .strict(),
      ),
    })
    .strict(),
);
export type Baseline = z.infer<ReturnType<typeof BaselineSchema>>;

/** `file` maps a finding's path to the one the baseline stores (relative to the baseline's folder). */
export type PathMap = (file: string) => string;

function keyOf(f: Finding, path: PathMap): { file: string; fingerprint: string } {
  const file = path(f.location.file);
  // Messages name the file as it was shown ("(r.py:14)"): the same path the baseline stores, so a lint from another folder matches.
  const message = f.message.split(f.location.file).join(file);
  return { file, fingerprint: fingerprint({ ...f, message, location: { ...f.location, file } }) };
}

export function buildBaseline(findings: readonly Finding[], path: PathMap): Baseline {
  const entries = findings.map((f) => ({ ...keyOf(f, path), ruleId: f.ruleId, message: f.message.split("\n")[0]!.slice(0, 200) }));
  entries.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0));
  return { tool: "hcp-bot", version: 1, findings: entries.map(({ file, ruleId, fingerprint, message }) => ({ file, ruleId, fingerprint, message })) };
}

/** Parses a baseline's JSON text; a problem is a sentence naming the file. */
export function parseBaseline(text: string, name: string): { ok: true; baseline: Baseline } | { ok: false; problem: string } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `${name} is not JSON: ${(error as Error).message}` };
  }
  const parsed = BaselineSchema().safeParse(data);
  if (!parsed.success) return { ok: false, problem: `${name} is not an hcp-bot baseline (write one with --baseline-write): ${z.prettifyError(parsed.error).split("\n").join(" ")}` };
  return { ok: true, baseline: parsed.data };
}

/** The findings the baseline does not hold (each baseline entry absorbs one finding), and how many it absorbed. */
export function subtractBaseline(findings: readonly Finding[], baseline: Baseline, path: PathMap): { findings: Finding[]; baselined: number } {
  const left = new Map<string, number>();
  for (const e of baseline.findings) left.set(`${e.file}\u0000${e.fingerprint}`, (left.get(`${e.file}\u0000${e.fingerprint}`) ?? 0) + 1);
  const out: Finding[] = [];
  let baselined = 0;
  for (const f of findings) {
    const k = keyOf(f, path);
    const key = `${k.file}\u0000${k.fingerprint}`;
    const n = left.get(key) ?? 0;
    if (n > 0) {
      left.set(key, n - 1);
      baselined++;
    } else out.push(f);
  }
  return { findings: out, baselined };
}
