// Python recipe extractor: one ConfigUnit per recipe function, perf workload constant and
// model-provider dataclass, with the effective value and origin of every setting.
// Pure core: the caller hands in a Parser with the Python language already set.
import type { Parser, Tree } from "web-tree-sitter";
import { LineIndex, location, type SourceFile } from "../../model/source.ts";
import { emptyResult, type Diagnostic, type ExtractResult } from "../types.ts";
import type { ModuleLibrary, ParsedModule } from "./library.ts";
import { scanModule } from "./module.ts";
import { tooDeeplyNested } from "./nesting.ts";
import { buildTree, firstSyntaxError } from "./tree.ts";
import { extractUnits } from "./units.ts";

export { isRecipeName } from "./units.ts";

export { ModuleLibrary } from "./library.ts";

/**
 * Parsers whose WebAssembly runtime failed inside a parse: its state may be damaged, so the
 * caller gives the next file a fresh one (extractFiles).
 */
const failedParsers = new WeakSet<Parser>();

export function parserFailed(parser: Parser): boolean {
  return failedParsers.has(parser);
}

/**
 * A module's definitions and its first syntax error; undefined when the parser gives no
 * tree, or the file is nested past what the parser (and Python) take: it never reaches
 * tree-sitter then.
 */
export function parseModule(file: SourceFile, parser: Parser): ParsedModule | undefined {
  if (tooDeeplyNested(file)) return undefined;
  let tree: ReturnType<Parser["parse"]>;
  try {
    tree = parser.parse(file.text);
  } catch (error) {
    failedParsers.add(parser);
    throw new ParserFailure(error);
  }
  if (!tree) return undefined;
  try {
    const index = new LineIndex(file.text);
    return { mod: scanModule(file.path, file.text, index, buildTree(tree, file.text)), syntax: syntaxDiagnostic(file, tree, index) };
  } finally {
    tree.delete();
  }
}

/**
 * `library`: the other modules of the analyzed tree, whose builders and constants recipes may
 * import. A file that other files import is parsed once, by the library, for both uses.
 */
export function extractPython(file: SourceFile, parser: Parser, library?: ModuleLibrary): ExtractResult {
  const result = emptyResult();
  const deep = tooDeeplyNested(file);
  if (deep) {
    result.diagnostics.push(deep);
    return result;
  }
  try {
    const parsed = library?.isImportTarget(file.path) ? library.parsedModule(file.path) : parseModule(file, parser);
    if (!parsed) {
      result.diagnostics.push({ file: file.path, severity: "error", code: "parse-error", message: "the Python parser returned no tree" });
      return result;
    }
    if (parsed.syntax) result.diagnostics.push(parsed.syntax);
    const extracted = extractUnits(parsed.mod, library);
    result.units = extracted.units;
    result.diagnostics.push(...extracted.diagnostics);
  } catch (error) {
    if (error instanceof ParserFailure) {
      result.diagnostics.push({ file: file.path, severity: "error", code: "too-complex", message: `not analyzed: the Python parser failed on this file (${error.message})` });
      return result;
    }
    // Written not to throw; if it does anyway, the file is reported and analysis goes on.
    const message = error instanceof Error ? error.message : String(error);
    result.diagnostics.push({ file: file.path, severity: "error", code: "unsupported", message: `could not analyze this Python file: ${message}` });
  }
  return result;
}

/** The parser itself failed (a WebAssembly trap): the file is not analyzed, and the parser is replaced. */
class ParserFailure extends Error {
  override name = "ParserFailure";
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message.slice(0, 200) : String(cause).slice(0, 200));
  }
}

function syntaxDiagnostic(file: SourceFile, tree: Tree, index: LineIndex): Diagnostic | null {
  const node = firstSyntaxError(tree);
  if (!node) return null;
  const start = node.startIndex;
  const end = Math.max(start, node.endIndex);
  const where = index.point(start);
  const snippet = file.text.slice(start, Math.min(end, start + 40)).split("\n")[0] ?? "";
  const what = node.isMissing ? `missing \`${node.type}\`` : snippet.trim() ? `cannot parse \`${snippet.trim()}\`` : "unexpected end of input";
  return {
    file: file.path,
    severity: "error",
    code: "parse-error",
    message: `Python syntax error at line ${where.line}, column ${where.column}: ${what}; recipes in the broken part are not analyzed`,
    location: location(file.path, index, start, end),
  };
}
