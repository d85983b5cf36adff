// Which request paths are the web pages' (the playground, its files, the rule pages, the runs
// history and its sign-in), apart from the handler itself: the hosts' routers and the
// playground (which links the rule pages) import only this.

/** Where the rule pages live on this server (rule-pages.ts renders them). */
export const RULE_PAGES_PATH = "/docs/rules";

/** A rule id as the pages name them (HCP001, AB002): the only names a request may ask for. */
export const RULE_ID = /^[A-Z]{2,4}\d{3}$/;

/** The page of one rule on this server (root-relative). */
export function rulePagePath(id: string): string {
  return `${RULE_PAGES_PATH}/${encodeURIComponent(id)}`;
}

/** Paths the web handler answers; everything else belongs to the rest of the server. */
export function isWebPath(path: string): boolean {
  return (
    path === "/playground" ||
    path.startsWith("/playground/") ||
    path.startsWith("/web/") ||
    path === "/favicon.ico" ||
    path === RULE_PAGES_PATH ||
    path.startsWith(`${RULE_PAGES_PATH}/`) ||
    path === "/runs" ||
    path.startsWith("/runs/") ||
    path.startsWith("/auth/")
  );
}
