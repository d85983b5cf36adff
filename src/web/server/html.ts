// HTML for server-rendered pages: a tagged template whose every interpolated value is
// escaped, unless it is Html built by this module (a nested template or rendered Markdown).
import { escapeHtml, markdownToHtml } from "../markdown/html.ts";

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Value = Html | string | number | null | undefined | false | readonly Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return "";
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(render).join("");
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new Html(out);
}

/** The bot's own Markdown (check-run text, verdicts), through the escaping renderer. */
export function markdown(text: string): Html {
  return new Html(markdownToHtml(text));
}

export interface PageChrome {
  title: string;
  /** Which nav entry is the current page. */
  current: "home" | "playground" | "runs" | "docs";
  /** The signed-in user and the sign-out form's CSRF token. */
  user?: { login: string; csrf: string };
}

export function page(chrome: PageChrome, body: Html): string {
  const nav = (href: string, label: string, key: PageChrome["current"]) => html`<a href="${href}"${chrome.current === key ? new Html(' aria-current="page"') : ""}>${label}</a>`;
  const who = chrome.user
    ? html`<form class="who" method="post" action="/auth/logout"><span>Signed in as <strong>${chrome.user.login}</strong></span><input type="hidden" name="csrf" value="${chrome.user.csrf}"><button type="submit">Sign out</button></form>`
    : "";
  return html`<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="same-origin">
  <title>${chrome.title} · hcp-bot</title>
  <link rel="icon" href="/web/icon.svg" type="image/svg+xml">
  <link rel="stylesheet" href="/web/style.css">
</head>
<body>
  <header class="top"><a class="brand" href="/playground">hcp-bot</a><nav>${nav("/playground", "Playground", "playground")} ${nav("/runs", "Smoke runs", "runs")} ${nav("/docs/rules", "Rules", "docs")}</nav>${who}</header>
  <main${chrome.current === "runs" ? html` class="wide"` : ""}>
${body}
  </main>
</body>
</html>`.text;
}
