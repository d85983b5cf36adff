// How bench:edge starts the runtimes for its cold starts: the runtime binaries themselves
// (workerd and Deno from npm), as a deployment starts them, never a Node wrapper. workerd
// serves a config (capnp) with the built worker, its WebAssembly modules, the settings as
// bindings, the store's SQLite Durable Object on local disk and the JOBS queue binding;
// Deno runs the Deno entry with a local KV file. A hello world on each runtime is the floor.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { edgeModules } from "../../scripts/build-edge.ts";
import type { Launch } from "./cold-start.ts";

export interface LaunchOptions {
  /** A dist/edge folder (this tree's, or another checkout's for before/after figures). */
  edgeDir: string;
  /** Where configs go (fresh per start). */
  scratch: string;
  /**
   * The store's state (the Durable Object's SQLite, the KV file), kept across the starts of one
   * case: a restarted deployment opens the store it had; only the first start creates it.
   */
  stateDir: string;
  workerdBin: string;
  denoBin: string;
  /** The bot's settings (bindings on workerd, the environment on Deno). */
  env: Record<string, string>;
  compatibilityDate: string;
  /** Deno's working folder (where deno.json is). */
  cwd: string;
}

const HELLO_WORKER = "export default { fetch() { return new Response('ok'); } };";
// Accepts every message the worker sends to JOBS (nothing consumes them in a cold start).
const QUEUE_SINK = "export default { fetch() { return new Response(null, { status: 200 }); } };";

function workerdConfig(o: LaunchOptions, hello: boolean): string {
  const dir = mkdtempSync(join(o.scratch, hello ? "hello-" : "bot-"));
  // capnp embeds are relative to the config file.
  const rel = (name: string) => relative(dir, join(o.edgeDir, name));
  const modules = hello
    ? `[(name = "hello.js", esModule = ${JSON.stringify(HELLO_WORKER)})]`
    : `[${edgeModules("worker", o.edgeDir).map((js) => `(name = "${js}", esModule = embed "${rel(js)}")`).join(", ")},
        (name = "web-tree-sitter.wasm", wasm = embed "${rel("web-tree-sitter.wasm")}"),
        (name = "tree-sitter-python.wasm", wasm = embed "${rel("tree-sitter-python.wasm")}"),
        (name = "anchor-scan.wasm", wasm = embed "${rel("anchor-scan.wasm")}")]`;
  const settings = Object.entries(o.env).map(([k, v]) => `(name = "${k}", text = ${JSON.stringify(v)})`);
  const bindings = hello ? "[]" : `[${[...settings, `(name = "STORE", durableObjectNamespace = "HcpStore")`, `(name = "JOBS", queue = "jobs")`].join(", ")}]`;
  const storage = hello ? "" : `durableObjectNamespaces = [(className = "HcpStore", uniqueKey = "hcp-bot-store", enableSql = true)], durableObjectStorage = (localDisk = "disk"),`;
  const services = hello
    ? `[(name = "main", worker = .w)]`
    : `[(name = "main", worker = .w), (name = "disk", disk = (path = "${o.stateDir}", writable = true)),
        (name = "jobs", worker = (modules = [(name = "sink.js", esModule = ${JSON.stringify(QUEUE_SINK)})], compatibilityDate = "${o.compatibilityDate}"))]`;
  const file = join(dir, "config.capnp");
  writeFileSync(
    file,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = ${services},
  sockets = [(name = "http", http = (), service = "main")],
);
const w :Workerd.Worker = (modules = ${modules}, compatibilityDate = "${o.compatibilityDate}", bindings = ${bindings}, ${storage});
`,
  );
  return file;
}

/** `workerd serve CONFIG --socket-fd http=3`: the socket comes from the bench. */
export function workerdLaunch(o: LaunchOptions, hello: boolean): Launch {
  return {
    kind: "socket-fd",
    start: (fd) => spawn(o.workerdBin, ["serve", workerdConfig(o, hello), "--socket-fd", "http=3"], { stdio: ["ignore", "ignore", "inherit", fd] }),
  };
}

/** `deno run` of the Deno entry (or a hello world printing the same kind of line) on a fresh KV. */
export function denoLaunch(o: LaunchOptions, hello: boolean): Launch {
  const dir = mkdtempSync(join(o.scratch, hello ? "deno-hello-" : "deno-bot-"));
  const entry = hello ? join(dir, "hello.js") : join(o.edgeDir, "deno.js");
  if (hello) writeFileSync(entry, `Deno.serve({ hostname: "127.0.0.1", port: Number(Deno.env.get("PORT")), onListen() { console.log("hcp-bot listening"); } }, () => new Response("ok"));\n`);
  return {
    kind: "ready-line",
    ready: "hcp-bot listening",
    start: (port) =>
      spawn(o.denoBin, ["run", "--allow-net", "--allow-env", "--allow-read", "--allow-write", entry], {
        cwd: o.cwd,
        stdio: ["ignore", "pipe", "inherit"],
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "/tmp",
          DENO_NO_UPDATE_CHECK: "1",
          NO_COLOR: "1",
          ...(hello ? {} : o.env),
          HOST: "127.0.0.1",
          PORT: String(port),
          HCP_DATA_DIR: o.stateDir,
        },
      }),
  };
}
