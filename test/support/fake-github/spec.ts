// The OpenAPI description of api.github.com, used as the referee for the fake:
// routing (which operation is this request?), request-body validation and
// response validation. Loaded once per process; validators compile lazily.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { isObject, type JsonObject } from "./json.ts";

export interface Operation {
  readonly method: string;
  readonly template: string;
  readonly operationId: string;
  readonly raw: JsonObject;
}

export interface RouteMatch {
  readonly op: Operation;
  readonly params: Record<string, string>;
}

export interface ValidationOutcome {
  readonly ok: boolean;
  readonly errors: readonly ErrorObject[];
}

interface Segment {
  readonly literal?: string;
  readonly param?: string;
  /** the last `{path}`/`{ref}` segment may contain slashes, as on GitHub */
  readonly greedy: boolean;
}

interface CompiledRoute {
  readonly op: Operation;
  readonly segments: readonly Segment[];
  readonly literalCount: number;
}

const HTTP_METHODS = new Set(["get", "post", "put", "patch", "delete", "head"]);
const SCHEMA_BASE = "https://fake-github.invalid/schemas/";
const GREEDY_PARAMS = new Set(["path", "ref"]);
// Keys whose value is data, not a schema: never rewrite refs or drop keys inside.
const DATA_KEYS = new Set(["enum", "default", "const", "example", "examples"]);
// Keys whose value maps names to schemas (property names may be "description" etc.).
const SCHEMA_MAP_KEYS = new Set(["properties", "patternProperties", "definitions"]);

function compileTemplate(template: string): { segments: Segment[]; literalCount: number } {
  const parts = template.split("/").slice(1);
  let literalCount = 0;
  const segments = parts.map((part, i): Segment => {
    const m = /^\{([^}]+)\}$/.exec(part);
    if (!m || m[1] === undefined) {
      literalCount++;
      return { literal: part, greedy: false };
    }
    return { param: m[1], greedy: i === parts.length - 1 && GREEDY_PARAMS.has(m[1]) };
  });
  return { segments, literalCount };
}

function matchSegments(segments: readonly Segment[], parts: readonly string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    if (seg.greedy) {
      const rest = parts.slice(i);
      if (rest.length === 0 || rest.some((p) => p === "")) return undefined;
      params[seg.param!] = rest.map(decodeURIComponent).join("/");
      return params;
    }
    const part = parts[i];
    if (part === undefined || part === "") return undefined;
    if (seg.literal !== undefined) {
      if (seg.literal !== part) return undefined;
    } else {
      params[seg.param!] = decodeURIComponent(part);
    }
  }
  return parts.length === segments.length ? params : undefined;
}

/** OpenAPI 3.0 -> what ajv accepts: absolute $refs, `nullable` without `type`. */
function convertSchema(node: unknown, refs: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((n) => convertSchema(n, refs));
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref" && typeof value === "string") {
      const name = value.replace("#/components/schemas/", "");
      refs.add(name);
      out.$ref = SCHEMA_BASE + name;
    } else if (key === "description" || key === "example" || key === "examples") {
      // documentation only; dropping it keeps compiled validators small
    } else if (DATA_KEYS.has(key)) {
      out[key] = value;
    } else if (SCHEMA_MAP_KEYS.has(key) && isObject(value)) {
      const map: JsonObject = {};
      for (const [name, sub] of Object.entries(value)) map[name] = convertSchema(sub, refs);
      out[key] = map;
    } else {
      out[key] = convertSchema(value, refs);
    }
  }
  if (out.nullable === true && out.type === undefined) {
    // ajv refuses `nullable` without `type` (GitHub uses it with allOf/anyOf)
    delete out.nullable;
    return { anyOf: [out, { type: "null" }] };
  }
  if (out.nullable === true && Array.isArray(out.enum) && !out.enum.includes(null)) {
    out.enum = [...out.enum, null];
  }
  return out;
}

export class GitHubSpec {
  private readonly routes: CompiledRoute[] = [];
  private readonly ajv: Ajv;
  private readonly registered = new Set<string>();
  private readonly requestValidators = new Map<string, ValidateFunction | null>();
  private readonly responseValidators = new Map<string, ValidateFunction | null>();

  constructor(private readonly doc: JsonObject) {
    const paths = isObject(doc.paths) ? doc.paths : {};
    for (const [template, item] of Object.entries(paths)) {
      if (!isObject(item)) continue;
      const { segments, literalCount } = compileTemplate(template);
      for (const [method, raw] of Object.entries(item)) {
        if (!HTTP_METHODS.has(method) || !isObject(raw) || typeof raw.operationId !== "string") continue;
        const op: Operation = { method: method.toUpperCase(), template, operationId: raw.operationId, raw };
        this.routes.push({ op, segments, literalCount });
      }
    }
    this.ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
    addFormats.default(this.ajv);
  }

  get operationCount(): number {
    return this.routes.length;
  }

  /** Find the operation; when several templates match, the one with most literal segments wins. */
  match(method: string, pathname: string): RouteMatch | undefined {
    const parts = pathname.split("/").slice(1);
    let best: { route: CompiledRoute; params: Record<string, string> } | undefined;
    for (const route of this.routes) {
      if (route.op.method !== method) continue;
      const params = matchSegments(route.segments, parts);
      if (!params) continue;
      if (!best || route.literalCount > best.route.literalCount) best = { route, params };
    }
    return best ? { op: best.route.op, params: best.params } : undefined;
  }

  /** A deep copy of `components.examples[name].value`. */
  example(name: string): unknown {
    const examples = this.components("examples");
    const ex = examples[name];
    if (!isObject(ex) || !("value" in ex)) throw new Error(`no components.examples.${name}`);
    return structuredClone(ex.value);
  }

  validateRequestBody(op: Operation, body: unknown): ValidationOutcome {
    let validate = this.requestValidators.get(op.operationId);
    if (validate === undefined) {
      validate = this.compileOrNull(this.requestSchema(op));
      this.requestValidators.set(op.operationId, validate);
    }
    return this.run(validate, body);
  }

  requestBodyRequired(op: Operation): boolean {
    const rb = op.raw.requestBody;
    return isObject(rb) && rb.required === true;
  }

  /** `undefined` when the status is not documented for the operation. */
  validateResponse(op: Operation, status: number, body: unknown): ValidationOutcome | undefined {
    const key = `${op.operationId} ${status}`;
    let validate = this.responseValidators.get(key);
    if (validate === undefined) {
      const schema = this.responseSchema(op, status);
      if (schema === undefined) return undefined;
      validate = this.compileOrNull(schema);
      this.responseValidators.set(key, validate);
    }
    return this.run(validate, body);
  }

  isDocumentedStatus(op: Operation, status: number): boolean {
    const responses = isObject(op.raw.responses) ? op.raw.responses : {};
    return String(status) in responses;
  }

  /** Validate against a named component schema (used for undocumented error statuses). */
  validateComponent(name: string, body: unknown): ValidationOutcome {
    return this.run(this.compileOrNull({ $ref: `#/components/schemas/${name}` }), body);
  }

  private run(validate: ValidateFunction | null, data: unknown): ValidationOutcome {
    if (!validate) return { ok: true, errors: [] };
    const ok = validate(data);
    return { ok, errors: ok ? [] : [...(validate.errors ?? [])] };
  }

  private components(kind: string): JsonObject {
    const components = isObject(this.doc.components) ? this.doc.components : {};
    const section = components[kind];
    return isObject(section) ? section : {};
  }

  private resolve(node: unknown, kind: string): unknown {
    if (isObject(node) && typeof node.$ref === "string") {
      const name = node.$ref.replace(`#/components/${kind}/`, "");
      return this.components(kind)[name];
    }
    return node;
  }

  private jsonSchemaOf(content: unknown): unknown {
    if (!isObject(content)) return undefined;
    const media = content["application/json"] ?? Object.entries(content).find(([t]) => t.includes("json"))?.[1];
    return isObject(media) ? media.schema : undefined;
  }

  private requestSchema(op: Operation): unknown {
    const rb = this.resolve(op.raw.requestBody, "requestBodies");
    return isObject(rb) ? this.jsonSchemaOf(rb.content) : undefined;
  }

  /** `null` = documented without a JSON body; `undefined` = not documented. */
  private responseSchema(op: Operation, status: number): unknown {
    const responses = isObject(op.raw.responses) ? op.raw.responses : {};
    const raw = responses[String(status)];
    if (raw === undefined) return undefined;
    const resp = this.resolve(raw, "responses");
    return isObject(resp) ? (this.jsonSchemaOf(resp.content) ?? null) : null;
  }

  private compileOrNull(schema: unknown): ValidateFunction | null {
    if (!isObject(schema)) return null;
    const refs = new Set<string>();
    const converted = convertSchema(schema, refs);
    for (const ref of refs) this.register(ref);
    return this.ajv.compile(isObject(converted) ? converted : {});
  }

  /** Register a component schema (and what it references) under its own absolute id. */
  private register(name: string): void {
    if (this.registered.has(name)) return;
    this.registered.add(name);
    const refs = new Set<string>();
    const converted = convertSchema(this.components("schemas")[name] ?? {}, refs);
    this.ajv.addSchema({ ...(isObject(converted) ? converted : { anyOf: [converted] }), $id: SCHEMA_BASE + name });
    for (const ref of refs) this.register(ref);
  }
}

let cached: GitHubSpec | undefined;
export let specLoadMs = 0;

/** The spec, parsed once per process (about 150-200 ms for the 13 MB file). */
export function loadGitHubSpec(): GitHubSpec {
  if (cached) return cached;
  const started = performance.now();
  const require = createRequire(import.meta.url);
  // only this file: never require("@octokit/openapi"), which loads all ten specs
  const file = require.resolve("@octokit/openapi/generated/api.github.com.json");
  const doc: unknown = JSON.parse(readFileSync(file, "utf8"));
  if (!isObject(doc)) throw new Error("api.github.com.json is not an object");
  cached = new GitHubSpec(doc);
  specLoadMs = performance.now() - started;
  return cached;
}
