// The settings a lint reads: `.github/hcp-bot.yml` or pyproject.toml's `[tool.hcp-bot]`, the
// nearest above each linted file (ruff's and ESLint's way), or the one `--config` names, or
// none with `--isolated`. The schema is the App's (src/core/config/repo-config.ts); this holds
// only the finding and reading. The schema's module (and zod with it) loads only once a file is
// found, so a lint in a folder without one pays nothing for it (bench:cli).
import { basename, dirname, join, resolve } from "node:path";
import type { RepoConfig } from "../core/config/repo-config.ts";
import { readBytes } from "./fs-callbacks.ts";
import { displayPath, InputError } from "./files.ts";

export interface FoundConfig {
  /** The file, as lint shows paths (relative to the working folder when below it). */
  path: string;
  config: RepoConfig;
}

export type ConfigChoice = { mode: "discover" } | { mode: "isolated" } | { mode: "file"; path: string };

type RepoConfigModule = typeof import("../core/config/repo-config.ts");
let schemaModule: Promise<RepoConfigModule> | undefined;
const loadSchema = (): Promise<RepoConfigModule> => (schemaModule ??= import("../core/config/repo-config.ts"));

async function readText(path: string): Promise<string | undefined> {
  try {
    return (await readBytes(path)).toString("utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return undefined;
    throw new InputError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/** Reads one settings file; a pyproject.toml without `[tool.hcp-bot]` is no settings file (undefined). Bad settings are an InputError naming the problem. */
export async function readConfigFile(path: string, { required }: { required: boolean }): Promise<FoundConfig | undefined> {
  const text = await readText(path);
  if (text === undefined) {
    if (required) throw new InputError(`cannot read ${path}: no such file`);
    return undefined;
  }
  const schema = await loadSchema();
  const shown = displayPath(path);
  const result = basename(path) === "pyproject.toml" ? schema.parsePyprojectConfig(text, shown) : schema.parseRepoConfig(text, shown);
  if (result === undefined) {
    if (required) throw new InputError(`${path} has no [${schema.PYPROJECT_TABLE}] table`);
    return undefined;
  }
  if (!result.ok) throw new InputError(result.problem);
  return { path: shown, config: result.config };
}

/** The settings of one folder itself: its `.github/hcp-bot.yml`, else its pyproject.toml's table. */
async function configIn(dir: string): Promise<FoundConfig | undefined> {
  return (await readConfigFile(join(dir, ".github", "hcp-bot.yml"), { required: false })) ?? (await readConfigFile(join(dir, "pyproject.toml"), { required: false }));
}

/** Finds each file's settings by walking up from its folder; folders already looked at are not read again. */
export class ConfigFinder {
  private readonly byDir = new Map<string, Promise<FoundConfig | undefined>>();

  constructor(private readonly choice: ConfigChoice) {}

  async forFile(file: string): Promise<FoundConfig | undefined> {
    const choice = this.choice;
    switch (choice.mode) {
      case "isolated":
        return undefined;
      case "file":
        return this.nearest(choice.path, () => readConfigFile(resolve(choice.path), { required: true }));
      case "discover":
        return this.above(dirname(resolve(file)));
    }
  }

  private nearest(key: string, read: () => Promise<FoundConfig | undefined>): Promise<FoundConfig | undefined> {
    let found = this.byDir.get(key);
    if (!found) this.byDir.set(key, (found = read()));
    return found;
  }

  private above(dir: string): Promise<FoundConfig | undefined> {
    return this.nearest(dir, async () => {
      const here = await configIn(dir);
      if (here) return here;
      const parent = dirname(dir);
      return parent === dir ? undefined : this.above(parent);
    });
  }
}
