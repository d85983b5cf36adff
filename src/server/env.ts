// The Node server's settings: the shared environment settings, with PRIVATE_KEY_PATH read
// from the file system.
import { readFileSync } from "node:fs";
import { readSettings, type ServerSettings } from "../github/settings.ts";

export { SettingsError, type RunsAccess, type ServerSettings, type SlackSettings, type WebSettings } from "../github/settings.ts";

export function readServerSettings(env: Record<string, string | undefined>): ServerSettings {
  return readSettings(env, (path) => readFileSync(path, "utf8"));
}
