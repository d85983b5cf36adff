// What `/hcp ...` means once parsed: shared by the GitHub comment front door and the
// Slack slash command. Every problem is a value ({ok:false, error}), never a throw, so
// an adapter can always answer the person who typed the command.

/** A value an override may take, as Hydra reads it (see grammar.ts for the text grammar). */
export type OverrideScalar = number | boolean | null | string;
export type OverrideValue = OverrideScalar | OverrideScalar[];

/** One `KEY=VALUE` Hydra override that passed the key allowlist and the value grammar. */
export interface Override {
  key: string;
  /** The value exactly as written; it matches VALUE_GRAMMAR, so it is shell-safe unquoted except for lists. */
  text: string;
  value: OverrideValue;
}

/** `OWNER/REPO#PR`, given on Slack (GitHub comments act on their own pull request). */
export interface PrTarget {
  owner: string;
  repo: string;
  pr: number;
}

export interface SmokeCommand {
  kind: "smoke";
  target?: PrTarget;
  recipe?: string;
  cp?: number;
  /** undefined: the repo default; null: no hierarchical sizes (only with a cp_comm_type other than a2a+p2p). */
  sizes?: [number, number] | null;
  iters?: number;
  gpus?: number;
  /** The commit the person names (7 to 40 hex digits): it must be the PR's head. */
  sha?: string;
  /** `compare=p2p|a2a|none`: a reference leg after the HCP leg (undefined: the repository's smoke.compare). */
  compare?: "none" | "p2p" | "a2a";
  /** User overrides in the order given, without the ones folded into cp/sizes above. */
  overrides: Override[];
  dryRun: boolean;
}

export interface CancelCommand {
  kind: "cancel";
  target?: PrTarget;
}

export interface StatusCommand {
  kind: "status";
  target?: PrTarget;
}

export interface HelpCommand {
  kind: "help";
}

/**
 * `/hcp check`: nothing (check this PR, GitHub only), a launch line, or KEY=VALUE
 * overrides. Checking runs only the analyzer, so its input is never executed.
 */
export type CheckInput =
  | { form: "pr" }
  | { form: "launch"; text: string }
  | { form: "overrides"; overrides: Override[] };

export interface CheckCommand {
  kind: "check";
  input: CheckInput;
}

/** `/hcp advise cp=N ...`: the layout advisor's numbers; nothing runs and nothing is read from the PR. */
export interface AdviseCommand {
  kind: "advise";
  cp: number;
  tp?: number;
  pp?: number;
  heads?: number;
  kvHeads?: number;
  /** GPUs of one NVLink domain, and whether it was given as a node (gpus_per_node) or a domain (nvlink_domain). */
  domainGpus?: number;
  domain?: "node" | "nvlink";
  nodes?: number;
}

export type Command = SmokeCommand | CancelCommand | StatusCommand | HelpCommand | CheckCommand | AdviseCommand;
export type CommandKind = Command["kind"];

/** Where the command was found, for replies ("line 3: ..."); `raw` is cut to a safe length. */
export interface CommandSource {
  /** 1-based line in the comment; 1 for Slack. */
  line: number;
  raw: string;
}

export type ParsedCommand =
  | ({ ok: true; command: Command } & CommandSource)
  | ({ ok: false; error: string; kind?: CommandKind } & CommandSource);

export interface ParseOptions {
  /** The repo config's `smoke.allowed_keys` (read from the default branch), added to the built-in allowlist. */
  allowedKeys?: readonly string[];
}
