// Markdown blocks (parse.ts) to an HTML string for server-rendered pages. Every text is
// escaped here; the only tags are the ones this file writes.
import { parseMarkdown, type Block, type Inline } from "./parse.ts";

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function inlineHtml(nodes: readonly Inline[]): string {
  return nodes
    .map((n) => {
      switch (n.t) {
        case "text":
          return escapeHtml(n.v);
        case "code":
          return `<code>${escapeHtml(n.v)}</code>`;
        case "strong":
          return `<strong>${inlineHtml(n.c)}</strong>`;
        case "em":
          return `<em>${inlineHtml(n.c)}</em>`;
        case "sub":
          return `<sub>${inlineHtml(n.c)}</sub>`;
        case "br":
          return "<br>";
        case "link":
          return `<a href="${escapeHtml(n.href)}" rel="noreferrer noopener">${inlineHtml(n.c)}</a>`;
      }
    })
    .join("");
}

function blockHtml(b: Block): string {
  switch (b.t) {
    case "heading":
      return `<h${b.level}>${inlineHtml(b.c)}</h${b.level}>`;
    case "para":
      return `<p>${inlineHtml(b.c)}</p>`;
    case "list":
      return `<ul>${b.items.map((i) => `<li>${inlineHtml(i)}</li>`).join("")}</ul>`;
    case "table": {
      const head = `<tr>${b.head.map((c) => `<th>${inlineHtml(c)}</th>`).join("")}</tr>`;
      const rows = b.rows.map((r) => `<tr>${r.map((c) => `<td>${inlineHtml(c)}</td>`).join("")}</tr>`).join("");
      return `<div class="table-wrap"><table><thead>${head}</thead><tbody>${rows}</tbody></table></div>`;
    }
    case "code":
      return `<pre class="code"${b.lang ? ` data-lang="${escapeHtml(b.lang)}"` : ""}><code>${escapeHtml(b.v)}</code></pre>`;
    case "details":
      return `<details><summary>${inlineHtml(b.summary)}</summary>${b.c.map(blockHtml).join("")}</details>`;
  }
}

/** The bot's Markdown as HTML that cannot carry markup from the text it quotes. */
export function markdownToHtml(markdown: string): string {
  return parseMarkdown(markdown).map(blockHtml).join("\n");
}
