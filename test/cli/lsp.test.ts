// `hcp-bot server --stdio` driven by a real LSP client library (vscode-languageserver-protocol)
// over the child's stdin and stdout: open a recipe with a mistake, get its diagnostics, ask for
// the quick fix, apply it, change the document, and see the diagnostics go; hover, suppressions,
// the settings file, a syntax error and the exit status, as an editor sees them.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CodeActionRequest,
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidChangeWatchedFilesNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  HoverRequest,
  InitializedNotification,
  InitializeRequest,
  PublishDiagnosticsNotification,
  RegistrationRequest,
  type RegistrationParams,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type CodeAction,
  type Diagnostic,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from "vscode-languageserver-protocol/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { bin, hcpBot, root } from "../support/cli.ts";

/** The upstream-style recipe module of the CLI tests: broken_hcp_pretrain_config sets a2a+p2p without sizes (HCP001). */
const RECIPE = readFileSync(join(root, "fixtures", "cli", "hcp_recipes.py"), "utf8");
const BROKEN_LINE = '    cfg.model.cp_comm_type = "a2a+p2p"\n    return cfg\n\n\ndef good';

/** A client that keeps every publishDiagnostics and lets a test await the one it expects. */
class Client {
  readonly connection: ProtocolConnection;
  private readonly published: PublishDiagnosticsParams[] = [];
  private waiters: Array<{ test: (p: PublishDiagnosticsParams) => boolean; resolve: (p: PublishDiagnosticsParams) => void }> = [];
  readonly exited: Promise<number | null>;
  stderr = "";

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    this.connection = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    this.connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
      this.published.push(p);
      this.waiters = this.waiters.filter((w) => (w.test(p) ? (w.resolve(p), false) : true));
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => (this.stderr += d));
    this.exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
    this.connection.listen();
  }

  /** The diagnostics published for `uri` at `version` (already received, or the next such). */
  diagnostics(uri: string, version: number): Promise<Diagnostic[]> {
    const test = (p: PublishDiagnosticsParams) => p.uri === uri && p.version === version;
    const seen = this.published.find(test);
    if (seen) return Promise.resolve(seen.diagnostics);
    return new Promise<PublishDiagnosticsParams>((resolve) => this.waiters.push({ test, resolve })).then((p) => p.diagnostics);
  }

  /** The next diagnostics published for `uri` after those already received. */
  next(uri: string): Promise<Diagnostic[]> {
    const seen = this.publishedFor(uri).length;
    // Checked after the publication is kept, so a new one makes the count pass `seen`.
    const test = (p: PublishDiagnosticsParams) => p.uri === uri && this.publishedFor(uri).length > seen;
    return new Promise<PublishDiagnosticsParams>((resolve) => this.waiters.push({ test, resolve })).then((p) => p.diagnostics);
  }

  publishedFor(uri: string): PublishDiagnosticsParams[] {
    return this.published.filter((p) => p.uri === uri);
  }
}

let dir: string;
let client: Client;
let registered: Promise<RegistrationParams>;
const versions = new Map<string, number>();

function uriOf(name: string): string {
  return pathToFileURL(join(dir, name)).href;
}

async function open(name: string, text: string, languageId = "python"): Promise<Diagnostic[]> {
  mkdirSync(join(dir, name, ".."), { recursive: true });
  writeFileSync(join(dir, name), text);
  versions.set(name, 1);
  await client.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri: uriOf(name), languageId, version: 1, text } });
  return client.diagnostics(uriOf(name), 1);
}

const ids = (ds: readonly Diagnostic[]) => ds.map((d) => d.code);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hcp-lsp-"));
  // A repository root, so the walk for settings files stops here.
  mkdirSync(join(dir, ".git"));
  const child = spawn(process.execPath, [bin, "server", "--stdio"], { cwd: dir, stdio: ["pipe", "pipe", "pipe"] });
  client = new Client(child);
  registered = new Promise((resolve) =>
    client.connection.onRequest(RegistrationRequest.type, (params) => {
      resolve(params);
    }),
  );
  const init = await client.connection.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: pathToFileURL(dir).href,
    workspaceFolders: [{ uri: pathToFileURL(dir).href, name: "recipes" }],
    capabilities: { workspace: { didChangeWatchedFiles: { dynamicRegistration: true } } },
  });
  expect(init.serverInfo?.name).toBe("hcp-bot");
  expect(init.capabilities.hoverProvider).toBe(true);
  await client.connection.sendNotification(InitializedNotification.type, {});
});

afterAll(() => {
  client?.connection.dispose();
  if (client && client.child.exitCode === null) client.child.kill();
  rmSync(dir, { recursive: true, force: true });
});

describe("hcp-bot server --stdio", () => {
  it("reports HCP001 on open, offers its fix as a quick fix, and the diagnostic goes once the fix is applied", async () => {
    const uri = uriOf("recipe.py");
    const first = await open("recipe.py", RECIPE);
    const hcp001 = first.find((d) => d.code === "HCP001");
    expect(hcp001, JSON.stringify(first)).toBeDefined();
    expect(hcp001!.source).toBe("hcp-bot");
    expect(hcp001!.severity).toBe(1);
    // The line of `cfg.model.cp_comm_type = "a2a+p2p"` in broken_hcp_pretrain_config (0-based).
    expect(hcp001!.range.start.line).toBe(RECIPE.split("\n").indexOf('    cfg.model.cp_comm_type = "a2a+p2p"'));

    const actions = (await client.connection.sendRequest(CodeActionRequest.type, {
      textDocument: { uri },
      range: hcp001!.range,
      context: { diagnostics: [hcp001!], only: ["quickfix"] },
    })) as CodeAction[];
    const fix = actions.find((a) => a.isPreferred && a.title.startsWith("HCP001"));
    expect(fix, JSON.stringify(actions.map((a) => a.title))).toBeDefined();
    expect(fix!.title).toMatch(/hierarchical_context_parallel_sizes/);
    const edits = fix!.edit!.changes![uri]!;
    expect(edits.length).toBeGreaterThan(0);

    // Applied as an editor would, then sent as incremental changes from the end of the text backwards.
    const before = TextDocument.create(uri, "python", 1, RECIPE);
    const fixed = TextDocument.applyEdits(before, edits);
    expect(fixed).toMatch(/hierarchical_context_parallel_sizes = \[2, 2\]\n    return cfg\n\n\ndef good/);
    const backwards = [...edits].sort((a, b) => b.range.start.line - a.range.start.line || b.range.start.character - a.range.start.character);
    await client.connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: 2 },
      contentChanges: backwards.map((e) => ({ range: e.range, text: e.newText })),
    });
    const after = await client.diagnostics(uri, 2);
    expect(ids(after)).not.toContain("HCP001");
    expect(after.filter((d) => d.severity === 1)).toEqual([]);
  });

  it("answers a burst of changes with the diagnostics of the newest text", async () => {
    const uri = uriOf("burst.py");
    expect(ids(await open("burst.py", RECIPE))).toContain("HCP001");
    const texts = ['"p2p"', '"a2a"', '"a2a+p2p"', '"p2p"'].map((value) => RECIPE.replace(BROKEN_LINE, BROKEN_LINE.replace('"a2a+p2p"', value)));
    await Promise.all(texts.map((text, i) => client.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version: i + 2 }, contentChanges: [{ text }] })));
    const last = await client.diagnostics(uri, texts.length + 1);
    expect(ids(last)).not.toContain("HCP001");
    // Every publication is of a version the editor had when it was sent, and the newest comes last.
    const seen = client.publishedFor(uri).map((p) => p.version);
    expect(seen.at(-1)).toBe(texts.length + 1);
    expect(seen).toEqual([...seen].sort((a, b) => a! - b!));
  });

  it("shows the rule's doc on hover over a finding, and nothing elsewhere", async () => {
    const uri = uriOf("hover.py");
    const hcp001 = (await open("hover.py", RECIPE)).find((d) => d.code === "HCP001")!;
    const hover = await client.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: hcp001.range.start });
    const text = typeof hover?.contents === "object" && "value" in hover.contents ? hover.contents.value : "";
    expect((hover?.contents as { kind?: string }).kind).toBe("plaintext");
    expect(text).toMatch(/^HCP001 a2a-p2p-without-sizes \(error\)/);
    expect(text).toContain("What it checks");
    expect(text).toContain("hierarchical_context_parallel_sizes");
    expect(await client.connection.sendRequest(HoverRequest.type, { textDocument: { uri }, position: { line: 0, character: 0 } })).toBeNull();
  });

  it("honours `# noqa: HCP001` on the reported line", async () => {
    const text = RECIPE.replace(BROKEN_LINE, BROKEN_LINE.replace('"a2a+p2p"\n', '"a2a+p2p"  # noqa: HCP001\n'));
    const found = await open("noqa.py", text);
    expect(ids(found)).not.toContain("HCP001");
    expect(ids(found)).not.toContain("HCP100");
  });

  it("offers a `# noqa` quick fix that hides the finding once applied", async () => {
    const uri = uriOf("add-noqa.py");
    const hcp001 = (await open("add-noqa.py", RECIPE)).find((d) => d.code === "HCP001")!;
    const actions = (await client.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: hcp001.range, context: { diagnostics: [hcp001] } })) as CodeAction[];
    const noqa = actions.find((a) => a.title.includes("# noqa: HCP001"))!;
    const text = TextDocument.applyEdits(TextDocument.create(uri, "python", 1, RECIPE), noqa.edit!.changes![uri]!);
    expect(text).toContain('"a2a+p2p"  # noqa: HCP001\n');
    await client.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version: 2 }, contentChanges: [{ text }] });
    expect(ids(await client.diagnostics(uri, 2))).not.toContain("HCP001");
  });

  it("reads rules.ignore from the .github/hcp-bot.yml above the file, as lint does", async () => {
    mkdirSync(join(dir, "team", ".github"), { recursive: true });
    writeFileSync(join(dir, "team", ".github", "hcp-bot.yml"), "rules:\n  ignore: [HCP001]\n");
    const found = await open(join("team", "recipe.py"), RECIPE);
    expect(ids(found)).not.toContain("HCP001");
    expect(ids(found)).toContain("HCP009"); // the rest of the rules still run there
  });

  it("judges open documents again when a settings file changes on disk", async () => {
    // The server asks the client to watch the settings files, which are seldom open in the editor.
    const { registrations } = await registered;
    expect(registrations.map((r) => r.method)).toEqual(["workspace/didChangeWatchedFiles"]);
    expect(JSON.stringify(registrations[0]!.registerOptions)).toContain("**/.github/hcp-bot.{yml,yaml}");
    const uri = uriOf(join("later", "recipe.py"));
    expect(ids(await open(join("later", "recipe.py"), RECIPE))).toContain("HCP001");
    mkdirSync(join(dir, "later", ".github"), { recursive: true });
    writeFileSync(join(dir, "later", ".github", "hcp-bot.yml"), "rules:\n  ignore: [HCP001]\n");
    const again = client.next(uri);
    await client.connection.sendNotification(DidChangeWatchedFilesNotification.type, { changes: [{ uri: uriOf(join("later", ".github", "hcp-bot.yml")), type: 1 }] });
    expect(ids(await again)).not.toContain("HCP001");
  });

  it("offers one action that applies every fix of the file, as lint --fix would", async () => {
    const uri = uriOf("fix-all.py");
    expect(ids(await open("fix-all.py", RECIPE))).toContain("HCP001");
    const whole = { start: { line: 0, character: 0 }, end: { line: RECIPE.split("\n").length, character: 0 } };
    const actions = (await client.connection.sendRequest(CodeActionRequest.type, { textDocument: { uri }, range: whole, context: { diagnostics: [], only: ["source.fixAll"] } })) as CodeAction[];
    expect(actions.map((a) => a.kind)).toEqual(["source.fixAll.hcp-bot"]);
    const text = TextDocument.applyEdits(TextDocument.create(uri, "python", 1, RECIPE), actions[0]!.edit!.changes![uri]!);
    await client.connection.sendNotification(DidChangeTextDocumentNotification.type, { textDocument: { uri, version: 2 }, contentChanges: [{ text }] });
    expect(ids(await client.diagnostics(uri, 2))).not.toContain("HCP001");
  });

  it("checks YAML overrides and launch scripts too", async () => {
    const yaml = readFileSync(join(root, "fixtures", "playground", "hcp002.yaml"), "utf8");
    expect(ids(await open("override.yaml", yaml, "yaml"))).toContain("HCP002");
    const launch = readFileSync(join(root, "fixtures", "playground", "hcp006.sh"), "utf8");
    expect(ids(await open("launch.sh", launch, "shellscript"))).toContain("HCP006");
  });

  it("gives a file with a syntax error one diagnostic saying what was not analyzed, and keeps serving", async () => {
    copyFileSync(join(root, "fixtures", "recipes", "python", "syntax_error.py"), join(dir, "broken.py"));
    const found = await open("broken.py", readFileSync(join(dir, "broken.py"), "utf8"));
    expect(found).toHaveLength(1);
    expect(found[0]!.code).toBe("parse-error");
    expect(found[0]!.message).toMatch(/not analyzed/);
    expect(found[0]!.range.start.line).toBe(12);
    expect(ids(await open("after-broken.py", RECIPE))).toContain("HCP001");
  });

  it("a bad settings file is one error diagnostic naming it, not silence", async () => {
    mkdirSync(join(dir, "bad", ".github"), { recursive: true });
    writeFileSync(join(dir, "bad", ".github", "hcp-bot.yml"), "rules:\n  ignore: 7\n");
    const found = await open(join("bad", "recipe.py"), RECIPE);
    expect(found).toHaveLength(1);
    expect(found[0]!.severity).toBe(1);
    expect(found[0]!.message).toMatch(/^not analyzed: .*hcp-bot\.yml/);
  });

  it("ends with status 0 after shutdown and exit", async () => {
    await client.connection.sendRequest(ShutdownRequest.type);
    await client.connection.sendNotification(ExitNotification.type);
    expect(await client.exited).toBe(0);
  });
});

describe("hcp-bot server without --stdio", () => {
  it("is a usage error (exit 2) naming the transport", async () => {
    const r = await hcpBot(["server"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--stdio/);
  });
});
