// The layout as an SVG picture (`hcp-bot advise --svg FILE`, the README, the playground):
// a box per node with a cell per GPU in global-rank order. A cell's colour is its a2a group
// (its p2p ring for pure p2p), a dashed outline joins each TP group, and a line joins the
// members of each p2p ring in ring order.
import { groupLabel, RANK_ORDER_NOTE, type GroupSet, type Picture } from "./picture.ts";

const CELL_W = 62;
const CELL_H = 50;
const GAP = 8;
const MARGIN = 20;
const NAME_W = 92;
const TITLE_H = 56;
const MAX_DOMAINS = 8;
const COLUMNS = 16;
const MAX_RING_LINES = 64;

// Colour-blind-safe fills (Okabe-Ito, lightened) and the matching strokes.
const FILLS = ["#cfe8f7", "#fde2b3", "#c9ecdf", "#f6cfe1", "#fff3b0", "#d7d3f0", "#f4d3c2", "#e0e0e0"];
const STROKES = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#b59b00", "#56449b", "#d55e00", "#555555"];

function xml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

interface Cell {
  x: number;
  y: number;
}

function layoutCells(picture: Picture): { cells: Map<number, Cell>; boxes: string[]; height: number; width: number } {
  const cells = new Map<number, Cell>();
  const boxes: string[] = [];
  const columns = Math.min(picture.domainGpus, COLUMNS);
  const width = MARGIN * 2 + NAME_W + columns * (CELL_W + GAP);
  let y = MARGIN + TITLE_H;
  const drawn = Math.min(picture.domains, MAX_DOMAINS);
  for (let d = 0; d < drawn; d++) {
    const first = d * picture.domainGpus;
    const count = Math.min(picture.domainGpus, picture.world - first);
    const rows = Math.ceil(count / columns);
    const boxH = rows * (CELL_H + GAP) + GAP;
    boxes.push(
      `<rect x="${MARGIN}" y="${y}" width="${width - 2 * MARGIN}" height="${boxH}" rx="8" fill="#fafafa" stroke="#9e9e9e"/>`,
      `<text x="${MARGIN + 10}" y="${y + 24}" class="node">${xml(`${picture.domainName} ${d}`)}</text>`,
      `<text x="${MARGIN + 10}" y="${y + 40}" class="small">ranks ${first}-${first + count - 1}</text>`,
    );
    for (let i = 0; i < picture.domainGpus && Math.floor(i / columns) < rows; i++) {
      const at = { x: MARGIN + NAME_W + (i % columns) * (CELL_W + GAP), y: y + GAP + Math.floor(i / columns) * (CELL_H + GAP) };
      if (i < count) cells.set(first + i, at);
      else boxes.push(`<rect x="${at.x}" y="${at.y}" width="${CELL_W}" height="${CELL_H}" rx="5" class="free"/>`);
    }
    y += boxH + GAP * 2;
  }
  if (picture.domains > drawn) {
    boxes.push(`<text x="${MARGIN}" y="${y + 12}" class="small">… ${picture.domains - drawn} more ${xml(picture.domainName)}(s), ranks ${drawn * picture.domainGpus}-${picture.world - 1}, not drawn</text>`);
    y += 24;
  }
  return { cells, boxes, height: y, width };
}

function cellMarkup(picture: Picture, rank: number, cell: Cell, colourSet: GroupSet | undefined): string {
  const colour = colourSet ? colourSet.ofRank[rank]! % FILLS.length : FILLS.length - 1;
  const labels = picture.sets.map((s) => groupLabel(s, s.ofRank[rank]!)).join(" · ");
  return [
    `<rect x="${cell.x}" y="${cell.y}" width="${CELL_W}" height="${CELL_H}" rx="5" fill="${FILLS[colour]}" stroke="${STROKES[colour]}"/>`,
    `<text x="${cell.x + CELL_W / 2}" y="${cell.y + 22}" class="rank">${rank}</text>`,
    `<text x="${cell.x + CELL_W / 2}" y="${cell.y + 40}" class="label">${xml(labels)}</text>`,
  ].join("");
}

/** A dashed outline around each TP group's cells (they are consecutive ranks, so on one row). */
function tpOutlines(set: GroupSet | undefined, cells: Map<number, Cell>): string[] {
  if (!set) return [];
  return set.groups.flatMap((group) => {
    const placed = group.map((r) => cells.get(r)).filter((c): c is Cell => c !== undefined);
    if (placed.length === 0 || placed.some((c) => c.y !== placed[0]!.y)) return [];
    const x0 = Math.min(...placed.map((c) => c.x)) - 3;
    const x1 = Math.max(...placed.map((c) => c.x)) + CELL_W + 3;
    return [`<rect x="${x0}" y="${placed[0]!.y - 3}" width="${x1 - x0}" height="${CELL_H + 6}" rx="7" class="tp"/>`];
  });
}

/** Where a line between two cells starts and ends: facing edges, so no rank number is covered. */
function anchors(a: Cell, b: Cell): [number, number, number, number] {
  const ax = a.x + CELL_W / 2;
  const bx = b.x + CELL_W / 2;
  if (a.y === b.y) return [ax, a.y, bx, b.y];
  return a.y < b.y ? [ax, a.y + CELL_H, bx, b.y] : [ax, a.y, bx, b.y + CELL_H];
}

/** Each ring as a path through its members in ring order (the last member wraps to the first). */
function ringPaths(set: GroupSet | undefined, cells: Map<number, Cell>): string[] {
  if (!set || set.groups.length > MAX_RING_LINES) return [];
  return set.groups.flatMap((ring, index) => {
    const points = ring.map((r) => cells.get(r)).filter((c): c is Cell => c !== undefined);
    if (points.length < 2) return [];
    const segments: string[] = [];
    for (let i = 1; i < points.length; i++) {
      const [ax, ay, bx, by] = anchors(points[i - 1]!, points[i]!);
      // Same row: an arc above the row; across rows: a gentle S through the gap.
      const lift = ay === by ? 14 + (index % 4) * 4 : 0;
      const cx = (ax + bx) / 2;
      const cy = ay === by ? ay - lift : (ay + by) / 2;
      segments.push(`M ${ax} ${ay} Q ${cx} ${cy} ${bx} ${by}`);
    }
    return [`<path d="${segments.join(" ")}" class="ring" stroke="${STROKES[index % STROKES.length]}"/>`];
  });
}

/** Splits a legend line into lines of at most `chars` characters, at spaces. */
function wrapText(text: string, chars: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > chars) {
      out.push(line);
      line = `    ${word}`;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(line);
  return out;
}

function legend(picture: Picture, y: number, width: number): { markup: string[]; height: number } {
  const chars = Math.floor((width - 2 * MARGIN) / 5.8);
  const lines: string[] = [];
  for (const set of picture.sets) {
    const shown = set.groups.slice(0, 12).map((g, i) => `${groupLabel(set, i)} [${g.join(", ")}]`);
    const more = set.groups.length > 12 ? ` (+${set.groups.length - 12} more)` : "";
    lines.push(...wrapText(`${set.title}: ${shown.join("  ")}${more}`, chars));
  }
  const has = (kind: string) => picture.sets.some((s) => s.kind === kind);
  const key = [
    has("a2a") ? "cell colour: the a2a group" : has("p2p") ? "cell colour: the p2p ring" : "",
    has("tp") ? "dashed outline: a TP group" : "",
    has("p2p") ? "line: a p2p ring in ring order (the last member wraps to the first)" : "",
    picture.world % picture.domainGpus ? "grey dashed: GPUs the job does not use" : "",
  ].filter(Boolean);
  lines.push(...wrapText(key.join("  ·  "), chars));
  const markup = lines.map((l, i) => `<text x="${MARGIN}" y="${y + 16 + i * 17}" class="legend" xml:space="preserve">${xml(l)}</text>`);
  return { markup, height: lines.length * 17 + 16 };
}

export function formatLayoutSvg(picture: Picture): string {
  const { cells, boxes, height, width } = layoutCells(picture);
  const colourSet = picture.sets.find((s) => s.kind === "a2a") ?? picture.sets.find((s) => s.kind === "p2p");
  const tp = picture.sets.find((s) => s.kind === "tp");
  const rings = picture.sets.find((s) => s.kind === "p2p");
  const cellMarkups = [...cells].map(([rank, cell]) => cellMarkup(picture, rank, cell, colourSet));
  const { markup: legendMarkup, height: legendH } = legend(picture, height, width);
  const totalH = height + legendH + MARGIN;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${totalH}" viewBox="0 0 ${width} ${totalH}" font-family="ui-sans-serif, system-ui, sans-serif" role="img">`,
    `<title>${xml(picture.title)}</title>`,
    "<style>.title{font-size:15px;font-weight:600}.small{font-size:11px;fill:#555}.node{font-size:13px;font-weight:600}" +
      ".rank{font-size:16px;font-weight:700;text-anchor:middle}.label{font-size:10px;text-anchor:middle;fill:#333}" +
      ".legend{font-size:11px;fill:#333}.tp{fill:none;stroke:#222;stroke-dasharray:4 3}.ring{fill:none;stroke-width:2;opacity:.7}.free{fill:none;stroke:#c8c8c8;stroke-dasharray:3 3}</style>",
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${MARGIN}" y="${MARGIN + 16}" class="title">${xml(picture.title)}</text>`,
    `<text x="${MARGIN}" y="${MARGIN + 36}" class="small">${xml(RANK_ORDER_NOTE)}</text>`,
    ...boxes,
    ...cellMarkups,
    ...tpOutlines(tp, cells),
    ...ringPaths(rings, cells),
    ...legendMarkup,
    "</svg>",
    "",
  ].join("\n");
}
