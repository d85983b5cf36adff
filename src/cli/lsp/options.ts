// The editor server's settings: `initializationOptions` the editor sends (checked here, at
// the boundary), over the command line's `--config FILE` / `--isolated`. The rules' settings
// themselves are never set here: they come from the repository's `.github/hcp-bot.yml` or
// `[tool.hcp-bot]`, as for lint, the App and the Action.
import { resolve } from "node:path";
import * as z from "zod";
import type { ConfigChoice } from "../../node/lint-config.ts";
import { UsageError } from "../args.ts";

export interface ServerOptions {
  config: ConfigChoice;
  /** How long a document must rest after a change before it is analyzed. */
  debounceMs: number;
}

/**
 * Short, so one keystroke answers well inside bench:lsp's 50 ms; the changes an editor sends
 * back to back (a multi-cursor edit, a completion and its extra edits) still fold into one
 * analysis, and typing faster than an analysis folds anyway (scheduler.ts).
 */
export const DEFAULT_DEBOUNCE_MS = 5;

const InitOptions = z
  .object({
    /** A settings file (a .github/hcp-bot.yml, or a pyproject.toml with [tool.hcp-bot]) for every document, like lint --config. */
    config: z.string().min(1).optional(),
    /** Read no settings file, like lint --isolated. */
    isolated: z.boolean().optional(),
    debounceMs: z.number().int().min(0).max(10_000).optional(),
  })
  .loose();

export interface ServerFlags {
  config?: string;
  isolated: boolean;
}

/** `server --stdio [--config FILE | --isolated]`. */
export function readServerFlags(argv: readonly string[]): ServerFlags {
  const flags: ServerFlags = { isolated: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--stdio") continue;
    if (arg === "--isolated") flags.isolated = true;
    else if (arg === "--config" || arg.startsWith("--config=")) {
      const value = arg === "--config" ? argv[++i] : arg.slice("--config=".length);
      if (!value) throw new UsageError("--config needs a settings file");
      flags.config = resolve(value); // before the server moves to the workspace root
    } else if (arg.startsWith("--clientProcessId")) {
      // Some clients add it; vscode-languageserver reads it to exit with the editor.
      if (arg === "--clientProcessId") i++;
    } else throw new UsageError(`server takes --stdio, --config FILE and --isolated, not ${arg}`);
  }
  if (flags.isolated && flags.config !== undefined) throw new UsageError("--config and --isolated exclude each other");
  return flags;
}

/** Unusable initializationOptions are named in the editor's log and the defaults used: the editor must still get diagnostics. */
export function readServerOptions(init: unknown, flags: ServerFlags, warn: (message: string) => void): ServerOptions {
  const parsed = InitOptions.safeParse(init ?? {});
  if (!parsed.success) warn(`hcp-bot: initializationOptions ignored: ${z.prettifyError(parsed.error)}`);
  const given = parsed.success ? parsed.data : {};
  const isolated = given.isolated ?? flags.isolated;
  const file = given.config ?? flags.config;
  const config: ConfigChoice = isolated ? { mode: "isolated" } : file !== undefined ? { mode: "file", path: file } : { mode: "discover" };
  return { config, debounceMs: given.debounceMs ?? DEFAULT_DEBOUNCE_MS };
}
