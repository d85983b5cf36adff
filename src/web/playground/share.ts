// Shareable playground links: the text and the settings in the URL fragment (`#code=…`),
// deflate-raw compressed by the browser's CompressionStream and base64url-encoded. A browser
// never sends the fragment to a server, so a shared link keeps the promise that nothing
// pasted leaves the page: only whoever opens the link sees the text.
import { fromBase64Url, toBase64Url } from "../base64url.ts";
import { INPUT_KINDS, MAX_INPUT_CHARS, type InputKind } from "./input.ts";

export interface SharedState {
  text: string;
  /** "auto" or the kind the user picked. */
  kind: InputKind | "auto";
  gpusPerNode: number;
}

const PREFIX = "code=";

async function readAll(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array | undefined> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    // A link that inflates past the playground's limit is refused while it inflates (a zip bomb in a URL).
    if (size > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** The fragment (without `#`) that reproduces `state`. */
export async function encodeShared(state: SharedState): Promise<string> {
  const json = new TextEncoder().encode(JSON.stringify({ t: state.text, k: state.kind, g: state.gpusPerNode }));
  const compressed = await readAll(new Blob([json]).stream().pipeThrough(new CompressionStream("deflate-raw")), Number.MAX_SAFE_INTEGER);
  return PREFIX + toBase64Url(compressed!);
}

/** What a link's fragment says, an error in words when it is not one of ours or is damaged, or undefined when there is none. */
export async function decodeShared(fragment: string): Promise<{ ok: true; state: SharedState } | { ok: false; message: string } | undefined> {
  const hash = fragment.replace(/^#/, "");
  if (!hash.startsWith(PREFIX)) return undefined;
  const damaged = { ok: false as const, message: "This link's text could not be read (the link is cut short or damaged). Paste the text instead." };
  const bytes = fromBase64Url(hash.slice(PREFIX.length));
  if (!bytes) return damaged;
  let json: Uint8Array | undefined;
  try {
    json = await readAll(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw")), MAX_INPUT_CHARS * 4 + 1024);
  } catch {
    return damaged;
  }
  if (!json) return { ok: false, message: "This link's text is larger than the playground analyzes. Run `npx hcp-bot lint FILE` on it." };
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(json));
  } catch {
    return damaged;
  }
  const state = sharedStateFrom(value);
  return state ? { ok: true, state } : damaged;
}

/** The link's object checked field by field (the page bundle carries no schema library). */
function sharedStateFrom(value: unknown): SharedState | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { t, k, g } = value as Record<string, unknown>;
  if (typeof t !== "string") return undefined;
  const kind = k === "auto" || INPUT_KINDS.includes(k as InputKind) ? (k as SharedState["kind"]) : "auto";
  const gpusPerNode = typeof g === "number" && Number.isInteger(g) && g > 0 && g <= 1024 ? g : 8;
  return { text: t, kind, gpusPerNode };
}
