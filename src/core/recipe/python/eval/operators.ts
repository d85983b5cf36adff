// Python semantics the evaluator needs on known literals: arithmetic, comparisons, str()
// and string escapes. Pure functions of values; no interpreter state.
import { sameValue, type V } from "../values.ts";

export function isOperatorToken(t: string): boolean {
  return /^(?:<|>|==|>=|<=|!=|<>|in|not|is)$/.test(t);
}

export function arithmetic(op: string, x: number, y: number): number | undefined {
  switch (op) {
    case "+":
      return x + y;
    case "-":
      return x - y;
    case "*":
      return x * y;
    case "/":
      return y === 0 ? undefined : x / y;
    case "//":
      return y === 0 ? undefined : Math.floor(x / y);
    case "%":
      return y === 0 ? undefined : x - y * Math.floor(x / y);
    case "**":
      return x ** y;
    case "<<":
      return Number.isInteger(x) && Number.isInteger(y) && y >= 0 && y < 53 ? x * 2 ** y : undefined;
    case ">>":
      return Number.isInteger(x) && Number.isInteger(y) && y >= 0 ? Math.floor(x / 2 ** y) : undefined;
    default:
      return undefined;
  }
}

export function compare(op: string, a: V, b: V): boolean | null {
  if (op === "is" || op === "is not") {
    if (a.k === "lit" && b.k === "lit" && (a.v === null || b.v === null)) return (a.v === b.v) === (op === "is");
    if ((a.k === "obj" && a.opaque === null && b.k === "lit" && b.v === null) || (b.k === "obj" && b.opaque === null && a.k === "lit" && a.v === null)) {
      return op === "is not";
    }
    return null;
  }
  if (op === "in" || op === "not in") {
    if (a.k !== "lit") return null;
    let found: boolean | null = null;
    if (b.k === "list" && b.items.every((i) => i.k === "lit")) found = b.items.some((i) => i.k === "lit" && i.v === a.v);
    else if (b.k === "dict" && typeof a.v === "string" && (b.map.has(a.v) || !b.open)) found = b.map.has(a.v);
    else if (b.k === "lit" && typeof b.v === "string" && typeof a.v === "string") found = b.v.includes(a.v);
    return found === null ? null : found === (op === "in");
  }
  if (a.k !== "lit" || b.k !== "lit") {
    if ((op === "==" || op === "!=") && a.k === "list" && b.k === "list" && a.items.every((i) => i.k === "lit") && b.items.every((i) => i.k === "lit")) {
      return sameValue(a, b) === (op === "==");
    }
    return null;
  }
  const x = a.v;
  const y = b.v;
  switch (op) {
    case "==":
      return x === y;
    case "!=":
    case "<>":
      return x !== y;
  }
  if (typeof x === "number" && typeof y === "number") {
    switch (op) {
      case "<":
        return x < y;
      case ">":
        return x > y;
      case "<=":
        return x <= y;
      case ">=":
        return x >= y;
    }
  }
  return null;
}

/** Python's str() of a literal value. */
export function pythonStr(v: string | number | boolean | null): string {
  if (v === null) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  return String(v);
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0", "\n": "" };

export function unescape(s: string): string {
  if (!s.includes("\\")) return s;
  return s.replace(/\\(.)/gs, (whole, ch: string) => ESCAPES[ch] ?? whole);
}
