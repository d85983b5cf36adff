// Text handed to the shell lexer together with where each character sits in the real
// file. A shell script maps one-to-one (base + index); a Markdown code block or a YAML
// block scalar is a view assembled from pieces of its file, so it carries an explicit map.

export interface MappedText {
  text: string;
  /** Source offset of every character of `text`; -1 for characters that exist only in the view. */
  map?: ArrayLike<number>;
  /** When there is no map: source offset of text[0]. */
  base: number;
}

export function identityText(text: string, base = 0): MappedText {
  return { text, base };
}

/** Source offset of view index i, or -1 when the character has no single source position. */
export function sourceOffset(m: MappedText, i: number): number {
  if (!m.map) return m.base + i;
  return m.map[i] ?? -1;
}

/** Accumulates a view and its map piece by piece without quadratic string building. */
export class MappedTextBuilder {
  private readonly parts: string[] = [];
  private readonly offsets: number[] = [];

  /** Append source[start, end) with its real offsets. */
  appendSource(source: string, start: number, end: number): void {
    if (end <= start) return;
    this.parts.push(source.slice(start, end));
    for (let i = start; i < end; i++) this.offsets.push(i);
  }

  /** Append text that has no exact source position (a folded line break, a decoded escape). */
  appendSynthetic(text: string, offset = -1): void {
    this.parts.push(text);
    for (let i = 0; i < text.length; i++) this.offsets.push(offset);
  }

  get length(): number {
    return this.offsets.length;
  }

  build(): MappedText {
    return { text: this.parts.join(""), map: Int32Array.from(this.offsets), base: 0 };
  }
}
