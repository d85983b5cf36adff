// Which request paths are the web pages' (the playground, its files, the rule pages, the runs
// history and its sign-in), apart from the handler itself: the hosts' routers import only this.

/** Paths the web handler answers; everything else belongs to the rest of the server. */
export function isWebPath(path: string): boolean {
  return (
    path === "/playground" ||
    path.startsWith("/playground/") ||
    path.startsWith("/web/") ||
    path === "/favicon.ico" ||
    path === "/docs/rules" ||
    path.startsWith("/docs/rules/") ||
    path === "/runs" ||
    path.startsWith("/runs/") ||
    path.startsWith("/auth/")
  );
}
