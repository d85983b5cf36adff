// The rule pages (docs/rules/*.md, written by `npm run docs`) as this server's own HTML pages,
// /docs/rules/ID and the index at /docs/rules: the link target of findings (SARIF's helpUri,
// the PR comment, the playground) when the bot knows its public URL. Rendered at build time
// (src/web/build.ts) through the same escaping Markdown renderer as the runs pages, so no
// markup of the page text reaches the browser, and served as static files on every host.
// Pure: the build hands the Markdown in.
import { html, markdown, page } from "./html.ts";
import { RULE_PAGES_PATH, rulePagePath } from "./paths.ts";

export { RULE_ID, RULE_PAGES_PATH, rulePagePath } from "./paths.ts";

/**
 * The pages link each other as files (`HCP001.md`, `README.md`) and the rule's source as a
 * repository path (`../../src/...`): on this server the first become its own pages and the
 * second plain code (the server ships no sources to link to).
 */
function serverLinks(text: string): string {
  return text.replace(/\[([^\]\n]*)\]\(([^)\s]+)\)/g, (whole, label: string, href: string) => {
    if (href === "README.md") return `[${label}](${RULE_PAGES_PATH})`;
    const rule = /^([A-Z]{2,4}\d{3})\.md(#[\w-]*)?$/.exec(href);
    if (rule) return `[${label}](${rulePagePath(rule[1]!)}${rule[2] ?? ""})`;
    if (/^(\.\.\/|\.\/|[\w-]+\/)/.test(href)) return label.startsWith("`") ? label : `\`${label}\``;
    return whole;
  });
}

/** The page's title: its first heading, without Markdown. */
function titleOf(text: string, fallback: string): string {
  return /^# (.+)$/m.exec(text)?.[1]?.replace(/[`*_]/g, "").trim() ?? fallback;
}

/** One rule's page (or the index, id undefined) from its Markdown. */
export function renderRulePage(text: string, id?: string): string {
  const body = html`<article class="markdown rule-doc"${id ? html` data-rule="${id}"` : ""}>${markdown(serverLinks(text))}</article>`;
  return page({ title: titleOf(text, id ?? "Rules"), current: "docs" }, body);
}

/** The answer for a rule this server has no page of. */
export function unknownRulePage(id: string): string {
  return page({ title: "No such rule", current: "docs" }, html`<h1>No rule ${id}</h1><p>This server documents no rule of that name. <a href="${RULE_PAGES_PATH}">All rules</a>.</p>`);
}
