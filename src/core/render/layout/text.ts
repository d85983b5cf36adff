// The layout as a text grid (the terminal, Slack code blocks): one block per node with a
// column per GPU: its global rank and the TP group, a2a group and p2p ring it is in.
import { domainOf, groupLabel, RANK_ORDER_NOTE, staysInDomain, type GroupKind, type GroupSet, type Picture } from "./picture.ts";

/** Colours a group's label; the terminal passes ANSI colours, everything else leaves text as is. */
export type Tint = (kind: GroupKind, index: number, text: string) => string;

const noTint: Tint = (_kind, _index, text) => text;

export interface GridOptions {
  tint?: Tint;
  /** Domains drawn before the rest is summarized (default 8). */
  maxDomains?: number;
  /** GPUs per grid row; wider domains wrap (default 16). */
  columns?: number;
  /** Groups listed per kind (default 24). */
  maxGroups?: number;
}

function pad(text: string, width: number, visible = text.length): string {
  return text + " ".repeat(Math.max(0, width - visible));
}

function domainRows(picture: Picture, domain: number, options: Required<GridOptions>, cell: number): string[] {
  const first = domain * picture.domainGpus;
  const ranks = Array.from({ length: Math.min(picture.domainGpus, picture.world - first) }, (_, i) => first + i);
  const head = `${picture.domainName} ${domain}`;
  const nameWidth = `${picture.domainName} ${picture.domains - 1}`.length + 2;
  const line = (name: string, field: string, cells: readonly string[], visible?: readonly number[]) =>
    (pad(name, nameWidth) + pad(field, 6) + cells.map((c, i) => pad(c, cell, visible?.[i])).join("")).trimEnd();
  const rows: string[] = [];
  for (let start = 0; start < ranks.length; start += options.columns) {
    const part = ranks.slice(start, start + options.columns);
    rows.push(line(start === 0 ? head : "", "GPU", part.map((r) => `${r - first}`)));
    rows.push(line("", "rank", part.map((r) => `${r}`)));
    for (const set of picture.sets) {
      const labels = part.map((r) => groupLabel(set, set.ofRank[r]!));
      rows.push(line("", set.kind, part.map((r, i) => options.tint(set.kind, set.ofRank[r]!, labels[i]!)), labels.map((l) => l.length)));
    }
  }
  return rows;
}

function where(picture: Picture, set: GroupSet): string {
  if (picture.domains <= 1) return "";
  return staysInDomain(picture, set) ? `, each inside one ${picture.domainName}` : `, across ${picture.domainName}s`;
}

function groupList(picture: Picture, set: GroupSet, options: Required<GridOptions>): string[] {
  const shown = set.groups.slice(0, options.maxGroups).map((g, i) => `${options.tint(set.kind, i, groupLabel(set, i))} [${g.join(", ")}]`);
  const more = set.groups.length > options.maxGroups ? [`(+${set.groups.length - options.maxGroups} more)`] : [];
  const lines: string[] = [];
  let line = "  ";
  for (const item of [...shown, ...more]) {
    const visible = item.replace(/\u001b\[[0-9;]*m/g, "");
    if (line.trim() && line.replace(/\u001b\[[0-9;]*m/g, "").length + visible.length + 2 > 88) {
      lines.push(line.trimEnd());
      line = "  ";
    }
    line += `${item}  `;
  }
  lines.push(line.trimEnd());
  return [`${set.title}${where(picture, set)}:`, ...lines];
}

export function formatLayoutGrid(picture: Picture, opts: GridOptions = {}): string {
  const options: Required<GridOptions> = { tint: opts.tint ?? noTint, maxDomains: opts.maxDomains ?? 8, columns: opts.columns ?? 16, maxGroups: opts.maxGroups ?? 24 };
  const widest = Math.max(`${picture.world - 1}`.length, ...picture.sets.map((s) => groupLabel(s, s.groups.length - 1).length));
  const cell = widest + 2;
  const out = [picture.title, `(${RANK_ORDER_NOTE})`, ""];
  const drawn = Math.min(picture.domains, options.maxDomains);
  for (let d = 0; d < drawn; d++) out.push(...domainRows(picture, d, options, cell), "");
  if (picture.domains > drawn) {
    const from = drawn * picture.domainGpus;
    out.push(`… ${picture.domains - drawn} more ${picture.domainName}(s), ranks ${from}-${picture.world - 1}, not drawn; the lists below hold their groups`, "");
  }
  for (const set of picture.sets) out.push(...groupList(picture, set, options), "");
  return out.join("\n").trimEnd() + "\n";
}

/** Rank `rank`'s groups in words: "rank 5: node 0, t2, a3, p1". */
export function describeRank(picture: Picture, rank: number): string {
  const groups = picture.sets.map((s) => groupLabel(s, s.ofRank[rank]!));
  return `rank ${rank}: ${picture.domainName} ${domainOf(picture, rank)}${groups.length ? `, ${groups.join(", ")}` : ""}`;
}
