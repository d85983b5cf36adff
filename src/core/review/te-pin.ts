// HCP015: a pull request that moves the Transformer Engine pin changes what HCP can do
// (a2a+p2p needs TE >= 1.12; THD with a2a+p2p only from 2.19), so it earns a smoke run.
// This looks at the PR's diff, not at one configuration, so it is a note on the PR.
import type { Finding } from "../model/finding.ts";
import { parsePatch } from "./diff.ts";

export interface ChangedFile {
  filename: string;
  status: string;
  patch?: string;
}

const TE_LINE = /transformer[-_]engine|TE_VERSION|BASE_IMAGE/i;

function isPinFile(name: string): boolean {
  const base = name.slice(name.lastIndexOf("/") + 1).toLowerCase();
  return base === "uv.lock" || base === "pyproject.toml" || /^requirements.*\.txt$/.test(base) || base.startsWith("dockerfile");
}

const PACKAGE_NAME = /^\s*name\s*=\s*"([^"]+)"/;
const VERSION_LINE = /^\s*(version|source)\s*=/;

/**
 * The first added line of the patch that changes the pin, with its new-file line number:
 * a line naming Transformer Engine, or a uv.lock `version =` line inside its [[package]].
 */
function firstPinLine(patch: string | undefined): { line: number; text: string } | undefined {
  if (!patch) return undefined;
  const hunks = parsePatch(patch);
  let hunk = -1;
  let line = 0;
  let inTePackage = false;
  for (const raw of patch.split("\n")) {
    if (raw.startsWith("@@")) {
      hunk++;
      line = hunks[hunk]?.newStart ?? 0;
      inTePackage = false;
      continue;
    }
    const body = raw.slice(1);
    const name = PACKAGE_NAME.exec(body);
    if (name && !raw.startsWith("-")) inTePackage = /^transformer[-_]engine$/i.test(name[1]!);
    if (raw.startsWith("+") && (TE_LINE.test(body) || (inTePackage && VERSION_LINE.test(body)))) return { line, text: body.trim() };
    if (raw.startsWith("+") || raw.startsWith(" ") || raw === "") line++;
  }
  return undefined;
}

function note(file: string, line: number, message: string): Finding {
  const point = { line, column: 1, offset: 0 };
  return {
    ruleId: TE_PIN_NOTE.id,
    ruleName: TE_PIN_NOTE.name,
    severity: "info",
    message,
    location: { file, range: { start: point, end: point } },
    unitId: file,
    unitName: "dependency pins",
    related: [],
  };
}

export function tePinChangeNotes(files: readonly ChangedFile[]): Finding[] {
  const notes: Finding[] = [];
  for (const f of files) {
    if (f.filename === "3rdparty/Megatron-LM" || /^Subproject commit/m.test(f.patch ?? "")) {
      notes.push(note(f.filename, 1, `This PR moves the ${f.filename} submodule, which carries the Transformer Engine pin at Megatron-Bridge HEAD. Comment \`/hcp smoke\` to check that HCP still trains (THD with a2a+p2p needs TE >= 2.19).`));
      continue;
    }
    if (!isPinFile(f.filename)) continue;
    const hit = firstPinLine(f.patch);
    if (hit) {
      notes.push(note(f.filename, hit.line, `This PR changes the Transformer Engine pin (\`${hit.text.slice(0, 120)}\`). Comment \`/hcp smoke\` to check that HCP still trains: a2a+p2p needs TE >= 1.12 and THD with a2a+p2p needs TE >= 2.19.`));
    }
  }
  return notes;
}

/** HCP015's documentation, for `hcp-bot explain HCP015` and the PR note it explains. */
export const TE_PIN_NOTE = {
  id: "HCP015",
  name: "te-pin-changed",
  severity: "info",
  doc: {
    checks:
      "A pull request whose diff moves the Transformer Engine pin: an added line naming transformer-engine/TE_VERSION/BASE_IMAGE " +
      "in uv.lock, pyproject.toml, requirements*.txt or a Dockerfile, a uv.lock version line of the transformer-engine package, " +
      "or a move of the 3rdparty/Megatron-LM submodule. It is a note on the PR, not a finding on one configuration.",
    why:
      "What HCP can do depends on Transformer Engine: cp_comm_type 'a2a+p2p' exists from TE v1.12 (PR #1209), and THD (packed " +
      "sequences) with a2a+p2p only from TE commit 8ff60f8 (PR #3290), first in release_v2.19. A pin change can turn a working " +
      "HCP setup into a failing one, or the reverse, without any recipe changing.",
    example: '-    "transformer-engine==2.18.0",\n+    "transformer-engine==2.15.0",',
    fix: "Comment `/hcp smoke` on the PR to check that the HCP configurations still train with the new pin.",
  },
} as const;
