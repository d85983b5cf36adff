// The playground's Web Worker: loads tree-sitter and the Python grammar (WebAssembly, from
// this site), then reviews each pasted text off the page's thread, so a huge or hostile
// paste cannot freeze the page. Nothing is sent anywhere: the only requests are for the
// two .wasm files.
import { Language, Parser } from "web-tree-sitter";
import { PYTHON_WASM, TREE_SITTER_WASM, type AnalyzeMessage, type WorkerAnswer } from "./protocol.ts";
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

self.onmessage = async (event: MessageEvent<AnalyzeMessage>) => {
  const { id, request } = event.data;
  let answer: WorkerAnswer;
  try {
    const check = checkInput(request.text);
    answer = check.ok ? { id, ok: true, review: reviewPlayground(request, await loadPython()) } : { id, ok: false, message: check.message };
  } catch (error) {
    answer = { id, ok: false, message: `The analysis failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  self.postMessage(answer);
};

// Loading starts at once, so the first review does not wait for the grammar.
void loadPython().catch(() => undefined);
