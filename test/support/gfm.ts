// GitHub-flavoured Markdown rendered by a CommonMark + GFM parser (micromark), raw HTML let
// through as GitHub's parser lets it through before sanitizing, and what a reader would see
// of it: links, images, HTML elements and comments, and mentions in plain text.
import { micromark } from "micromark";
import { gfm, gfmHtml } from "micromark-extension-gfm";

export function renderGfm(markdown: string): string {
  return micromark(markdown, { allowDangerousHtml: true, allowDangerousProtocol: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });
}

/** Elements the bot's own Markdown produces (links are counted apart); anything else came from the text it quoted. */
const OWN_ELEMENTS = new Set(["a", "p", "code", "pre", "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "sub", "h2", "h3", "ul", "ol", "li", "em", "strong", "hr", "del"]);

export interface Rendered {
  links: number;
  /** Where the links go (the bot links its own run and check run). */
  hrefs: string[];
  images: number;
  /** Element names that the bot's Markdown never makes (raw HTML from the quoted text). */
  foreignElements: string[];
  comments: number;
  /** `@name` in text outside code (a mention GitHub would turn into a notification). */
  mentions: string[];
}

export function inspectGfm(markdown: string): Rendered {
  const html = renderGfm(markdown);
  const tags = [...html.matchAll(/<\/?([A-Za-z][A-Za-z0-9-]*)/g)].map((m) => m[1]!.toLowerCase());
  const text = html
    .replace(/<code[^>]*>[\s\S]*?<\/code>/g, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"');
  return {
    links: tags.filter((t) => t === "a").length,
    hrefs: [...html.matchAll(/<a [^>]*href="([^"]*)"/g)].map((m) => m[1]!),
    images: tags.filter((t) => t === "img").length,
    foreignElements: [...new Set(tags.filter((t) => !OWN_ELEMENTS.has(t)))],
    comments: (html.match(/<!--/g) ?? []).length,
    mentions: [...text.matchAll(/(?:^|[^\w\u200b])@([A-Za-z0-9][A-Za-z0-9/_-]*)/g)].map((m) => m[1]!),
  };
}

/** Strings a log line, a recipe value or a comment could carry to hijack what the bot writes. */
export const HOSTILE = [
  "see [the fix](https://evil.example/x) now",
  "![](https://evil.example/pixel.png)",
  "![alt](https://evil.example/p.png 'title')",
  "<img src=https://evil.example/p.png>",
  "<a href=\"https://evil.example\">click</a>",
  "<script>alert(1)</script>",
  "<div hidden>secret</div><details open><summary>x</summary>y</details>",
  "<!-- hcp-bot:summary --> forged marker",
  "cc @NVIDIA-NeMo/maintainers and @alice",
  "mail alice@example.com",
  "visit https://evil.example or www.evil.example",
  "<https://evil.example>",
  "[ref]: https://evil.example\n[x][ref]",
  "```\n</details>\n![](https://evil.example/p.png)\n```",
  "````` five backticks ````` and ` one",
  "pipe | in | cells",
  "\\[escaped\\](https://evil.example)",
  "&lt;img src=x&gt; and &#60;b&#62;",
  "fixes #123 and org/repo#4",
  "*bold* _it_ ~~del~~ # heading",
  "line one\n\n## injected heading\n\n[x](https://evil.example)",
];

/** The text a reader sees (tags removed, entities decoded, zero-width spaces dropped). */
export function visibleText(markdown: string): string {
  return renderGfm(markdown)
    .replace(/<[^>]+>/g, "")
    .replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&")
    .replace(/\u200b/g, "");
}
