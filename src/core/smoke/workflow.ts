// The smoke workflow a repository has installed, as the bot reads it from the default branch:
// whether it can be dispatched at all, the `workflow_dispatch` inputs it declares, and the
// template version it was rendered from. The bot sends only declared inputs (GitHub answers
// 422 "Unexpected inputs provided" otherwise) and says what it could not send. Pure: the
// GitHub layer reads the file, this decides.
import { parseDocument } from "yaml";
import * as z from "zod";
import type { SmokePlan } from "../commands/index.ts";
import { codeSpan } from "../render/escape.ts";
import { WORKFLOW_TEMPLATE_VERSION } from "./template-version.ts";

export { WORKFLOW_TEMPLATE_VERSION };

/** The upgrade, as the reply and the check run say it. */
export const UPGRADE_COMMAND = "npx hcp-bot init-workflow --force";
/** The first installation of the workflow. */
export const INIT_COMMAND = "npx hcp-bot init-workflow";

// `# hcp-bot workflow template: v2` (the header comment) or `· template v2` (the run-name).
const VERSION_COMMENT = /^#\s*hcp-bot workflow template:\s*v(\d{1,4})\s*$/m;
const VERSION_IN_RUN_NAME = /\btemplate v(\d{1,4})\b/;

// Built on first use: /healthz imports this module for the template version alone.
const InputSchema = z.lazy(() =>
  z
    .object({
      required: z.boolean().optional(),
      default: z.unknown().optional(),
      type: z.string().optional(),
      options: z.array(z.unknown()).optional(),
    })
    .loose(),
);

export type DeclaredInput = { required: boolean; hasDefault: boolean; type: string; options?: string[] };

export interface SmokeWorkflow {
  /** Inputs by name; empty when the trigger declares none. */
  inputs: Record<string, DeclaredInput>;
  /** The template version it carries; 1 when it carries none (rendered before versions were written). */
  version: number;
  runName: string | null;
}

export type WorkflowReading =
  | { ok: true; workflow: SmokeWorkflow }
  | { ok: false; problem: string };

/** The `on:` of a workflow (also under YAML 1.1's `true` key) as a list of event names plus the dispatch trigger's body. */
function dispatchTrigger(on: unknown): { present: boolean; body: unknown } {
  if (typeof on === "string") return { present: on === "workflow_dispatch", body: null };
  if (Array.isArray(on)) return { present: on.includes("workflow_dispatch"), body: null };
  if (on && typeof on === "object") {
    const events = on as Record<string, unknown>;
    return { present: "workflow_dispatch" in events, body: events.workflow_dispatch ?? null };
  }
  return { present: false, body: null };
}

function declaredInputs(body: unknown): Record<string, DeclaredInput> | string {
  const raw = body && typeof body === "object" ? (body as Record<string, unknown>).inputs : undefined;
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== "object" || Array.isArray(raw)) return "its workflow_dispatch inputs are not a mapping";
  const inputs: Record<string, DeclaredInput> = {};
  for (const [name, decl] of Object.entries(raw as Record<string, unknown>)) {
    const parsed = InputSchema.safeParse(decl ?? {});
    if (!parsed.success) return `its input ${name} is not a mapping of required/default/type`;
    const d = parsed.data;
    inputs[name] = {
      required: d.required === true,
      hasDefault: d.default !== undefined && d.default !== null && d.default !== "",
      type: d.type ?? "string",
      ...(d.options ? { options: d.options.map(String) } : {}),
    };
  }
  return inputs;
}

function templateVersion(text: string, runName: string | null): number {
  const m = VERSION_COMMENT.exec(text) ?? (runName ? VERSION_IN_RUN_NAME.exec(runName) : null);
  return m ? Number(m[1]) : 1;
}

/** Reads a workflow file's text; a problem says what makes it unusable for `/hcp smoke`. */
export function readSmokeWorkflow(text: string, path: string): WorkflowReading {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return { ok: false, problem: `${path} is not valid YAML (${doc.errors[0]!.message.split("\n")[0]})` };
  const data: unknown = doc.toJS();
  if (!data || typeof data !== "object" || Array.isArray(data)) return { ok: false, problem: `${path} is not a workflow (no mapping at its top level)` };
  const top = data as Record<string, unknown>;
  const trigger = dispatchTrigger(top.on ?? top.true);
  if (!trigger.present) {
    return { ok: false, problem: `${path} has no \`workflow_dispatch\` trigger, so hcp-bot cannot start it; render it again with \`${UPGRADE_COMMAND}\`` };
  }
  const inputs = declaredInputs(trigger.body);
  if (typeof inputs === "string") return { ok: false, problem: `${path}: ${inputs}` };
  const runName = typeof top["run-name"] === "string" ? top["run-name"] : null;
  return { ok: true, workflow: { inputs, version: templateVersion(text, runName), runName } };
}

/** What the bot wants to send, in the template's order. */
export type WantedInputs = ReadonlyArray<readonly [name: string, value: string]>;

/** Inputs without which a run cannot be the request's: the pinned commit and the id the run is bound by. */
const ESSENTIAL = new Set(["sha", "request_id"]);

/**
 * What a workflow that lacks an input does instead, for the reply. `asked` is the value the
 * bot wanted to send; a fallback that equals it changes nothing, and the text says so.
 */
const FALLBACKS: Readonly<Record<string, (asked: string) => string>> = {
  nproc: (asked) => `it runs smoke-run's default of 4 GPUs${asked === "4" ? " (the same as asked)" : `, not the ${asked} asked for`}`,
  iters: (asked) => `it runs smoke-run's default of 2 iterations${asked === "2" ? " (the same as asked)" : `, not the ${asked} asked for`}`,
  expect_hcp: (asked) => (asked === "true" ? "it expects HCP evidence, smoke-run's default (the same as asked)" : "it still requires HCP evidence (smoke-run's default), so a flat-CP run fails there; the bot's own verdict follows the request"),
  compare: (asked) => (asked === "none" ? "it runs the HCP layout alone (the same as asked)" : "it runs the HCP layout alone: there is no reference leg, so no comparison"),
  check_run_id: () => "nothing changes for the run (the id only labels it)",
  overrides: () => "it runs the recipe as written, without the requested overrides",
};

export interface DroppedInput {
  name: string;
  value: string;
  /** What the installed workflow does without it. */
  instead: string;
}

export type InputFit =
  | { ok: true; send: Record<string, string>; dropped: DroppedInput[] }
  | { ok: false; reason: string };

function checkValue(name: string, value: string, decl: DeclaredInput): string | null {
  if (decl.type === "boolean" && value !== "true" && value !== "false") return `input ${name} is a boolean there, and the bot would send ${JSON.stringify(value)}`;
  if (decl.type === "number" && !/^-?\d+(\.\d+)?$/.test(value)) return `input ${name} is a number there, and the bot would send ${JSON.stringify(value)}`;
  if (decl.type === "choice" && decl.options && !decl.options.includes(value)) {
    return `input ${name} accepts only ${decl.options.map((o) => JSON.stringify(o)).join(", ")} there, and the bot would send ${JSON.stringify(value)}`;
  }
  return null;
}

/**
 * The inputs to send to this workflow: the wanted ones it declares. Refused (before anything
 * is queued) when an essential input is not declared, when it requires an input the bot does
 * not know, or when a value would break a declared type. Generic over names, so an input a
 * newer hcp-bot adds is reported like the others when an older workflow lacks it.
 */
export function fitInputs(wanted: WantedInputs, workflow: SmokeWorkflow, path: string): InputFit {
  const declared = workflow.inputs;
  const ours = new Set(wanted.map(([name]) => name));
  const missingEssential = wanted.filter(([name]) => ESSENTIAL.has(name) && !(name in declared)).map(([name]) => name);
  if (missingEssential.length) {
    return { ok: false, reason: `${path} does not declare the input(s) ${missingEssential.map((n) => `\`${n}\``).join(", ")}, without which a run cannot be tied to the pinned commit and this request; upgrade it with \`${UPGRADE_COMMAND}\`` };
  }
  const unfillable = Object.entries(declared).filter(([name, d]) => d.required && !d.hasDefault && !ours.has(name)).map(([name]) => name);
  if (unfillable.length) {
    return { ok: false, reason: `${path} requires the input(s) ${unfillable.map((n) => `\`${n}\``).join(", ")}, which hcp-bot does not know how to fill; give them a default or render the workflow again with \`${UPGRADE_COMMAND}\`` };
  }
  const send: Record<string, string> = {};
  const dropped: DroppedInput[] = [];
  for (const [name, value] of wanted) {
    const decl = declared[name];
    if (!decl) {
      dropped.push({ name, value, instead: (FALLBACKS[name] ?? (() => "it runs without it"))(value) });
      continue;
    }
    const bad = checkValue(name, value, decl);
    if (bad) return { ok: false, reason: `${path}: ${bad}; render it again with \`${UPGRADE_COMMAND}\`` };
    send[name] = value;
  }
  return { ok: true, send, dropped };
}

/** The inputs the bot sends a workflow of the current template, in its order. */
export function smokeInputs(plan: Pick<SmokePlan, "recipe" | "overrides" | "gpus" | "iters" | "expectHcp" | "compare">, ids: { sha: string; pr: number; requestId: string; checkRunId: number | string }): WantedInputs {
  return [
    ["sha", ids.sha],
    ["pr", String(ids.pr)],
    ["recipe", plan.recipe],
    ["overrides", JSON.stringify(plan.overrides)],
    ["request_id", ids.requestId],
    ["check_run_id", String(ids.checkRunId)],
    ["nproc", String(plan.gpus)],
    ["iters", String(plan.iters)],
    ["expect_hcp", String(plan.expectHcp)],
    // Only for an A/B run, so a workflow without the input takes every other request without a note.
    ...(plan.compare !== "none" ? [["compare", plan.compare] as const] : []),
  ];
}

const shown = (d: DroppedInput) => codeSpan(d.value.length > 60 ? d.name : `${d.name}=${d.value}`);

/**
 * Markdown for the reply and the check run about inputs the installed workflow could not take
 * (values in code spans: overrides come from the comment).
 */
export function skewNote(dropped: readonly DroppedInput[], w: { path: string; version: number }): string | null {
  if (dropped.length === 0) return null;
  return [
    `**The installed workflow is older than this hcp-bot.** ${codeSpan(w.path)} (template v${w.version}; hcp-bot renders v${WORKFLOW_TEMPLATE_VERSION}) does not take ${dropped.map((d) => codeSpan(d.name)).join(", ")}, so the bot did not send ${dropped.length === 1 ? "it" : "them"}:`,
    "",
    ...dropped.map((d) => `- ${shown(d)}: ${d.instead}`),
    "",
    `Upgrade it with ${codeSpan(UPGRADE_COMMAND)} and commit it to the default branch.`,
  ].join("\n");
}

/** How an installed workflow's template version stands to the one this hcp-bot renders. */
export type VersionRelation = "current" | "older" | "newer";

export function versionRelation(version: number): VersionRelation {
  return version === WORKFLOW_TEMPLATE_VERSION ? "current" : version < WORKFLOW_TEMPLATE_VERSION ? "older" : "newer";
}

/** What `/hcp status` says of the installed smoke workflow, on GitHub and in Slack alike (each renders it). */
export type WorkflowStatus =
  | { kind: "missing"; path: string; branch: string }
  | { kind: "unusable"; path: string; problem: string }
  | { kind: "found"; path: string; version: number; template: number; relation: VersionRelation };

/** A sentence for `/hcp status` and /healthz when the installed workflow is not the bot's version. */
export function versionNote(w: { path: string; version: number }): string | null {
  const relation = versionRelation(w.version);
  if (relation === "current") return null;
  return relation === "older"
    ? `The installed smoke workflow ${w.path} is template v${w.version}, older than this hcp-bot's v${WORKFLOW_TEMPLATE_VERSION}: upgrade it with \`${UPGRADE_COMMAND}\`.`
    : `The installed smoke workflow ${w.path} is template v${w.version}, newer than this hcp-bot's v${WORKFLOW_TEMPLATE_VERSION}: upgrade hcp-bot.`;
}
