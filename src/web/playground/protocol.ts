// Messages between the playground page and its analysis worker.
import type { PlaygroundRequest } from "./input.ts";
import type { PlaygroundReview } from "./review.ts";

export interface AnalyzeMessage {
  id: number;
  request: PlaygroundRequest;
}

export type WorkerAnswer =
  | { id: number; ok: true; review: PlaygroundReview }
  /** The input was refused (too large, binary) or the analysis failed; `message` says why. */
  | { id: number; ok: false; message: string };

/** Where the worker finds the two WebAssembly files, next to itself. */
export const TREE_SITTER_WASM = "web-tree-sitter.wasm";
export const PYTHON_WASM = "tree-sitter-python.wasm";

/** hcp-bot's index of upstream recipes, next to the worker; fetched only for a text that imports megatron.bridge. */
export const BRIDGE_INDEX_FILE = "megatron-bridge-recipes.json";
