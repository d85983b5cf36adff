// Detector: the configuration the run printed. Three sources:
// - Bridge's `Configuration Summary (Non-Default Values vs Megatron Core)` (rank 0,
//   `ConfigContainer.log_non_default_values`): `  field: value  (Mcore default: …)` lines,
//   each section sorted by field name. A field missing there is at its Megatron-Core default,
//   and the sorting proves the absence: once the [model] block has gone past where
//   `hierarchical_context_parallel_sizes` would stand, the sizes are None (docs/domain.md 4.1);
// - HEAD run_recipe's `Final configuration:` YAML dump (model and dist sections);
// - Megatron-LM's argument printout (`context-parallel size: N`, `hierarchical context-parallel sizes: […]`).
import { num, type Findings } from "../findings.ts";
import type { VerdictConfig } from "../schema.ts";

const MAX_LIST_ITEMS = 1024;
const YAML_LINE_LIMIT = 50_000;
const SUMMARY_LINE_LIMIT = 5_000;
const WANTED = "cp_comm_type|context_parallel_size|hierarchical_context_parallel_sizes|use_decentralized_pg|eval_context_parallel_size";
const CONFIG_KEY_RE = new RegExp(`(?:^|[\\s'"])(${WANTED}):\\s*(.*)$`);
const WANTED_KEY_RE = new RegExp(`^(?:${WANTED})$`);
const MLM_CP_RE = /(?:^|\s)context-parallel size: (\d+)/;
const MLM_HCP_RE = /hierarchical context-parallel sizes: (\[[^\]]*\]|None)/;
const SUMMARY_SECTION_RE = /^\[(\w+)\] Non-default values/;
const SUMMARY_FIELD_RE = /^ {2}([A-Za-z_][A-Za-z0-9_]*): /;
const SIZES_FIELD = "hierarchical_context_parallel_sizes";

type Source = VerdictConfig["sources"][number];

/** `'a2a+p2p'`, `a2a+p2p`, `['p2p', 'a2a']`, `None` → list of strings or null. */
function parseStringList(value: string): string[] | null {
  const v = value.trim();
  if (v === "" || v === "None" || v === "null" || v === "~") return null;
  const inner = v.startsWith("[") && v.endsWith("]") ? v.slice(1, -1) : v;
  return inner
    .split(",")
    .map((s) => s.trim().replace(/^['"]|['"]$/g, ""))
    .filter((s) => s.length > 0);
}

function parseIntList(value: string): number[] | null {
  const items = parseStringList(value);
  if (!items) return null;
  const nums = items.map((s) => Number(s));
  return nums.every((n) => Number.isFinite(n)) ? nums : null;
}

function parseBool(value: string): boolean | null {
  const v = value.trim().replace(/^['"]|['"]$/g, "").toLowerCase();
  return v === "true" ? true : v === "false" ? false : null;
}

/** `  cp_comm_type: 'a2a+p2p'  (Mcore default: None)` → `'a2a+p2p'`. */
function stripDefaultNote(value: string): string {
  return value.replace(/\s+\((?:Mcore )?default: .*\)\s*$/, "").trim();
}

export interface ConfigFacts {
  config: VerdictConfig;
  configSummary: boolean;
  finalConfiguration: boolean;
  /** Line where the sorted [model] summary went past the sizes without listing them; null otherwise. */
  sizesAbsentLine: number | null;
}

export class ConfigDetector {
  private readonly config: VerdictConfig = {
    cpCommType: null,
    contextParallelSize: null,
    hierarchicalSizes: null,
    hierarchicalSizesState: "unknown",
    useDecentralizedPg: null,
    evalContextParallelSize: null,
    sources: [],
  };
  private yaml: { lines: number; section: string | null } | null = null;
  private pendingList: { key: string; items: string[]; source: Source } | null = null;
  private summary: { lines: number; section: string | null; sizesListed: boolean } | null = null;
  private configSummary = false;
  private finalConfiguration = false;
  private sizesAbsentLine: number | null = null;

  constructor(private readonly findings: Findings) {}

  /** A multi-line block is open: every line must be read. */
  get isOpen(): boolean {
    return this.yaml !== null || this.pendingList !== null || this.summary !== null;
  }

  /** A line holding a config anchor (`context`, `cp_comm_type`, `onfigurat`). */
  line(seg: string, line: number): void {
    if (seg.includes("Final configuration")) {
      this.finalConfiguration = true;
      this.yaml = { lines: 0, section: null };
      this.findings.addEvidence("marker", line, seg);
      return;
    }
    if (seg.includes("Configuration Summary")) {
      this.configSummary = true;
      this.summary ??= { lines: 0, section: null, sizesListed: false };
    }
    const m = CONFIG_KEY_RE.exec(seg);
    if (m) {
      const value = stripDefaultNote(m[2]!);
      if (value === "") this.pendingList = { key: m[1]!, items: [], source: "summary" };
      else this.set(m[1]!, value, line, seg, "summary");
      return;
    }
    const cp = MLM_CP_RE.exec(seg);
    if (cp) this.set("context_parallel_size", cp[1]!, line, seg, "mlm-args");
    const hcp = MLM_HCP_RE.exec(seg);
    if (hcp) this.set(SIZES_FIELD, hcp[1]!, line, seg, "mlm-args");
  }

  /** Line-by-line reading while a block is open; true when the segment was consumed. */
  feed(seg: string, line: number): boolean {
    if (this.pendingList && this.feedPendingList(seg, line)) return true;
    if (this.yaml && this.feedYaml(seg, line)) return true;
    if (this.summary) this.feedSummary(seg, line);
    return false;
  }

  finish(nextLine: number): void {
    if (this.pendingList) this.feedPendingList("", nextLine);
    this.summary = null;
  }

  facts(): ConfigFacts {
    const config = { ...this.config, sources: [...this.config.sources] };
    // The sorted summary skipped the sizes: they are None, what a2a+p2p needs them not to be.
    if (this.sizesAbsentLine !== null && config.hierarchicalSizesState === "unknown") config.hierarchicalSizesState = "none";
    return { config, configSummary: this.configSummary, finalConfiguration: this.finalConfiguration, sizesAbsentLine: this.sizesAbsentLine };
  }

  private set(key: string, value: string, line: number, text: string, source: Source): void {
    if (!this.config.sources.includes(source)) this.config.sources.push(source);
    this.findings.addEvidence("config", line, text);
    switch (key) {
      case "cp_comm_type":
        this.config.cpCommType = parseStringList(value);
        break;
      case "context_parallel_size":
        this.config.contextParallelSize = num(value);
        break;
      case SIZES_FIELD: {
        const sizes = parseIntList(value);
        this.config.hierarchicalSizes = sizes;
        this.config.hierarchicalSizesState = sizes ? "set" : "none";
        break;
      }
      case "use_decentralized_pg":
        this.config.useDecentralizedPg = parseBool(value);
        break;
      case "eval_context_parallel_size":
        this.config.evalContextParallelSize = num(value);
        break;
    }
  }

  /** YAML block list items (`  - 2`) after `hierarchical_context_parallel_sizes:`. */
  private feedPendingList(seg: string, line: number): boolean {
    const p = this.pendingList!;
    const m = /^\s*-\s+(.*)$/.exec(seg);
    if (m) {
      if (p.items.length < MAX_LIST_ITEMS) p.items.push(m[1]!.trim());
      return true;
    }
    this.pendingList = null;
    this.set(p.key, `[${p.items.join(",")}]`, line, `${p.key}: [${p.items.join(", ")}]`, p.source);
    if (p.items.length === 0 && p.key === SIZES_FIELD) this.config.hierarchicalSizesState = "none";
    return false;
  }

  /** `Final configuration:` then the ConfigContainer as YAML (HEAD run_recipe, rank 0). */
  private feedYaml(seg: string, line: number): boolean {
    const y = this.yaml!;
    if (++y.lines > YAML_LINE_LIMIT) {
      this.yaml = null;
      return false;
    }
    const top = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(seg);
    if (top) {
      y.section = top[2] === "" ? top[1]! : null;
      return true;
    }
    const nested = /^\s+([A-Za-z_][\w-]*):\s*(.*)$/.exec(seg);
    if (nested) {
      const key = nested[1]!;
      if (WANTED_KEY_RE.test(key) && (y.section === "model" || y.section === "dist")) {
        const value = nested[2]!.trim();
        if (value === "") this.pendingList = { key, items: [], source: "yaml" };
        else this.set(key, value, line, seg, "yaml");
      }
      return true;
    }
    if (/^\s*-(\s|$)/.test(seg) || /^\s+\S/.test(seg) || seg.trim() === "") return true;
    this.yaml = null; // first non-YAML line ends the dump; examine it normally
    return false;
  }

  /** Watches the [model] block of the summary for the sizes' place in its sorted fields. */
  private feedSummary(seg: string, line: number): void {
    const s = this.summary!;
    if (++s.lines > SUMMARY_LINE_LIMIT) {
      this.summary = null;
      return;
    }
    const section = SUMMARY_SECTION_RE.exec(seg);
    if (section) {
      if (s.section === "model") this.summary = null; // Bridge prints optimizer, ddp, model: model is last
      else s.section = section[1]!;
      return;
    }
    if (s.section !== "model") {
      if (seg.startsWith("Other Configuration Values")) this.summary = null;
      return;
    }
    const field = SUMMARY_FIELD_RE.exec(seg);
    if (!field) {
      this.summary = null; // the block ended (blank line, separator) or another rank's line broke it
      return;
    }
    const name = field[1]!;
    if (name === SIZES_FIELD) s.sizesListed = true;
    else if (name > SIZES_FIELD && !s.sizesListed && this.sizesAbsentLine === null) {
      this.sizesAbsentLine = line;
      this.findings.addEvidence("config", line, seg);
    }
  }
}
