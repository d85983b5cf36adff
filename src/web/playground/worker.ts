// The playground's Web Worker: loads tree-sitter and the Python grammar (WebAssembly, from
// this site), then reviews each pasted text off the page's thread, so a huge or hostile
// paste cannot freeze the page. Nothing is sent anywhere: the only requests are for the
// two .wasm files and, for a script that imports megatron.bridge, hcp-bot's index of
// upstream recipes (a GET of a fixed file; the text stays here).
import { Language, Parser } from "web-tree-sitter";
import { parseBridgeIndex, type UpstreamRecipes } from "../../core/analyze/bridge-index.ts";
import { BRIDGE_INDEX_FILE, PYTHON_WASM, TREE_SITTER_WASM, type AnalyzeMessage, type WorkerAnswer } from "./protocol.ts";
import { checkInput } from "./input.ts";
import { reviewPlayground } from "./review.ts";

// The DOM lib has no worker scope type; this is the part used here.
declare const self: {
  onmessage: ((event: MessageEvent<AnalyzeMessage>) => void) | null;
  postMessage(message: WorkerAnswer): void;
  location: Location;
};

let python: Promise<Language> | undefined;

function loadPython(): Promise<Language> {
  python ??= (async () => {
    await Parser.init({ locateFile: (name: string) => new URL(name === "web-tree-sitter.wasm" ? TREE_SITTER_WASM : name, self.location.href).href });
    const res = await fetch(new URL(PYTHON_WASM, self.location.href));
    if (!res.ok) throw new Error(`the Python grammar could not be loaded (HTTP ${res.status})`);
    return Language.load(new Uint8Array(await res.arrayBuffer()));
  })();
  return python;
}

let index: Promise<UpstreamRecipes> | undefined;

/** The server's index, fetched once; a server without one (an edge deployment) leaves the bases unknown, saying why. */
function loadIndex(): Promise<UpstreamRecipes> {
  index ??= (async (): Promise<UpstreamRecipes> => {
    try {
      const res = await fetch(new URL(BRIDGE_INDEX_FILE, self.location.href));
      if (!res.ok) return { unavailable: `this server offers no index of upstream recipes (HTTP ${res.status})` };
      const parsed = parseBridgeIndex(await res.text());
      return "error" in parsed ? { unavailable: `the server's index of upstream recipes cannot be used: ${parsed.error}` } : parsed;
    } catch (error) {
      return { unavailable: `the index of upstream recipes could not be fetched (${error instanceof Error ? error.message : String(error)})` };
    }
  })();
  return index;
}

const IMPORTS_BRIDGE = /^\s*(?:from|import)\s+megatron\.bridge\b/m;

self.onmessage = async (event: MessageEvent<AnalyzeMessage>) => {
  const { id, request } = event.data;
  let answer: WorkerAnswer;
  try {
    const check = checkInput(request.text);
    const upstream = check.ok && IMPORTS_BRIDGE.test(request.text) ? await loadIndex() : undefined;
    answer = check.ok ? { id, ok: true, review: reviewPlayground(request, await loadPython(), undefined, upstream) } : { id, ok: false, message: check.message };
  } catch (error) {
    answer = { id, ok: false, message: `The analysis failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  self.postMessage(answer);
};

// Loading starts at once, so the first review does not wait for the grammar.
void loadPython().catch(() => undefined);
