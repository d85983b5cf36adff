// Markdown blocks (parse.ts) to DOM nodes, for the playground. Text only ever goes in
// through textContent; the elements are the fixed set below.
import { parseMarkdown, type Block, type Inline } from "./parse.ts";

export interface DomOptions {
  /** Renders a `suggestion` fence (GitHub shows it as a diff of the commented lines). */
  suggestion?: (replacement: string) => Node;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function appendInline(parent: Node, nodes: readonly Inline[]): void {
  for (const n of nodes) {
    switch (n.t) {
      case "text":
        parent.appendChild(document.createTextNode(n.v));
        break;
      case "code":
        parent.appendChild(el("code", undefined, n.v));
        break;
      case "br":
        parent.appendChild(el("br"));
        break;
      case "link": {
        const a = el("a");
        a.href = n.href;
        a.rel = "noreferrer noopener";
        appendInline(a, n.c);
        parent.appendChild(a);
        break;
      }
      default: {
        const wrap = el(n.t === "strong" ? "strong" : n.t === "em" ? "em" : "sub");
        appendInline(wrap, n.c);
        parent.appendChild(wrap);
      }
    }
  }
}

function blockNode(b: Block, options: DomOptions): Node {
  switch (b.t) {
    case "heading": {
      const h = el(`h${Math.min(6, Math.max(1, b.level))}` as "h1");
      appendInline(h, b.c);
      return h;
    }
    case "para": {
      const p = el("p");
      appendInline(p, b.c);
      return p;
    }
    case "list": {
      const ul = el("ul");
      for (const item of b.items) {
        const li = el("li");
        appendInline(li, item);
        ul.appendChild(li);
      }
      return ul;
    }
    case "table": {
      const wrap = el("div", "table-wrap");
      const table = el("table");
      const head = el("tr");
      for (const c of b.head) {
        const th = el("th");
        appendInline(th, c);
        head.appendChild(th);
      }
      table.appendChild(el("thead")).appendChild(head);
      const body = table.appendChild(el("tbody"));
      for (const row of b.rows) {
        const tr = el("tr");
        for (const c of row) {
          const td = el("td");
          appendInline(td, c);
          tr.appendChild(td);
        }
        body.appendChild(tr);
      }
      wrap.appendChild(table);
      return wrap;
    }
    case "code": {
      if (b.lang === "suggestion" && options.suggestion) return options.suggestion(b.v);
      const pre = el("pre", "code");
      if (b.lang) pre.dataset.lang = b.lang;
      pre.appendChild(el("code", undefined, b.v));
      return pre;
    }
    case "details": {
      const details = el("details");
      const summary = el("summary");
      appendInline(summary, b.summary);
      details.appendChild(summary);
      for (const c of b.c) details.appendChild(blockNode(c, options));
      return details;
    }
  }
}

/** The bot's Markdown as a fragment of DOM nodes. */
export function markdownToDom(markdown: string, options: DomOptions = {}): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const b of parseMarkdown(markdown)) fragment.appendChild(blockNode(b, options));
  return fragment;
}
