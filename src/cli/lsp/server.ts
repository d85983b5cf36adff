// `hcp-bot server --stdio`: the Language Server Protocol over stdin/stdout (the
// vscode-languageserver package). Recipes, YAML overrides and launch scripts are analyzed as
// they are typed, under the same settings and suppressions as `hcp-bot lint`; findings are
// diagnostics, their fixes quick fixes, and a hover on one shows the rule's doc. Loaded only
// for this command (src/cli.ts), so lint's start-up never pays for the protocol library.
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { format } from "node:util";
import { createConnection, DidChangeWatchedFilesNotification, ProposedFeatures, type Connection, TextDocuments, TextDocumentSyncKind, type InitializeParams, type InitializeResult } from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import type { AnalysisReport } from "../../core/analyze/index.ts";
import { classifyFile } from "../../core/analyze/classify.ts";
import type { SourceFile } from "../../core/model/source.ts";
import { displayPath } from "../../node/files.ts";
import { VERSION } from "../../version.ts";
import { UsageError } from "../args.ts";
import { createDocumentAnalyzer, type DocumentAnalysis, type DocumentAnalyzer } from "./analyze-document.ts";
import { codeActions, FIX_ALL, hoverAt, notAnalyzedDiagnostic, QUICK_FIX, toDiagnostics } from "./convert.ts";
import { readServerFlags, readServerOptions, type ServerOptions } from "./options.ts";
import { AnalysisScheduler, type Snapshot } from "./scheduler.ts";

/** What was last published for a document: the text it was judged on and the report. */
interface Judged {
  version: number;
  file: SourceFile;
  report?: AnalysisReport;
}

const SETTINGS_FILE = /(?:^|\/)(?:\.github\/hcp-bot\.ya?ml|pyproject\.toml)$/;

export async function serverCommand(argv: readonly string[]): Promise<number> {
  const flags = readServerFlags(argv);
  if (!argv.includes("--stdio")) throw new UsageError("server needs --stdio (the editor talks to it over stdin and stdout)");
  // Given the streams (not left to read --stdio from process.argv), the connection also ends the process when stdin closes.
  const connection = createConnection(ProposedFeatures.all, process.stdin, process.stdout);
  keepConsoleOffStdout(connection);
  const documents = new TextDocuments(TextDocument);
  const judged = new Map<string, Judged>();
  const paths = new Map<string, string>();
  let analyzer: DocumentAnalyzer | undefined;
  let scheduler: AnalysisScheduler<DocumentAnalysis> | undefined;

  const uriOf = (path: string): string => paths.get(path) ?? pathToFileURL(resolve(path)).href;
  const snapshot = (uri: string): Snapshot | undefined => {
    const doc = documents.get(uri);
    return doc && { uri, version: doc.version, text: doc.getText() };
  };
  const fileOf = (s: Snapshot): SourceFile => ({ path: documentPath(s.uri, documents.get(s.uri)?.languageId), text: s.text });

  let watchSettings = false;
  connection.onInitialize((params: InitializeParams): InitializeResult => {
    watchSettings = params.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    const options: ServerOptions = readServerOptions(params.initializationOptions, flags, (m) => connection.console.warn(m));
    enterWorkspace(params);
    analyzer = createDocumentAnalyzer(options.config);
    // The thread loads the grammar now, while the editor is still opening files.
    void analyzer.warm().catch((error: Error) => connection.console.error(`hcp-bot: the analysis thread did not start: ${error.message}`));
    scheduler = new AnalysisScheduler<DocumentAnalysis>(
      {
        current: snapshot,
        analyze: (s) => analyzer!.analyze(fileOf(s)),
        publish: (s, result) => {
          const file = fileOf(s);
          judged.set(s.uri, { version: s.version, file, ...(result.ok ? { report: result.report } : {}) });
          if (!result.ok) connection.console.warn(`hcp-bot: not analyzed: ${file.path}: ${result.reason}`);
          const diagnostics = result.ok ? toDiagnostics(result.report, file.path, uriOf) : [notAnalyzedDiagnostic(result.reason)];
          void connection.sendDiagnostics({ uri: s.uri, version: s.version, diagnostics });
        },
      },
      options.debounceMs,
    );
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: true },
        codeActionProvider: { codeActionKinds: [QUICK_FIX, FIX_ALL] },
        hoverProvider: true,
      },
      serverInfo: { name: "hcp-bot", version: VERSION },
    };
  });

  // Settings files are rarely open in the editor: where the client can watch files, it reports their changes.
  connection.onInitialized(() => {
    if (!watchSettings) return;
    const watchers = [{ globPattern: "**/.github/hcp-bot.{yml,yaml}" }, { globPattern: "**/pyproject.toml" }];
    void connection.client.register(DidChangeWatchedFilesNotification.type, { watchers }).catch((error: Error) => connection.console.warn(`hcp-bot: settings files are not watched: ${error.message}`));
  });

  documents.onDidChangeContent(({ document }) => {
    const path = documentPath(document.uri, document.languageId);
    paths.set(path, document.uri);
    if (classifyFile(path)) scheduler?.changed(document.uri);
  });
  documents.onDidClose(({ document }) => {
    scheduler?.closed(document.uri);
    judged.delete(document.uri);
    paths.delete(documentPath(document.uri, document.languageId));
    void connection.sendDiagnostics({ uri: document.uri, diagnostics: [] });
  });
  // A saved settings file changes what every open document is judged under.
  const settingsChanged = (uri: string) => {
    if (SETTINGS_FILE.test(uri)) scheduler?.all(documents.keys().filter((u) => classifyFile(documentPath(u, documents.get(u)?.languageId))));
  };
  documents.onDidSave(({ document }) => settingsChanged(document.uri));
  connection.onDidChangeWatchedFiles(({ changes }) => changes.forEach((c) => settingsChanged(c.uri)));

  connection.onCodeAction(({ textDocument, range, context }) => {
    const current = judgedNow(textDocument.uri);
    if (!current?.report) return [];
    return codeActions(current.report, current.file, textDocument.uri, range, context.only, uriOf);
  });
  connection.onHover(({ textDocument, position }) => {
    const current = judgedNow(textDocument.uri);
    return current?.report ? (hoverAt(current.report, current.file.path, position) ?? null) : null;
  });
  connection.onShutdown(async () => {
    await analyzer?.close();
  });

  /** The last judgement of a document when it is of the text the editor has now (else a fix would land on moved text). */
  function judgedNow(uri: string): Judged | undefined {
    const j = judged.get(uri);
    return j && j.version === documents.get(uri)?.version ? j : undefined;
  }

  documents.listen(connection);
  connection.listen();
  // The connection ends the process itself on `exit` (status 0 after `shutdown`, else 1) or when stdin closes.
  return await new Promise<number>(() => {});
}

/** stdout carries the protocol: a stray console.log would corrupt it, so console output goes to the editor's log. */
function keepConsoleOffStdout(connection: Connection): void {
  const to = (send: (message: string) => void) => (...args: unknown[]) => send(format(...args));
  console.log = console.info = to((m) => connection.console.log(m));
  console.debug = to((m) => connection.console.debug(m));
  console.warn = to((m) => connection.console.warn(m));
  console.error = to((m) => connection.console.error(m));
}

/**
 * A document's path as lint shows it (relative to the working folder, which is the workspace
 * root once the editor names one). A document with no file yet is named after its language, so
 * it is read as the kind of file it will be.
 */
function documentPath(uri: string, languageId: string | undefined): string {
  if (uri.startsWith("file:")) return displayPath(fileURLToPath(uri));
  const ext = { python: ".py", yaml: ".yaml", shellscript: ".sh", markdown: ".md" }[languageId ?? ""] ?? "";
  return `${uri.replace(/^[a-z]+:/i, "").replace(/[^A-Za-z0-9_.-]+/g, "_")}${ext}`;
}

/** Runs from the workspace root, so paths and settings read as `hcp-bot lint` run there would. */
function enterWorkspace(params: InitializeParams): void {
  const rootUri = params.workspaceFolders?.[0]?.uri ?? params.rootUri;
  if (!rootUri?.startsWith("file:")) return;
  const root = fileURLToPath(rootUri);
  if (existsSync(root) && statSync(root).isDirectory()) process.chdir(root);
}
