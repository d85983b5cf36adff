// Mounts the web pages into the Node server: the handler chain gets the playground, the
// runs pages (setup mode links the playground from its own page, src/server/setup.ts).
import type { Server } from "probot";
import type { ServerSettings } from "./env.ts";
import type { Store } from "../store/types.ts";
import type { Log } from "../shared/log.ts";
import { nodeWebHandler } from "../web/node.ts";
import { createWebHandler, isWebPath } from "../web/server/index.ts";
import { createStaticFiles, type StaticFiles } from "../web/server/static.ts";

export interface WebPages {
  files: StaticFiles;
}


export function mountWeb(server: Server, settings: ServerSettings, store: Store | undefined, log: Pick<Log, "error">): WebPages {
  const files = createStaticFiles({ log });
  const github = { webUrl: settings.web.githubWebUrl, apiUrl: settings.baseUrl };
  const landing = settings.mode === "app";
  server.addHandler(nodeWebHandler(createWebHandler({ files, runs: { access: settings.web.runs, store, github }, landing }), (path) => isWebPath(path) || (landing && path === "/")));
  return { files };
}
