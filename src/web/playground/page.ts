// The playground page: an editor, the examples shipped in fixtures/playground, and the
// review rendered as the pull request would show it. The analysis runs in a Web Worker
// (worker.ts); this file only builds DOM nodes, with text set through textContent.
import examples from "playground:examples";
import { markdownToDom } from "../markdown/dom.ts";
import { createEditor, SEVERITY_LABEL } from "./editor.ts";
import { decodeShared, encodeShared } from "./share.ts";
import { layoutPictureFor } from "./layout-slot.ts";
import type { AnalyzeMessage, WorkerAnswer } from "./protocol.ts";
import { ANALYSIS_TIMEOUT_MS, checkInput, detectKind, INPUT_KINDS, KIND_LABEL, MAX_INPUT_CHARS, tooLargeMessage, type InputKind } from "./input.ts";
import type { InlineView, PlaygroundReview } from "./review.ts";

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const exampleSelect = $<HTMLSelectElement>("example");
const kindSelect = $<HTMLSelectElement>("kind");
const gpusInput = $<HTMLInputElement>("gpus");
const fileInput = $<HTMLInputElement>("file");
const status = $<HTMLParagraphElement>("status");
const linkStatus = $<HTMLSpanElement>("link-status");
const results = $<HTMLDivElement>("results");

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// ------------------------------------------------------------------ the worker

let worker: Worker | undefined;
let nextId = 0;
let pending: { id: number; timer: ReturnType<typeof setTimeout>; text: string } | undefined;

function startWorker(): Worker {
  const w = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  w.onmessage = (event: MessageEvent<WorkerAnswer>) => onAnswer(event.data);
  w.onerror = (event) => {
    event.preventDefault();
    fail(`The analysis stopped unexpectedly${event.message ? `: ${event.message}` : ""}. Edit the text to try again.`);
    restartWorker();
  };
  return w;
}

function restartWorker(): void {
  worker?.terminate();
  worker = startWorker();
}

function setStatus(text: string, kind: "busy" | "ok" | "error"): void {
  status.textContent = text;
  status.dataset.state = kind;
  status.setAttribute("role", kind === "error" ? "alert" : "status");
}

function fail(message: string): void {
  if (pending) clearTimeout(pending.timer);
  pending = undefined;
  results.replaceChildren();
  setStatus(message, "error");
}

function requestReview(): void {
  const text = editor.text();
  const check = checkInput(text);
  if (pending) clearTimeout(pending.timer);
  pending = undefined;
  void updateLink();
  if (!check.ok) return fail(check.message);
  const kind = kindSelect.value === "auto" ? detectKind(text) : (kindSelect.value as InputKind);
  const message: AnalyzeMessage = { id: ++nextId, request: { text, kind, gpusPerNode: gpusPerNode() } };
  setStatus(`Analyzing as ${KIND_LABEL[kind].toLowerCase()}…`, "busy");
  const timer = setTimeout(() => {
    // A runaway analysis is stopped; a fresh worker serves the next edit.
    restartWorker();
    fail(`The analysis took longer than ${ANALYSIS_TIMEOUT_MS / 1000} s and was stopped. Try a smaller piece of the file.`);
  }, ANALYSIS_TIMEOUT_MS);
  pending = { id: message.id, timer, text };
  worker ??= startWorker();
  worker.postMessage(message);
}

function onAnswer(answer: WorkerAnswer): void {
  if (!pending || answer.id !== pending.id) return; // an older edit's answer
  clearTimeout(pending.timer);
  const text = pending.text;
  pending = undefined;
  if (!answer.ok) return fail(answer.message);
  render(answer.review, text);
}

// ------------------------------------------------------------------ rendering

const CONCLUSION_LABEL: Record<string, string> = { success: "Success", failure: "Failure", neutral: "Neutral", skipped: "Skipped" };

function countsText(r: PlaygroundReview): string {
  const c = { error: 0, warning: 0, info: 0 };
  for (const f of r.findings) c[f.severity]++;
  return `${c.error} error(s), ${c.warning} warning(s), ${c.info} note(s) in ${r.configurations} configuration(s) · read as ${KIND_LABEL[r.kind].toLowerCase()} · ${r.ms} ms, in this browser`;
}

function section(title: string, id: string): HTMLElement {
  const s = el("section", "card");
  s.id = id;
  s.appendChild(el("h2", undefined, title));
  return s;
}

/** GitHub's view of a suggestion: the commented lines removed, the suggested ones added. */
function suggestionDiff(lines: readonly string[], comment: InlineView, replacement: string): HTMLElement {
  const box = el("div", "suggestion");
  box.dataset.startLine = String(comment.startLine);
  box.dataset.endLine = String(comment.line);
  box.appendChild(el("div", "suggestion-head", "Suggested change"));
  const diff = el("div", "diff");
  const row = (kind: "del" | "add", number: string, text: string) => {
    const line = el("div", `diff-line ${kind}`);
    line.append(el("span", "ln", number), el("span", "sign", kind === "del" ? "−" : "+"), el("span", "txt", text));
    diff.appendChild(line);
  };
  for (let n = comment.startLine; n <= comment.line; n++) row("del", String(n), lines[n - 1] ?? "");
  for (const l of replacement.split("\n")) row("add", "", l);
  box.appendChild(diff);
  return box;
}

function inlineComment(r: PlaygroundReview, comment: InlineView, lines: readonly string[]): HTMLElement {
  const card = el("article", comment.severity ? `comment comment-${comment.severity}` : "comment");
  card.dataset.rule = comment.ruleId;
  const where = comment.startLine === comment.line ? `line ${comment.line}` : `lines ${comment.startLine}-${comment.line}`;
  const head = el("header", "comment-head");
  if (comment.severity) head.appendChild(el("span", `sev sev-${comment.severity}`, SEVERITY_LABEL[comment.severity]));
  head.append(`hcp-bot commented on ${r.path} ${where}`);
  card.appendChild(head);
  const excerpt = el("pre", "excerpt");
  for (let n = comment.startLine; n <= comment.line; n++) {
    const line = el("div");
    line.append(el("span", "ln", String(n)), el("span", "txt", lines[n - 1] ?? ""));
    excerpt.appendChild(line);
  }
  card.appendChild(excerpt);
  const body = el("div", "markdown");
  body.appendChild(markdownToDom(comment.body, { suggestion: (replacement) => suggestionDiff(lines, comment, replacement) }));
  card.appendChild(body);
  return card;
}

function render(r: PlaygroundReview, text: string): void {
  const lines = text.split("\n");
  setStatus(countsText(r), "ok");
  editor.setLanguage(r.kind);
  editor.showFindings(r.findings, text);
  const check = section("Check run: HCP review", "check");
  const badge = el("p", `conclusion ${r.conclusion}`, `${CONCLUSION_LABEL[r.conclusion] ?? r.conclusion}: ${r.check.title}`);
  check.appendChild(badge);
  const summary = el("div", "markdown");
  summary.appendChild(markdownToDom(r.check.summary));
  check.appendChild(summary);

  const inline = section(`Inline review comments (${r.inline.length})`, "inline");
  if (r.inline.length === 0) inline.appendChild(el("p", "empty", "No comments: nothing to fix on these lines."));
  for (const c of r.inline) inline.appendChild(inlineComment(r, c, lines));

  const comment = section("Summary comment", "summary");
  const body = el("div", "markdown");
  body.appendChild(
    r.findings.length === 0
      ? document.createTextNode("No summary comment: a clean pull request gets the green check run only.")
      : markdownToDom(r.summaryComment),
  );
  comment.appendChild(body);

  const docs = section("Rule documentation (hcp-bot explain)", "rules");
  if (r.ruleDocs.length === 0) docs.appendChild(el("p", "empty", "No rule reported anything."));
  for (const d of r.ruleDocs) {
    const details = el("details");
    details.appendChild(el("summary", undefined, d.id));
    const link = el("a", "rule-page", `${d.id}: the rule's page`);
    link.setAttribute("href", d.url);
    const p = el("p");
    p.appendChild(link);
    details.append(p, el("pre", "explain", d.text));
    docs.appendChild(details);
  }
  const parts: HTMLElement[] = [check, inline, comment, docs];
  const picture = layoutPictureFor(r, gpusPerNode());
  if (picture) {
    const layout = section("Rank layout", "layout-picture");
    layout.appendChild(picture);
    parts.splice(2, 0, layout);
  }
  results.replaceChildren(...parts);
  annotateTables(results);
  focusableScrollers(results);
}

/**
 * Boxes that scroll sideways on a narrow screen (tables, diffs, excerpts, the rank grid) take
 * keyboard focus, so arrow keys can scroll them without a mouse.
 */
function focusableScrollers(root: HTMLElement): void {
  for (const box of root.querySelectorAll<HTMLElement>(".table-wrap, .diff, .excerpt, pre.layout-grid")) box.tabIndex = 0;
}

/**
 * The findings tables' severity cells ("🛑 error") get the severity's colour, so it is not
 * told by an emoji alone; every cell gets its column's name, which a narrow screen shows
 * beside the value when the rows are stacked (style.css).
 */
function annotateTables(root: HTMLElement): void {
  for (const table of root.querySelectorAll("table")) {
    const names = [...table.querySelectorAll("thead th")].map((th) => th.textContent?.trim() ?? "");
    for (const row of table.querySelectorAll("tbody tr")) {
      [...row.children].forEach((cell, i) => {
        if (names[i]) (cell as HTMLElement).dataset.label = names[i];
        const m = /^\S*\s*(error|warning|info)$/u.exec(cell.textContent?.trim() ?? "");
        if (m) cell.classList.add("sev", `sev-${m[1]}`);
      });
    }
  }
}

// ------------------------------------------------------------------ the link

function gpusPerNode(): number {
  const gpus = Number(gpusInput.value);
  return Number.isInteger(gpus) && gpus > 0 ? gpus : 8;
}

let linkVersion = 0;
/** The address follows the text: an untouched example is `?example=NAME`, anything else the fragment. */
async function updateLink(): Promise<void> {
  const version = ++linkVersion;
  const url = new URL(location.href);
  if (exampleSelect.value) {
    url.searchParams.set("example", exampleSelect.value);
    url.hash = "";
  } else {
    url.searchParams.delete("example");
    const text = editor.text();
    url.hash = text ? await encodeShared({ text, kind: kindSelect.value as InputKind | "auto", gpusPerNode: gpusPerNode() }) : "";
  }
  if (version === linkVersion) history.replaceState(null, "", url);
}

async function copyLink(): Promise<void> {
  await updateLink();
  try {
    await navigator.clipboard.writeText(location.href);
    linkStatus.textContent = "Link copied. The text is in the part after #, which browsers never send to a server.";
  } catch {
    // No clipboard (a page served over plain http to another machine): the address bar has the same link.
    linkStatus.textContent = "Copy the link from the address bar: it holds the text and the settings.";
  }
}

// ------------------------------------------------------------------ inputs

function loadExample(name: string): void {
  const example = examples.find((e) => e.name === name);
  if (!example) return;
  exampleSelect.value = name;
  editor.setText(example.text);
  kindSelect.value = example.kind;
  kindFromExample = true;
  requestReview();
}

function fillSelects(): void {
  for (const e of examples) {
    const option = el("option", undefined, `${e.name}: ${e.title}`);
    option.value = e.name;
    exampleSelect.appendChild(option);
  }
  for (const k of INPUT_KINDS) {
    const option = el("option", undefined, KIND_LABEL[k]);
    option.value = k;
    kindSelect.appendChild(option);
  }
}

let debounce: ReturnType<typeof setTimeout> | undefined;
function scheduleReview(): void {
  clearTimeout(debounce);
  debounce = setTimeout(requestReview, 250);
}

async function openFile(): Promise<void> {
  const file = fileInput.files?.[0];
  if (!file) return;
  if (file.size > MAX_INPUT_CHARS) {
    fail(tooLargeMessage(`The file ${file.name}`, file.size));
    return;
  }
  const text = await file.text(); // read here, in the page: the file goes nowhere
  const check = checkInput(text);
  if (!check.ok) return fail(`${file.name}: ${check.message}`);
  editor.setText(text);
  kindSelect.value = /\.ya?ml$/i.test(file.name) ? "yaml" : /\.(sh|bash|sbatch|slurm)$/i.test(file.name) ? "shell" : /\.py$/i.test(file.name) ? "python" : "auto";
  exampleSelect.value = "";
  requestReview();
}

/**
 * A paste over the limit never reaches the editor: a document of megabytes makes the
 * browser itself slow, before any analysis could start.
 */
function refuseLargeText(event: ClipboardEvent | DragEvent): boolean {
  const data = "clipboardData" in event ? event.clipboardData : event.dataTransfer;
  const file = data?.files?.[0];
  const size = file ? file.size : (data?.getData("text/plain").length ?? 0);
  if (size <= MAX_INPUT_CHARS) return false;
  event.preventDefault();
  fail(tooLargeMessage(file ? `The file ${file.name}` : "The pasted text", size));
  return true;
}

function onEdit(): void {
  exampleSelect.value = "";
  if (kindFromExample) kindSelect.value = "auto";
  kindFromExample = false;
  scheduleReview();
}

let kindFromExample = false;
const editor = createEditor({
  parent: $<HTMLDivElement>("source"),
  label: "Recipe, override file or launch line",
  onEdit,
  refuse: refuseLargeText,
  onStale: (message) => setStatus(message, "busy"),
});
fillSelects();
kindSelect.addEventListener("change", () => (kindFromExample = false));
kindSelect.addEventListener("change", requestReview);
gpusInput.addEventListener("change", requestReview);
exampleSelect.addEventListener("change", () => (exampleSelect.value ? loadExample(exampleSelect.value) : undefined));
fileInput.addEventListener("change", () => void openFile());
$<HTMLButtonElement>("analyze").addEventListener("click", requestReview);
// Enter in a field would submit the form (and the CSP forbids form posts): review instead.
$<HTMLFormElement>("controls").addEventListener("submit", (event) => {
  event.preventDefault();
  requestReview();
});

$<HTMLButtonElement>("copy-link").addEventListener("click", () => void copyLink());

/** What the address asks for: a shared link's text and settings, an example, or nothing yet. */
async function start(): Promise<void> {
  worker = startWorker();
  const shared = await decodeShared(location.hash);
  const wanted = new URL(location.href).searchParams.get("example");
  if (shared?.ok) {
    editor.setText(shared.state.text);
    kindSelect.value = shared.state.kind;
    gpusInput.value = String(shared.state.gpusPerNode);
    requestReview();
  } else if (shared) setStatus(shared.message, "error");
  else if (wanted && examples.some((e) => e.name === wanted)) loadExample(wanted);
  else if (wanted) setStatus(`There is no example named "${wanted}". Pick one from the list.`, "error");
  else setStatus("Paste a recipe function, a YAML override file or a launch line, or pick an example.", "ok");
  document.body.dataset.ready = "true";
}
void start();
