// Transformer Engine version pins in dependency files: uv.lock, pyproject.toml,
// requirements*.txt and Dockerfiles. Line-oriented scans (these files are regular enough
// that a TOML parser would add weight without adding cases), one pass per file.
import { LineIndex, location, type SourceFile } from "../model/source.ts";
import { rejectInput } from "./guards.ts";
import { emptyResult, type ExtractResult, type TePin } from "./types.ts";

/** Dependency files can be large (uv.lock of a big project is megabytes); still bounded. */
const MAX_PIN_FILE_CHARS = 16 * 1024 * 1024;

type PinFileKind = "uv.lock" | "pyproject" | "requirements" | "dockerfile";

function pinFileKind(path: string): PinFileKind | undefined {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  if (name === "uv.lock") return "uv.lock";
  if (name === "pyproject.toml") return "pyproject";
  if (/^(?:requirements|constraints).*\.txt$/.test(name) || /\.(?:in|txt)$/.test(name) && name.includes("requirements")) return "requirements";
  if (name.startsWith("dockerfile") || name.endsWith(".dockerfile") || name === "containerfile") return "dockerfile";
  return undefined;
}

/** "2.18.0+e7c550c5" -> "2.18.0"; "v2.15" -> "2.15"; "2.15.post1" -> "2.15". */
export function normalizeVersion(raw: string): string | undefined {
  const m = /^v?([0-9]+(?:\.[0-9]+)*)/.exec(raw.trim());
  return m?.[1];
}

function numericParts(v: string): number[] {
  const n = normalizeVersion(v);
  return n ? n.split(".").map(Number) : [];
}

/** Numeric comparison of dotted versions; missing parts count as 0 ("2.15" == "2.15.0"). */
export function compareVersions(a: string, b: string): number {
  const x = numericParts(a);
  const y = numericParts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

export function isTeAtLeast(version: string, min: string): boolean {
  return compareVersions(version, min) >= 0;
}

const TE_NAME = String.raw`transformer[-_]engine(?:\[[^\]]*\])?`;
/** `transformer-engine @ git+https://...TransformerEngine.git@release_v2.15` */
const TE_GIT_REF = new RegExp(String.raw`TransformerEngine(?:\.git)?@(?:release_)?v?([0-9]+(?:\.[0-9]+)+)`, "g");
/** `transformer_engine==1.11.0`, `transformer-engine[pytorch]>=2.4.0,<3` */
const TE_SPECIFIER = new RegExp(String.raw`\b${TE_NAME}\s*(===|==|>=|~=)\s*v?([0-9]+(?:\.[0-9]+)*(?:[-+.][A-Za-z0-9.]+)?)`, "gi");
/** `ARG TE_VERSION=2.4`, `ENV TRANSFORMER_ENGINE_VERSION=v2.15` */
const TE_DOCKER_VAR = /^\s*(?:ARG|ENV)\s+(?:TE_VERSION|TRANSFORMER_ENGINE_VERSION|TE_TAG)[=\s]["']?(?:release_)?v?([0-9]+(?:\.[0-9]+)+[^\s"']*)/i;

export function extractTePins(file: SourceFile): ExtractResult {
  const result = emptyResult();
  const kind = pinFileKind(file.path);
  if (!kind) return result;
  const rejected = rejectInput(file.path, file.text, MAX_PIN_FILE_CHARS);
  if (rejected) return { ...result, diagnostics: [rejected] };
  const index = new LineIndex(file.text);
  const pin = (start: number, raw: string, source: string): void => {
    const version = normalizeVersion(raw);
    if (version) result.tePins.push({ version, location: location(file.path, index, start, start + raw.length), source });
  };
  if (kind === "uv.lock") scanUvLock(file.text, pin);
  else if (kind === "pyproject") scanPyproject(file.text, pin);
  else scanRequirementLike(file.text, kind, pin);
  return result;
}

type PinSink = (start: number, raw: string, source: string) => void;

interface Line {
  start: number;
  text: string;
}

function* lines(text: string): Generator<Line> {
  let start = 0;
  while (start <= text.length) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl;
    yield { start, text: text.slice(start, end) };
    if (nl < 0) return;
    start = nl + 1;
  }
}

const TOML_TABLE = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$/;
const TOML_STRING_FIELD = /^\s*(name|version)\s*=\s*"([^"]*)"/;
const TE_PACKAGE_NAME = /^transformer[-_]engine$/i;

/**
 * Tables whose `name`/`version` pair is a resolved or declared TE version: uv.lock
 * `[[package]]`, pyproject `[[tool.uv.dependency-metadata]]`.
 */
function scanNameVersionTables(text: string, tables: ReadonlySet<string>, source: (table: string) => string, pin: PinSink, other?: (line: Line, table: string) => void): void {
  let table = "";
  let isTe = false;
  let pending: { start: number; raw: string } | undefined;
  const flush = (): void => {
    if (isTe && pending && tables.has(table)) pin(pending.start, pending.raw, source(table));
    isTe = false;
    pending = undefined;
  };
  for (const line of lines(text)) {
    const header = TOML_TABLE.exec(line.text);
    if (header) {
      flush();
      table = header[1] ?? "";
      continue;
    }
    const field = TOML_STRING_FIELD.exec(line.text);
    if (field && tables.has(table)) {
      if (field[1] === "name") isTe = TE_PACKAGE_NAME.test(field[2] ?? "");
      else pending = { start: line.start + line.text.indexOf('"', line.text.indexOf("=")) + 1, raw: field[2] ?? "" };
      continue;
    }
    other?.(line, table);
  }
  flush();
}

function scanUvLock(text: string, pin: PinSink): void {
  scanNameVersionTables(text, new Set(["package"]), () => "uv.lock", pin);
}

function scanPyproject(text: string, pin: PinSink): void {
  scanNameVersionTables(
    text,
    new Set(["tool.uv.dependency-metadata"]),
    () => "pyproject.toml [[tool.uv.dependency-metadata]]",
    pin,
    (line, table) => {
      if (/^\s*#/.test(line.text)) return;
      const where = /override-dependencies|constraint-dependencies/.test(line.text) ? "" : table;
      scanSpecifiers(line, `pyproject.toml${where ? ` [${where}]` : ""}`, pin);
      scanSourcesRef(line, table, pin);
    },
  );
}

/** `[tool.uv.sources] transformer-engine = { git = "...", tag = "v2.15" }`. A commit hash is no version. */
function scanSourcesRef(line: Line, table: string, pin: PinSink): void {
  if (!/^\s*transformer[-_]engine\s*=\s*\{/.test(line.text)) return;
  const m = /\b(?:rev|tag|branch)\s*=\s*"((?:release_)?v?)([0-9]+(?:\.[0-9]+)+)"/.exec(line.text);
  if (m && m.index !== undefined) {
    const start = line.start + m.index + m[0].indexOf('"') + 1 + (m[1] ?? "").length;
    pin(start, m[2] ?? "", `pyproject.toml [${table}]`);
  }
}

function scanSpecifiers(line: Line, source: string, pin: PinSink): void {
  for (const m of line.text.matchAll(TE_GIT_REF)) {
    const raw = m[1] ?? "";
    pin(line.start + (m.index ?? 0) + m[0].length - raw.length, raw, `${source} git ref`);
  }
  for (const m of line.text.matchAll(TE_SPECIFIER)) {
    const raw = m[2] ?? "";
    pin(line.start + (m.index ?? 0) + m[0].length - raw.length, raw, `${source} ${m[1]}`);
  }
}

function scanRequirementLike(text: string, kind: "requirements" | "dockerfile", pin: PinSink): void {
  for (const line of lines(text)) {
    const trimmed = line.text.trimStart();
    if (trimmed.startsWith("#")) continue;
    // A trailing comment is not part of the requirement.
    const hash = kind === "requirements" ? line.text.search(/\s#/) : -1;
    const body: Line = hash < 0 ? line : { start: line.start, text: line.text.slice(0, hash) };
    if (kind === "dockerfile") {
      const v = TE_DOCKER_VAR.exec(body.text);
      if (v && v.index !== undefined) {
        const raw = v[1] ?? "";
        pin(line.start + v.index + v[0].length - raw.length, raw, "Dockerfile ARG/ENV");
        continue;
      }
    }
    scanSpecifiers(body, kind === "dockerfile" ? "Dockerfile pip install" : "requirements.txt", pin);
  }
}
