// The playground's editor: CodeMirror 6, bundled into page.js (nothing from a CDN), with line
// numbers, Python/YAML/shell highlighting picked by what the text is read as, and the worker's
// findings as lint diagnostics (underline, gutter mark, the one-line message on hover, and
// "Apply fix" for a finding whose fix is mechanical: the same edits the PR suggestion shows).
//
// The editor lives in a shadow root: CodeMirror's style-mod puts its styles into a <style>
// element when mounted in a document, which the page's CSP (style-src 'self', no
// 'unsafe-inline', no nonce) refuses; in a shadow root it uses a constructed style sheet
// (adoptedStyleSheets), which CSP does not govern. So the CSP stays as strict as before and
// the page stays a static file (a nonce would make every response different).
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { yaml } from "@codemirror/lang-yaml";
import { bracketMatching, defaultHighlightStyle, indentOnInput, StreamLanguage, syntaxHighlighting } from "@codemirror/language";
import { shell } from "@codemirror/legacy-modes/mode/shell";
import { lintGutter, lintKeymap, setDiagnostics, type Action, type Diagnostic } from "@codemirror/lint";
import { Compartment, EditorState, type Extension } from "@codemirror/state";
import { drawSelection, EditorView, highlightActiveLineGutter, highlightSpecialChars, keymap, lineNumbers } from "@codemirror/view";
import type { Finding } from "../../core/model/finding.ts";
import type { InputKind } from "./input.ts";

const LANGUAGE: Record<InputKind, () => Extension> = {
  python: () => python(),
  yaml: () => yaml(),
  shell: () => StreamLanguage.define(shell),
};

export const SEVERITY_LABEL: Record<Finding["severity"], string> = { error: "Error", warning: "Warning", info: "Note" };

const SEVERITY_COLOUR: Record<Finding["severity"], string> = { error: "#d1242f", warning: "#9a6700", info: "#0969da" };

/** Colours and focus ring in the page's palette (style.css does not reach into the shadow root). */
const theme = EditorView.theme({
  "&": { border: "1px solid #d1d9e0", borderRadius: "6px", background: "#fff", fontSize: "13px", minHeight: "260px", maxHeight: "70vh" },
  // :focus-within, not CodeMirror's .cm-focused (set a moment after the focus event): the ring shows at once.
  "&:focus-within": { outline: "3px solid #0969da", outlineOffset: "1px" },
  ".cm-scroller": { fontFamily: 'ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace', lineHeight: "1.45", minHeight: "258px" },
  ".cm-gutters": { background: "#f6f8fa", color: "#59636e", borderRight: "1px solid #d1d9e0" },
  ".cm-tooltip-lint": { maxWidth: "min(560px, 90vw)", fontFamily: '-apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif' },
  ".cm-diagnosticAction": { background: "#1f883d", border: "1px solid #1a7f37", borderRadius: "6px", padding: "2px 10px", font: "inherit" },
  ".cm-diagnosticAction:focus-visible": { outline: "3px solid #0969da", outlineOffset: "1px" },
  ".cm-diagnosticText": { whiteSpace: "pre-wrap" },
  // @codemirror/lint draws underlines and gutter marks as data: SVG images, which the CSP's
  // img-src 'self' refuses: drawn here with CSS instead, in the page's severity colours.
  ".cm-lintRange": { backgroundImage: "none", textDecorationLine: "underline", textDecorationStyle: "wavy", textDecorationSkipInk: "none", paddingBottom: "0" },
  ".cm-lintRange-error": { backgroundImage: "none", textDecorationColor: SEVERITY_COLOUR.error },
  ".cm-lintRange-warning": { backgroundImage: "none", textDecorationColor: SEVERITY_COLOUR.warning },
  ".cm-lintRange-info": { backgroundImage: "none", textDecorationColor: SEVERITY_COLOUR.info },
  ".cm-lint-marker": { content: "normal", width: "0.8em", height: "0.8em", borderRadius: "50%", margin: "0.25em 0 0 0.1em" },
  ".cm-lint-marker-error": { content: "normal", background: SEVERITY_COLOUR.error },
  ".cm-lint-marker-warning": { content: "normal", background: SEVERITY_COLOUR.warning },
  ".cm-lint-marker-info": { content: "normal", background: SEVERITY_COLOUR.info },
});

export interface PlaygroundEditor {
  view: EditorView;
  text(): string;
  setText(text: string): void;
  setLanguage(kind: InputKind): void;
  /** Shows the findings of an analysis of `analyzed`; `onFix` is told when a fix was applied or could not be. */
  showFindings(findings: readonly Finding[], analyzed: string): void;
}

export interface EditorOptions {
  parent: HTMLElement;
  label: string;
  /** Called after every edit the user makes (typing, paste, undo, an applied fix). */
  onEdit: () => void;
  /** A paste or drop to refuse before CodeMirror inserts it: return true when refused. */
  refuse: (event: ClipboardEvent | DragEvent) => boolean;
  /** Said when a fix cannot be applied (the text changed after the analysis). */
  onStale: (message: string) => void;
}

/** The edits of a fix as one CodeMirror transaction's changes (offsets of the analyzed text). */
export function fixChanges(finding: Finding): { from: number; to: number; insert: string }[] {
  return (finding.fix?.edits ?? []).map((e) => ({ from: e.range.start.offset, to: e.range.end.offset, insert: e.newText })).sort((a, b) => a.from - b.from);
}

function diagnosticFor(f: Finding, length: number, fixAction: (f: Finding) => Action | undefined): Diagnostic {
  const from = Math.min(f.location.range.start.offset, length);
  const to = Math.max(from, Math.min(f.location.range.end.offset, length));
  const action = fixAction(f);
  const firstLine = f.message.split("\n")[0] ?? f.message;
  return {
    from,
    to,
    severity: f.severity,
    source: f.ruleId,
    // Severity as a word, not only as the mark's colour.
    message: `${SEVERITY_LABEL[f.severity]} ${f.ruleId}: ${firstLine}`,
    ...(action ? { actions: [action] } : {}),
  };
}

export function createEditor(options: EditorOptions): PlaygroundEditor {
  const language = new Compartment();
  const shadow = options.parent.attachShadow({ mode: "open" });
  let analyzedText: string | undefined;

  const fixAction = (f: Finding): Action | undefined => {
    if (!f.fix || f.fix.edits.length === 0) return undefined;
    return {
      name: "Apply fix",
      apply(view) {
        if (view.state.doc.toString() !== analyzedText) return options.onStale("The text changed after this analysis; the fix is offered again once the new one is done.");
        view.dispatch({ changes: fixChanges(f), userEvent: "input.fix" });
      },
    };
  };

  const view = new EditorView({
    root: shadow,
    parent: shadow,
    state: EditorState.create({
      doc: "",
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightSpecialChars(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        language.of(LANGUAGE.python()),
        lintGutter(),
        // No Tab binding: Tab leaves the editor, so keyboard users are never trapped in it.
        keymap.of([...defaultKeymap, ...historyKeymap, ...lintKeymap]),
        EditorView.contentAttributes.of({ "aria-label": options.label, tabindex: "0", spellcheck: "false", autocapitalize: "off", autocorrect: "off" }),
        EditorView.domEventHandlers({ paste: (e) => options.refuse(e), drop: (e) => options.refuse(e) }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged && u.transactions.some((t) => t.isUserEvent("input") || t.isUserEvent("delete") || t.isUserEvent("undo") || t.isUserEvent("redo") || t.isUserEvent("move"))) options.onEdit();
        }),
        theme,
      ],
    }),
  });

  return {
    view,
    text: () => view.state.doc.toString(),
    setText(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    setLanguage(kind) {
      view.dispatch({ effects: language.reconfigure(LANGUAGE[kind]()) });
    },
    showFindings(findings, analyzed) {
      analyzedText = analyzed;
      // Findings of an older text would underline the wrong places: shown only for the text they are about.
      const current = view.state.doc.toString() === analyzed;
      const diagnostics = current ? findings.map((f) => diagnosticFor(f, view.state.doc.length, fixAction)) : [];
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
  };
}
