// `/hcp` commands: one grammar for GitHub PR comments and Slack (pure; no I/O).
export type * from "./types.ts";
export { parseCommentCommands, parseSlackCommand } from "./parse.ts";
export { resolveSmokeRequest, checkSource, shellLine, RUN_RECIPE, type SmokePlan, type ResolveResult } from "./resolve.ts";
export { helpText, type HelpOptions } from "./help.ts";
export {
  BUILTIN_KEYS,
  KEY_GRAMMAR,
  LIMITS,
  RESERVED_KEYS,
  RESERVED_PREFIXES,
  SUBCOMMANDS,
  VALUE_GRAMMAR,
  allowedKeyList,
  checkKeyList,
  isReserved,
} from "./grammar.ts";
