// Which built file (dist/web, src/web/build.ts) a URL path names, with its type and CSP: the
// one table the Node server (static.ts) and the edge builds (src/edge/web.ts) serve from.
// Paths are matched against this table or the rule-id pattern, never joined from the URL.
// Runtime-neutral: the host reads the file.
import { htmlResponse, PAGE_CSP, PLAYGROUND_CSP, securityHeaders } from "./headers.ts";
import { RULE_ID, RULE_PAGES_PATH, unknownRulePage } from "./rule-pages.ts";

export const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".json": "application/json",
};

/** URL path -> file of the build (the playground and the pages' shared files). */
const FILES: Record<string, string> = {
  "/playground": "playground/index.html",
  "/playground/": "playground/index.html",
  "/playground/page.js": "playground/page.js",
  "/playground/worker.js": "playground/worker.js",
  "/playground/web-tree-sitter.wasm": "playground/web-tree-sitter.wasm",
  "/playground/tree-sitter-python.wasm": "playground/tree-sitter-python.wasm",
  "/web/style.css": "web/style.css",
  "/web/noscript.css": "web/noscript.css",
  "/web/icon.svg": "web/icon.svg",
  "/favicon.ico": "web/icon.svg",
};

export interface BuiltFile {
  /** The file under the build folder. */
  file: string;
  /** The rule pages carry no script: the stricter page CSP; the playground's files its own. */
  csp: string;
  /** The rule id asked for, where the path names a rule page (an unknown one is a 404 page). */
  rule?: string;
}

/** The built file a path names, or undefined when the path is none of the build's. */
export function builtFileFor(path: string): BuiltFile | undefined {
  const file = FILES[path];
  if (file) return { file, csp: PLAYGROUND_CSP };
  if (path === RULE_PAGES_PATH || path === `${RULE_PAGES_PATH}/`) return { file: "docs/rules/index.html", csp: PAGE_CSP };
  if (!path.startsWith(`${RULE_PAGES_PATH}/`)) return undefined;
  // /docs/rules/HCP001, and HCP001.md: the address a docs folder of Markdown files would give.
  const id = path.slice(RULE_PAGES_PATH.length + 1).replace(/\.md$/, "");
  return { file: RULE_ID.test(id) ? `docs/rules/${id}.html` : "", csp: PAGE_CSP, rule: id };
}

export function typeOf(file: string): string {
  return TYPES[file.slice(file.lastIndexOf("."))] ?? "application/octet-stream";
}

/** The answer for a built file's contents (undefined: the build has no such file). */
export function builtFileResponse(entry: BuiltFile, body: Uint8Array | ArrayBuffer | string | undefined, buildHash: string): Response {
  if (body === undefined) {
    if (entry.rule !== undefined) return htmlResponse(404, unknownRulePage(entry.rule.slice(0, 40)));
    return new Response("Not found.", { status: 404, headers: { ...securityHeaders(entry.csp), "content-type": "text/plain; charset=utf-8" } });
  }
  // Scripts and WebAssembly change only with a new build: the page revalidates them by ETag.
  return new Response(body as BodyInit, {
    status: 200,
    headers: { ...securityHeaders(entry.csp), "content-type": typeOf(entry.file), "cache-control": "no-cache", etag: `"${buildHash.slice(0, 16)}"` },
  });
}
