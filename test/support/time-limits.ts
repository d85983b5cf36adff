// Finds time limits written into tests: a timeout given to a test, a suite or a hook, and a
// number given as the limit of a wait (until, waitFor, waitUntil, Playwright's waitFor*). Every
// one of them is PATIENCE_MS instead (./patience.ts): a fixed figure is what made tests fail
// under load. Read with TypeScript's own parser, so formatting cannot hide one.
import ts from "typescript";

export interface TimeLimit {
  line: number;
  what: string;
}

const TESTS = new Set(["it", "test", "describe", "suite"]);
const HOOKS = new Set(["beforeAll", "afterAll", "beforeEach", "afterEach"]);
const WAITS = new Set(["until", "waitFor", "waitUntil", "waitForSelector", "waitForFunction", "waitForEvent", "waitForURL"]);

/** `it`, `describe.concurrent`, `it.each(rows)`, `test.skipIf(c)`: the name the chain starts from. */
function chainRoot(expr: ts.Expression): string | undefined {
  let node: ts.Expression = expr;
  for (;;) {
    if (ts.isIdentifier(node)) return node.text;
    if (ts.isCallExpression(node)) node = node.expression;
    else if (ts.isPropertyAccessExpression(node)) node = node.expression;
    else return undefined;
  }
}

function calleeName(expr: ts.Expression): string | undefined {
  if (ts.isIdentifier(expr)) return expr.text;
  if (ts.isPropertyAccessExpression(expr)) return expr.name.text;
  return undefined;
}

const isFunction = (node: ts.Node) => ts.isArrowFunction(node) || ts.isFunctionExpression(node);

function hasNumber(node: ts.Node): boolean {
  return ts.isNumericLiteral(node) || ts.forEachChild(node, (child) => (hasNumber(child) ? true : undefined)) === true;
}

function timeoutProperty(node: ts.Node): ts.PropertyAssignment | undefined {
  if (!ts.isObjectLiteralExpression(node)) return undefined;
  return node.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText() === "timeout");
}

/** The limits in one file's text, with their lines (1-based). */
export function timeLimitsIn(fileName: string, text: string): TimeLimit[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: TimeLimit[] = [];
  const add = (node: ts.Node, what: string) => found.push({ line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1, what });
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) checkCall(node, add);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function checkCall(call: ts.CallExpression, add: (node: ts.Node, what: string) => void): void {
  const root = chainRoot(call.expression);
  const args = call.arguments;
  if (root && (TESTS.has(root) || HOOKS.has(root))) {
    // A limit is an argument after the name that is neither the body nor the rows of `.each`.
    args.forEach((arg, i) => {
      if (i === 0 && TESTS.has(root)) return;
      if (isFunction(arg)) return;
      const option = timeoutProperty(arg);
      if (option) add(option, `${root}(..., { timeout: ${option.initializer.getText()} })`);
      else if (!ts.isObjectLiteralExpression(arg) && (HOOKS.has(root) ? i === 1 : i === args.length - 1 && args.length >= 3)) add(arg, `${root}(..., ${arg.getText()})`);
    });
  }
  const name = calleeName(call.expression);
  if (name && WAITS.has(name)) {
    for (const arg of args) {
      if (ts.isNumericLiteral(arg)) add(arg, `${name}(..., ${arg.getText()})`);
      const option = timeoutProperty(arg);
      if (option && hasNumber(option.initializer)) add(option, `${name}(..., { timeout: ${option.initializer.getText()} })`);
    }
  }
}
