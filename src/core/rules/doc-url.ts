// Each rule's documentation page, docs/rules/<ID>.md (written from the rule modules' `doc`), as
// one URL that SARIF's `helpUri`, the PR comment's link and `rules`/`explain --format json` share.
//
// Where the pages are read from, first that is set:
//   1. HCP_DOCS_URL, the URL of the folder that holds the pages (a fork, a GitHub Enterprise
//      mirror, a docs site): an explicit setting wins over everything else;
//   2. HCP_PUBLIC_URL, the bot's own public URL: the bot serves the pages itself, rendered, at
//      `<public URL>/docs/rules/HCP001` (src/web/server/rule-pages.ts), the same version's text
//      as the rules that reported the finding;
//   3. package.json's `homepage` (PACKAGE_HOMEPAGE below): a GitHub repository's page gives
//      `<repo>/blob/main/docs/rules/`, any other site `<homepage>/docs/rules/`;
//   4. none: no link at all. A made-up address would be a link to nowhere.
// Pure (no environment read here): the edges pass their environment in.

/** package.json's `homepage` (none today); test/cli/rule-docs.test.ts keeps the two equal. */
export const PACKAGE_HOMEPAGE: string | undefined = undefined;

export type DocUrl = (ruleId: string) => string | undefined;

/** The folder URL the rule pages hang off, ending in `/`; undefined when nothing names one (or HCP_DOCS_URL is not an http(s) URL). */
export function docsBase(env: Readonly<Record<string, string | undefined>> = {}, homepage: string | undefined = PACKAGE_HOMEPAGE): string | undefined {
  const set = env.HCP_DOCS_URL?.trim();
  if (set) return isHttpUrl(set) ? set.replace(/\/*$/, "/") : undefined;
  if (!homepage || !isHttpUrl(homepage)) return undefined;
  const home = homepage.replace(/#.*$/, "").replace(/\/*$/, "");
  return /^https:\/\/github\.com\/[^/]+\/[^/]+$/.test(home) ? `${home}/blob/main/docs/rules/` : `${home}/docs/rules/`;
}

/** `<base>HCP001.md`, or undefined without a base. */
export function ruleDocUrl(ruleId: string, base: string | undefined): string | undefined {
  return base ? `${base}${encodeURIComponent(ruleId)}.md` : undefined;
}

/** `<public URL>/docs/rules/`: where the bot at that URL serves its rule pages; undefined unless an http(s) URL. */
export function ownDocsBase(publicUrl: string | undefined): string | undefined {
  const url = publicUrl?.trim();
  return url && isHttpUrl(url) ? `${url.replace(/[?#].*$/, "").replace(/\/*$/, "")}/docs/rules/` : undefined;
}

/** The one function every surface builds its links with. */
export function docUrlFor(env: Readonly<Record<string, string | undefined>> = {}): DocUrl {
  const own = env.HCP_DOCS_URL?.trim() ? undefined : ownDocsBase(env.HCP_PUBLIC_URL);
  if (own) return (id) => `${own}${encodeURIComponent(id)}`;
  const base = docsBase(env);
  return (id) => ruleDocUrl(id, base);
}

function isHttpUrl(text: string): boolean {
  return /^https?:\/\/[^\s/]+/i.test(text);
}
