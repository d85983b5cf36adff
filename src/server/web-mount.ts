// Mounts the web pages into the Node server: the handler chain gets the playground, the
// runs pages and, in setup mode, the link from Probot's setup page.
import type { Server } from "probot";
import type { ServerSettings } from "./env.ts";
import type { Store } from "../store/types.ts";
import { linkFromSetupPage, nodeWebHandler } from "../web/node.ts";
import { createWebHandler, isWebPath } from "../web/server/index.ts";
import { createStaticFiles, type StaticFiles } from "../web/server/static.ts";

export interface WebPages {
  files: StaticFiles;
}

type Log = { error(obj: object, msg?: string): void };

export function mountWeb(server: Server, settings: ServerSettings, store: Store | undefined, log: Log): WebPages {
  const files = createStaticFiles({ log });
  if (settings.mode === "setup") server.addHandler(linkFromSetupPage);
  const github = { webUrl: settings.web.githubWebUrl, apiUrl: settings.baseUrl };
  server.addHandler(nodeWebHandler(createWebHandler({ files, runs: { access: settings.web.runs, store, github } }), isWebPath));
  return { files };
}
