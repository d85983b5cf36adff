// Anchors, aliases and `<<` merge keys in override files, resolved as Bridge's loader does.
//
// Bridge reads an override file with OmegaConf.load (training/utils/omegaconf_utils.py:147,
// HEAD 067f987), which loads it with a yaml.SafeLoader subclass: `*name` is the node its
// `&name` anchored, and `<<: *base` / `<<: [*a, *b]` copy the keys of those mappings into
// the mapping unless it sets them itself, earlier mappings of a list winning over later ones
// (PyYAML SafeConstructor.flatten_mapping; https://yaml.org/type/merge.html). An alias whose
// anchor is not defined before it fails the load ("found undefined alias").
//
// Following aliases can multiply work (a "billion laughs" file); every alias followed counts
// against one budget per document, and past it the document's settings are not read.
import { isAlias, isMap, isScalar, isSeq, visit, type Alias, type Document, type Node, type Pair, type YAMLMap } from "yaml";

/** Aliases one document may make us follow while its sections are read. */
export const MAX_ALIASES_FOLLOWED = 1000;
/** Passed to the yaml library's toJS for one value (its own count: uses × nested aliases). */
export const MAX_ALIAS_COUNT_PER_VALUE = 1000;

export class AliasLimitError extends Error {}

export class UndefinedAliasError extends Error {
  constructor(readonly alias: Alias) {
    super(`found undefined alias '${alias.source}' (an alias must follow its anchor)`);
  }
}

export interface AliasContext {
  doc: Document.Parsed;
  /** Aliases and anchored nodes in document order, and each one's place in that order. */
  order: Node[];
  place: Map<Node, number>;
  followed: number;
}

export function aliasContext(doc: Document.Parsed): AliasContext {
  const order: Node[] = [];
  visit(doc, {
    Node(_key, node) {
      if (isAlias(node) || (node as { anchor?: string }).anchor) order.push(node);
    },
  });
  return { doc, order, place: new Map(order.map((n, i) => [n, i])), followed: 0 };
}

/** The last node anchored with the alias's name before it, as the loader finds it. */
function anchored(alias: Alias, ctx: AliasContext): Node | undefined {
  for (let i = (ctx.place.get(alias) ?? 0) - 1; i >= 0; i--) {
    const node = ctx.order[i] as Node & { anchor?: string };
    if (!isAlias(node) && node.anchor === alias.source) return node;
  }
  return undefined;
}

/** Every alias of the document whose anchor is not defined before it (the load fails). */
export function undefinedAliases(ctx: AliasContext): Alias[] {
  return ctx.order.filter((n): n is Alias => isAlias(n) && anchored(n, ctx) === undefined);
}

/** The node itself, or what an alias (chain) points at. */
export function deref(node: unknown, ctx: AliasContext): unknown {
  let current = node;
  while (isAlias(current)) {
    ctx.followed++;
    if (ctx.followed > MAX_ALIASES_FOLLOWED) {
      throw new AliasLimitError(`more than ${MAX_ALIASES_FOLLOWED} YAML aliases to follow (an alias bomb?)`);
    }
    const target = anchored(current, ctx);
    if (!target) throw new UndefinedAliasError(current);
    current = target;
  }
  return current;
}

/** Like deref, but an undefined alias (reported once per document) reads as nothing. */
export function tryDeref(node: unknown, ctx: AliasContext): unknown {
  try {
    return deref(node, ctx);
  } catch (error) {
    if (error instanceof UndefinedAliasError) return undefined;
    throw error;
  }
}

/** A key of a mapping once merges are applied; `viaAlias` when it came from another node. */
export interface EffectivePair {
  key: string;
  keyNode: Node;
  value: Node | null;
  viaAlias: boolean;
}

export function isMergeKey(pair: Pair): boolean {
  return isScalar(pair.key) && typeof pair.key.value === "symbol" && pair.key.value.description === "<<";
}

/**
 * The mapping's string keys as the loader sees them: its own keys first (they win), then
 * the keys each `<<` source adds that are not set yet, in the order the sources are listed.
 */
export function effectivePairs(map: YAMLMap, ctx: AliasContext, viaAlias = false): EffectivePair[] {
  const out: EffectivePair[] = [];
  const seen = new Set<string>();
  for (const item of map.items) {
    if (isMergeKey(item) || !isScalar(item.key) || typeof item.key.value !== "string") continue;
    if (seen.has(item.key.value)) continue;
    seen.add(item.key.value);
    out.push({ key: item.key.value, keyNode: item.key, value: (item.value as Node | null) ?? null, viaAlias });
  }
  for (const item of map.items) {
    if (!isMergeKey(item)) continue;
    for (const source of mergeSources(item.value, ctx)) {
      for (const pair of effectivePairs(source, ctx, true)) {
        if (seen.has(pair.key)) continue;
        seen.add(pair.key);
        out.push(pair);
      }
    }
  }
  return out;
}

/** `<<: *a` or `<<: [*a, *b]` (or inline mappings): the mappings to merge, in order. */
function mergeSources(value: unknown, ctx: AliasContext): YAMLMap[] {
  const source = tryDeref(value, ctx);
  const items = isSeq(source) ? source.items : [source];
  return items.flatMap((item) => {
    const map = tryDeref(item, ctx);
    return isMap(map) ? [map] : [];
  });
}

/** A section's value as a mapping (through an alias), or what it is otherwise. */
export function mappingOf(node: unknown, ctx: AliasContext): { map?: YAMLMap; viaAlias: boolean } {
  const target = tryDeref(node, ctx);
  return isMap(target) ? { map: target, viaAlias: isAlias(node) } : { viaAlias: isAlias(node) };
}
