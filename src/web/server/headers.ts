// Response headers of every page: a strict Content-Security-Policy (own origin only, no
// inline script or style, no third-party anything), no framing, no referrer, no sniffing.

/** The playground: its module script, its worker, and WebAssembly compiled from its own .wasm files. */
export const PLAYGROUND_CSP = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self'",
  "connect-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Server-rendered pages (the runs history): no script at all; forms post to this site only. */
export const PAGE_CSP = ["default-src 'none'", "style-src 'self'", "img-src 'self'", "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'"].join("; ");

export function securityHeaders(csp: string): Record<string, string> {
  return {
    "content-security-policy": csp,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    // same-origin, not no-referrer: with no-referrer a browser posts forms with `Origin: null`,
    // and the sign-out form's Origin is checked. Nothing is sent to other sites either way.
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), interest-cohort=()",
  };
}

export function htmlResponse(status: number, html: string, csp = PAGE_CSP, extra: Record<string, string> = {}): Response {
  return new Response(html, { status, headers: { ...securityHeaders(csp), "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...extra } });
}
