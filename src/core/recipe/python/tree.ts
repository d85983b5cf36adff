// A lean JavaScript copy of the tree-sitter tree, built in one cursor walk.
//
// Every property read on a web-tree-sitter node crosses into wasm, so the evaluator never
// touches tree-sitter nodes: it works on these plain objects. To keep the walk well under
// the cost of parsing, it reads the type of every node but offsets only where they are
// used (names and literals; a punctuation token only when it starts or ends its parent,
// since inner nodes span their first to last child); it skips comments, imports, plain
// strings and nested defs; keeps only a stub for statements that assign an attribute no
// setting depends on (`cfg.train.global_batch_size = 512`); and builds the common
// `cfg.model.x = 4` statements from their text instead of walking them.
import type { Node, Tree, TreeCursor } from "web-tree-sitter";
import { RELEVANT_ATTRIBUTES } from "./keys.ts";

export interface PyNode {
  /** tree-sitter type; anonymous tokens keep their text ("=", "+", "def"). */
  t: string;
  /** Start and end as UTF-16 offsets into the file text (web-tree-sitter counts that way for JS strings). */
  s: number;
  e: number;
  c: PyNode[];
  /** The subtree holds an ERROR or MISSING node. */
  err: boolean;
}

/** A statement skipped by the walk; it keeps its range so anchors can be placed after it. */
export const SKIPPED = "skipped_statement";
/** A def or class inside a function or class body: binds a name, never evaluated. */
export const NESTED_DEFINITION = "nested_definition";

const STATEMENT_PARENTS = new Set(["module", "block"]);
const IGNORED_STATEMENTS = new Set([
  "import_statement",
  "import_from_statement",
  "future_import_statement",
  "pass_statement",
  "assert_statement",
  "global_statement",
  "nonlocal_statement",
  "print_statement",
]);
const DEFINITIONS = new Set(["function_definition", "class_definition", "decorated_definition"]);
const ATTR_ASSIGNMENT = /^[A-Za-z_]\w*(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)+[ \t]*(?:\/\/|\*\*|<<|>>|[-+*/%&|^@])?=(?!=)/;

export function buildTree(tree: Tree, text: string): PyNode {
  const root: PyNode = { t: "module", s: 0, e: text.length, c: [], err: false };
  // With syntax errors every offset is read, so invented zero-width (MISSING) tokens are seen.
  const exact = tree.rootNode.hasError;
  const cursor = tree.walk();
  try {
    if (cursor.gotoFirstChild()) walk(cursor, root, text, exact);
  } finally {
    cursor.delete();
  }
  return root;
}

/** What visit did with the cursor's node. */
const SKIP = 0; // not kept (a comment, a module-level import)
const DONE = 1; // kept with its offsets, children not walked

function walk(cursor: TreeCursor, root: PyNode, text: string, exact: boolean): void {
  // Explicit stack instead of recursion: 1000-deep input must not overflow the JS stack.
  const parents: PyNode[] = [root];
  let lastSkipped = false;
  for (;;) {
    const parent = parents[parents.length - 1] as PyNode;
    const node = visit(cursor, parent, text, exact);
    lastSkipped = node === SKIP;
    if (typeof node === "object") {
      if (cursor.gotoFirstChild()) {
        parents.push(node);
        continue;
      }
      closeLeaf(cursor, node, parent.c.length === 1, exact);
    }
    // Climb until a sibling exists, closing the inner nodes left behind.
    while (!cursor.gotoNextSibling()) {
      finishLastChild(cursor, parents[parents.length - 1] as PyNode, lastSkipped);
      lastSkipped = false;
      if (parents.length <= 1 || !cursor.gotoParent()) return;
      closeInner(parents.pop() as PyNode);
    }
  }
}

/**
 * Adds the cursor's node to its parent. Returns the node when its children should be
 * walked (or it is a leaf whose offsets are still to be read), DONE or SKIP otherwise.
 */
function visit(cursor: TreeCursor, parent: PyNode, text: string, exact: boolean): PyNode | typeof SKIP | typeof DONE {
  const t = cursor.nodeType;
  // Comments never matter and are never the first or last part of an expression.
  if (t === "comment") return SKIP;
  if (STATEMENT_PARENTS.has(parent.t)) {
    const kept = keepStatement(cursor, t, parent, text, exact);
    if (kept !== KEEP) return kept;
  }
  if (t === "string") {
    const s = cursor.startIndex;
    const leaf: PyNode = { t, s, e: cursor.endIndex, c: [], err: false };
    parent.c.push(leaf);
    // Only f-strings have parts worth evaluating.
    return isFString(text, s) ? leaf : DONE;
  }
  const node: PyNode = { t, s: -1, e: -1, c: [], err: t === "ERROR" };
  parent.c.push(node);
  return node;
}

/**
 * Offsets of a leaf. A punctuation or keyword token in the middle of its parent is only
 * needed for its type, so its offsets are read only when it starts or ends the parent.
 */
function closeLeaf(cursor: TreeCursor, node: PyNode, isFirst: boolean, exact: boolean): void {
  if (!exact && ANONYMOUS.test(node.t)) {
    if (isFirst) node.s = cursor.startIndex;
    return;
  }
  node.s = cursor.startIndex;
  node.e = cursor.endIndex;
  // A zero-width token is one the parser invented to recover (MISSING).
  if (node.s === node.e && cursor.nodeIsMissing) node.err = true;
}

/** The cursor is on the parent's last child: give a token that ends the parent its end offset. */
function finishLastChild(cursor: TreeCursor, parent: PyNode, lastSkipped: boolean): void {
  const last = parent.c[parent.c.length - 1];
  if (!last || last.e >= 0) return;
  if (!lastSkipped) {
    last.e = cursor.endIndex;
    return;
  }
  // Comments followed the last kept child: step back over them.
  while (cursor.gotoPreviousSibling()) {
    if (cursor.nodeType !== "comment") {
      last.e = cursor.endIndex;
      return;
    }
  }
}

const KEEP = 2;

/** KEEP to walk the statement, DONE when a stub stands for it, SKIP when it is dropped. */
function keepStatement(cursor: TreeCursor, t: string, parent: PyNode, text: string, exact: boolean): typeof KEEP | typeof DONE | typeof SKIP {
  if (IGNORED_STATEMENTS.has(t)) return parent.t === "module" ? SKIP : pushStub(cursor, parent, SKIPPED);
  // Only module-level definitions are ever evaluated; nested ones (methods, closures) are not.
  if (DEFINITIONS.has(t) && parent.t === "block") return pushStub(cursor, parent, NESTED_DEFINITION);
  if (t !== "expression_statement") return KEEP;
  const s = cursor.startIndex;
  const e = cursor.endIndex;
  if (isIrrelevantAttributeAssignment(text, s, e)) {
    parent.c.push({ t: SKIPPED, s, e, c: [], err: false });
    return DONE;
  }
  const simple = exact ? null : simpleAssignment(text, s, e);
  if (!simple) return KEEP;
  parent.c.push(simple);
  return DONE;
}

// `a.b.c = <literal, name or dotted name>`: most relevant recipe lines. Built from the text
// (tree-sitter already said it is one expression statement), which saves walking ~12 nodes.
const NAME_CHAIN = "[A-Za-z_]\\w*(?:\\.[A-Za-z_]\\w*)*";
const SIMPLE_VALUE = `(?:\\d[\\d_]*(?:\\.\\d*)?(?:[eE][-+]?\\d+)?|"[^"\\\\\\n]*"|'[^'\\\\\\n]*'|${NAME_CHAIN})`;
const SIMPLE_ASSIGNMENT = new RegExp(`^(${NAME_CHAIN})([ \\t]*=[ \\t]*)(${SIMPLE_VALUE})$`);
const LITERAL_TYPES: Record<string, string> = { True: "true", False: "false", None: "none" };

function simpleAssignment(text: string, s: number, e: number): PyNode | null {
  if (e - s > 300) return null;
  const m = SIMPLE_ASSIGNMENT.exec(text.slice(s, e));
  if (!m) return null;
  const target = m[1] as string;
  const valueText = m[3] as string;
  const valueStart = s + target.length + (m[2] as string).length;
  const left = nameChain(target, s);
  const value = simpleValue(valueText, valueStart);
  if (!left || !value) return null;
  const eq: PyNode = { t: "=", s: -1, e: -1, c: [], err: false };
  const assignment: PyNode = { t: "assignment", s, e, c: [left, eq, value], err: false };
  return { t: "expression_statement", s, e, c: [assignment], err: false };
}

function simpleValue(valueText: string, at: number): PyNode | null {
  const first = valueText.charCodeAt(0);
  const end = at + valueText.length;
  if (first >= 48 && first <= 57) return { t: /[.eE]/.test(valueText) ? "float" : "integer", s: at, e: end, c: [], err: false };
  if (first === 34 || first === 39) return { t: "string", s: at, e: end, c: [], err: false };
  const literal = LITERAL_TYPES[valueText];
  if (literal) return { t: literal, s: at, e: end, c: [], err: false };
  return nameChain(valueText, at);
}

/** `a.b.c` starting at `at` as nested attribute nodes; null for a keyword (not a name). */
function nameChain(chain: string, at: number): PyNode | null {
  const parts = chain.split(".");
  let pos = at;
  let node: PyNode | null = null;
  for (const part of parts) {
    if (PYTHON_KEYWORDS.has(part)) return null;
    const id: PyNode = { t: "identifier", s: pos, e: pos + part.length, c: [], err: false };
    node = node ? { t: "attribute", s: at, e: id.e, c: [node, { t: ".", s: -1, e: -1, c: [], err: false }, id], err: false } : id;
    pos = id.e + 1;
  }
  return node;
}

const PYTHON_KEYWORDS = new Set([
  "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
  "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
  "pass", "raise", "return", "try", "while", "with", "yield", "print", "exec",
]);

function pushStub(cursor: TreeCursor, parent: PyNode, t: string): typeof DONE {
  parent.c.push({ t, s: cursor.startIndex, e: cursor.endIndex, c: [], err: false });
  return DONE;
}

function isFString(text: string, s: number): boolean {
  for (let i = s; i < s + 3 && i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 102 || ch === 70) return true; // f / F
    if (ch === 34 || ch === 39) return false; // quote: prefix over
  }
  return false;
}

/** `a.b.c = v` whose last attribute no setting depends on, and not a chained assignment. */
function isIrrelevantAttributeAssignment(text: string, s: number, e: number): boolean {
  const head = text.slice(s, Math.min(e, s + 200));
  const m = ATTR_ASSIGNMENT.exec(head);
  if (!m) return false;
  const target = m[0].replace(/[\s=\-+*/%&|^@<>]+$/, "");
  const last = target.slice(target.lastIndexOf(".") + 1).trim();
  if (RELEVANT_ATTRIBUTES.has(last)) return false;
  return !hasTopLevelAssignment(text, s + m[0].length, e);
}

/** A second `=` outside brackets and strings means `a.x = b.y = v`, which must be walked. */
function hasTopLevelAssignment(text: string, from: number, to: number): boolean {
  let depth = 0;
  let quote = 0;
  for (let i = from; i < to; i++) {
    const ch = text.charCodeAt(i);
    if (quote) {
      if (ch === 92) i++;
      else if (ch === quote) quote = 0;
      continue;
    }
    if (ch === 34 || ch === 39) quote = ch;
    else if (ch === 35) {
      while (i < to && text.charCodeAt(i) !== 10) i++; // comment
    } else if (ch === 40 || ch === 91 || ch === 123) depth++;
    else if (ch === 41 || ch === 93 || ch === 125) depth--;
    else if (ch === 61 && depth === 0) {
      const prev = text.charCodeAt(i - 1);
      const next = text.charCodeAt(i + 1);
      if (next === 61) {
        i++;
        continue;
      }
      if (prev !== 33 && prev !== 60 && prev !== 62 && prev !== 58) return true;
    }
  }
  return false;
}

function closeInner(node: PyNode): void {
  const first = node.c[0];
  const last = node.c[node.c.length - 1];
  if (first && last) {
    node.s = first.s;
    node.e = last.e;
  }
  for (const child of node.c) {
    if (child.err) {
      node.err = true;
      break;
    }
  }
}

/** The first ERROR or MISSING node, found by following only the subtrees that hold one. */
export function firstSyntaxError(tree: Tree): Node | null {
  let node: Node = tree.rootNode;
  if (!node.hasError) return null;
  for (let steps = 0; steps < 100_000; steps++) {
    if (node.isError || node.isMissing) return node;
    let next: Node | null = null;
    for (const child of node.children) {
      if (child && (child.hasError || child.isMissing)) {
        next = child;
        break;
      }
    }
    if (!next) return node;
    node = next;
  }
  return node;
}

export function textOf(text: string, n: PyNode): string {
  return text.slice(n.s, n.e);
}

/** Named children, without comments and anonymous tokens. */
export function named(n: PyNode): PyNode[] {
  return n.c.filter(isNamedNode);
}

const ANONYMOUS = /^[^a-z_]|^(?:def|class|if|elif|else|for|while|in|not|and|or|is|lambda|return|with|as|try|except|finally|from|import|async|await|pass|del|global|nonlocal|raise|assert|yield)$/;

export function isNamedNode(n: PyNode): boolean {
  // Anonymous tokens are always leaves; an inner node is named even if its type is a keyword (lambda, await).
  return n.c.length > 0 || !ANONYMOUS.test(n.t);
}
