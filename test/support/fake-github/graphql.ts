// A purpose-built GraphQL subset, enough for reading many files in one round trip.
//
// Supported documents (one `query` operation; anonymous or named; `$variables`
// with any type annotations and defaults; `#` comments; aliases everywhere):
//
//   query($owner: String!, $name: String!) {
//     rateLimit { limit cost remaining used resetAt }
//     repository(owner: $owner, name: $name) {
//       nameWithOwner name id
//       defaultBranchRef { name target { oid } }
//       f0: object(expression: "SHA:path/to/file.py") {
//         __typename oid
//         ... on Blob { text byteSize isBinary isTruncated oid abbreviatedOid }
//         ... on Tree { entries { name path type oid } }
//       }
//       f1: object(oid: "<blob sha>") { ... on Blob { text } }
//     }
//   }
//
// `expression` is "<rev>:<path>" where rev is a commit sha, branch or tag.
// A missing object is `null`; a missing repository is `null` plus a NOT_FOUND
// error; an unknown field is a validation error with no data (as on GitHub).
// More than `objectLimit` `object` selections is refused (MAX_COMPLEXITY).
import { isObject, type JsonObject } from "./json.ts";
import { blobSha, toBuffer, type FakeState, type FileContent, type RepoState } from "./state.ts";

type Value =
  | { kind: "var"; name: string }
  | { kind: "literal"; value: unknown };

interface Field {
  readonly kind: "field";
  readonly alias: string;
  readonly name: string;
  readonly args: Record<string, Value>;
  readonly selections: Selection[];
}

interface InlineFragment {
  readonly kind: "fragment";
  readonly typeName: string;
  readonly selections: Selection[];
}

type Selection = Field | InlineFragment;

export class GraphQLSyntaxError extends Error {}

interface GraphQLError {
  message: string;
  type?: string;
  path?: string[];
  extensions?: JsonObject;
}

class GraphQLFieldError extends Error {
  constructor(message: string, readonly typeName: string, readonly fieldName: string) {
    super(message);
  }
}

const TOKEN_RE = /\s+|,|#[^\n]*|(\.\.\.|[{}():!$=[\]@])|("(?:[^"\\]|\\.)*")|(-?\d+(?:\.\d+)?)|([_A-Za-z][_0-9A-Za-z]*)/y;

function tokenize(source: string): string[] {
  const tokens: string[] = [];
  TOKEN_RE.lastIndex = 0;
  while (TOKEN_RE.lastIndex < source.length) {
    const start = TOKEN_RE.lastIndex;
    const m = TOKEN_RE.exec(source);
    if (!m) throw new GraphQLSyntaxError(`Parse error on "${source.slice(start, start + 10)}"`);
    const tok = m[1] ?? m[2] ?? m[3] ?? m[4];
    if (tok !== undefined) tokens.push(tok);
  }
  return tokens;
}

class Parser {
  private at = 0;
  constructor(private readonly tokens: string[]) {}

  private peek(): string | undefined {
    return this.tokens[this.at];
  }

  private next(): string {
    const t = this.tokens[this.at++];
    if (t === undefined) throw new GraphQLSyntaxError("Parse error: unexpected end of document");
    return t;
  }

  private expect(tok: string): void {
    const t = this.next();
    if (t !== tok) throw new GraphQLSyntaxError(`Parse error on "${t}": expected "${tok}"`);
  }

  private name(): string {
    const t = this.next();
    if (!/^[_A-Za-z]/.test(t)) throw new GraphQLSyntaxError(`Parse error on "${t}": expected a name`);
    return t;
  }

  document(): Selection[] {
    const first = this.peek();
    if (first === "mutation" || first === "subscription") {
      throw new GraphQLSyntaxError(`the fake supports only queries, not ${first}`);
    }
    if (first === "query") {
      this.next();
      if (this.peek() !== "{" && this.peek() !== "(") this.name();
      if (this.peek() === "(") this.skipVariableDefinitions();
    }
    const selections = this.selectionSet();
    if (this.peek() !== undefined) throw new GraphQLSyntaxError("the fake supports one operation per document");
    return selections;
  }

  private skipVariableDefinitions(): void {
    let depth = 0;
    do {
      const t = this.next();
      if (t === "(") depth++;
      if (t === ")") depth--;
    } while (depth > 0);
  }

  private selectionSet(): Selection[] {
    this.expect("{");
    const out: Selection[] = [];
    while (this.peek() !== "}") out.push(this.selection());
    this.expect("}");
    return out;
  }

  private selection(): Selection {
    if (this.peek() === "...") {
      this.next();
      const on = this.name();
      if (on !== "on") throw new GraphQLSyntaxError("the fake supports inline fragments (`... on Type`) only");
      const typeName = this.name();
      return { kind: "fragment", typeName, selections: this.selectionSet() };
    }
    let alias = this.name();
    let name = alias;
    if (this.peek() === ":") {
      this.next();
      name = this.name();
    }
    const args: Record<string, Value> = {};
    if (this.peek() === "(") {
      this.next();
      while (this.peek() !== ")") {
        const argName = this.name();
        this.expect(":");
        args[argName] = this.value();
      }
      this.next();
    }
    const selections = this.peek() === "{" ? this.selectionSet() : [];
    return { kind: "field", alias, name, args, selections };
  }

  private value(): Value {
    const t = this.next();
    if (t === "$") return { kind: "var", name: this.name() };
    if (t.startsWith('"')) return { kind: "literal", value: JSON.parse(t) };
    if (/^-?\d/.test(t)) return { kind: "literal", value: Number(t) };
    if (t === "true" || t === "false") return { kind: "literal", value: t === "true" };
    if (t === "null") return { kind: "literal", value: null };
    if (t === "[") {
      const items: unknown[] = [];
      while (this.peek() !== "]") {
        const v = this.value();
        items.push(v.kind === "literal" ? v.value : null);
      }
      this.next();
      return { kind: "literal", value: items };
    }
    return { kind: "literal", value: t }; // enum value
  }
}

export function parseQuery(source: string): Selection[] {
  return new Parser(tokenize(source)).document();
}

interface GitObject {
  readonly type: "Blob" | "Tree";
  readonly oid: string;
  readonly content?: FileContent;
  readonly entries?: { name: string; path: string; type: "blob" | "tree"; oid: string }[];
}

export interface GraphQLContext {
  readonly state: FakeState;
  readonly objectLimit: number;
  /** null when the caller may not see the repository (wrong installation) */
  readonly findRepo: (owner: string, name: string) => RepoState | undefined;
  readonly treeOid: (commit: string, dir: string) => string;
}

function countObjects(selections: readonly Selection[]): number {
  let n = 0;
  for (const s of selections) {
    if (s.kind === "field" && s.name === "object") n++;
    n += countObjects(s.selections);
  }
  return n;
}

function argValue(field: Field, name: string, variables: JsonObject): unknown {
  const v = field.args[name];
  if (!v) return undefined;
  if (v.kind === "literal") return v.value;
  if (!(v.name in variables)) throw new GraphQLFieldError(`Variable $${v.name} was not provided`, "Query", field.name);
  return variables[v.name];
}

function stringArg(field: Field, name: string, variables: JsonObject): string {
  const v = argValue(field, name, variables);
  if (typeof v !== "string") throw new GraphQLFieldError(`Argument '${name}' on Field '${field.name}' has an invalid value`, "Query", field.name);
  return v;
}

function isBinary(content: FileContent): boolean {
  return toBuffer(content).includes(0);
}

function lookupObject(ctx: GraphQLContext, repo: RepoState, field: Field, variables: JsonObject): GitObject | null {
  const oid = argValue(field, "oid", variables);
  if (typeof oid === "string") {
    const content = ctx.state.blobs.get(oid);
    return content === undefined ? null : { type: "Blob", oid, content };
  }
  const expression = stringArg(field, "expression", variables);
  const colon = expression.indexOf(":");
  const rev = colon < 0 ? expression : expression.slice(0, colon);
  const path = colon < 0 ? "" : expression.slice(colon + 1).replace(/^\/+|\/+$/g, "");
  const sha = ctx.state.resolveRef(repo, rev);
  const tree = sha === undefined ? undefined : ctx.state.commits.get(sha);
  if (!tree || sha === undefined) return null;
  const content = tree.get(path);
  if (content !== undefined) return { type: "Blob", oid: blobSha(content), content };
  const prefix = path === "" ? "" : `${path}/`;
  const children = new Map<string, "blob" | "tree">();
  for (const p of tree.keys()) {
    if (!p.startsWith(prefix)) continue;
    const rest = p.slice(prefix.length);
    const slash = rest.indexOf("/");
    children.set(slash < 0 ? rest : rest.slice(0, slash), slash < 0 ? "blob" : "tree");
  }
  if (children.size === 0) return null;
  const entries = [...children.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, type]) => {
    const childPath = prefix + name;
    const c = tree.get(childPath);
    return { name, path: childPath, type, oid: type === "blob" && c !== undefined ? blobSha(c) : ctx.treeOid(sha, childPath) };
  });
  return { type: "Tree", oid: ctx.treeOid(sha, path), entries };
}

function resolveSelections(
  typeName: string,
  selections: readonly Selection[],
  resolveField: (field: Field) => unknown,
): JsonObject {
  const out: JsonObject = {};
  for (const s of selections) {
    if (s.kind === "fragment") {
      if (s.typeName === typeName) Object.assign(out, resolveSelections(typeName, s.selections, resolveField));
      continue;
    }
    out[s.alias] = s.name === "__typename" ? typeName : resolveField(s);
  }
  return out;
}

function unknownField(typeName: string, field: Field): never {
  throw new GraphQLFieldError(`Field '${field.name}' doesn't exist on type '${typeName}'`, typeName, field.name);
}

function resolveGitObject(obj: GitObject, selections: readonly Selection[]): JsonObject {
  return resolveSelections(obj.type, selections, (f) => {
    if (f.name === "oid") return obj.oid;
    if (f.name === "abbreviatedOid") return obj.oid.slice(0, 7);
    if (obj.type === "Blob" && obj.content !== undefined) {
      const binary = isBinary(obj.content);
      if (f.name === "text") return binary ? null : toBuffer(obj.content).toString("utf8");
      if (f.name === "byteSize") return toBuffer(obj.content).length;
      if (f.name === "isBinary") return binary;
      if (f.name === "isTruncated") return false;
    }
    if (obj.type === "Tree" && f.name === "entries") {
      return (obj.entries ?? []).map((e) => resolveSelections("TreeEntry", f.selections, (ef) => {
        if (ef.name === "name" || ef.name === "path" || ef.name === "type" || ef.name === "oid") return e[ef.name];
        return unknownField("TreeEntry", ef);
      }));
    }
    return unknownField(obj.type, f);
  });
}

function resolveRepository(ctx: GraphQLContext, repo: RepoState, field: Field, variables: JsonObject): JsonObject {
  return resolveSelections("Repository", field.selections, (f) => {
    switch (f.name) {
      case "object": {
        const obj = lookupObject(ctx, repo, f, variables);
        return obj === null ? null : resolveGitObject(obj, f.selections);
      }
      case "nameWithOwner":
        return `${repo.owner}/${repo.name}`;
      case "name":
        return repo.name;
      case "id":
        return Buffer.from(`Repository:${repo.id}`).toString("base64");
      case "defaultBranchRef": {
        const sha = ctx.state.resolveRef(repo, repo.defaultBranch) ?? null;
        return resolveSelections("Ref", f.selections, (rf) => {
          if (rf.name === "name") return repo.defaultBranch;
          if (rf.name === "target") return resolveSelections("Commit", rf.selections, (tf) => (tf.name === "oid" ? sha : unknownField("Commit", tf)));
          return unknownField("Ref", rf);
        });
      }
      default:
        return unknownField("Repository", f);
    }
  });
}

export interface GraphQLResponse {
  data?: JsonObject | null;
  errors?: GraphQLError[];
}

/** Execute a query against the fake's state. Always a 200-style payload, as GitHub answers. */
export function executeGraphQL(ctx: GraphQLContext, body: unknown): GraphQLResponse {
  if (!isObject(body) || typeof body.query !== "string") {
    return { errors: [{ message: "A query attribute must be specified and must be a string." }] };
  }
  const variables = isObject(body.variables) ? body.variables : {};
  let selections: Selection[];
  try {
    selections = parseQuery(body.query);
  } catch (e) {
    return { errors: [{ message: e instanceof Error ? e.message : String(e) }] };
  }
  const objects = countObjects(selections);
  if (objects > ctx.objectLimit) {
    return { errors: [{ message: `Query has complexity of ${objects}, which exceeds max complexity of ${ctx.objectLimit}`, extensions: { code: "MAX_COMPLEXITY" } }] };
  }
  const errors: GraphQLError[] = [];
  try {
    const data = resolveSelections("Query", selections, (f) => {
      if (f.name === "rateLimit") {
        return resolveSelections("RateLimit", f.selections, (rf) => {
          const values: JsonObject = { limit: 5000, cost: 1, remaining: 4999, used: 1, resetAt: new Date(Date.now() + 3600_000).toISOString(), nodeCount: objects };
          return rf.name in values ? values[rf.name] : unknownField("RateLimit", rf);
        });
      }
      if (f.name !== "repository") return unknownField("Query", f);
      const owner = stringArg(f, "owner", variables);
      const name = stringArg(f, "name", variables);
      const repo = ctx.findRepo(owner, name);
      if (!repo) {
        errors.push({ type: "NOT_FOUND", path: [f.alias], message: `Could not resolve to a Repository with the name '${owner}/${name}'.` });
        return null;
      }
      return resolveRepository(ctx, repo, f, variables);
    });
    return errors.length > 0 ? { data, errors } : { data };
  } catch (e) {
    if (e instanceof GraphQLFieldError) {
      return { errors: [{ message: e.message, extensions: { code: "undefinedField", typeName: e.typeName, fieldName: e.fieldName } }] };
    }
    throw e;
  }
}
