// Quote handling the lexer needs outside its main loop: bash's quote removal on a
// `${X:-word}` default, and finding the bracket that closes `$(` or `${`.

/**
 * Bash's quote removal on the word of `${X:-word}` (bash manual, "Shell Parameter Expansion"
 * and "Quote Removal"): unquoted, '...' and "..." lose their quotes and a backslash escapes
 * the next character; inside double quotes ("${X:-'a'}"), single quotes are kept as
 * characters (bash prints 'a'), nested "..." lose their quotes, and a backslash is removed
 * only before $ ` " \. `from` maps each kept character to its index in `body`.
 */
export function removeDefaultQuotes(body: string, quoted: boolean): { text: string; from: number[] } | undefined {
  let text = "";
  const from: number[] = [];
  const keep = (k: number) => {
    text += body[k] ?? "";
    from.push(k);
  };
  let inDouble = false;
  for (let k = 0; k < body.length; k++) {
    const ch = body[k];
    if (ch === "\\") {
      const next = body[k + 1];
      if (next === undefined) keep(k);
      else if ((quoted || inDouble) && !"$`\"\\\n".includes(next)) keep(k);
      else if (next !== "\n") keep(++k);
      else k++;
    } else if (ch === '"') inDouble = !inDouble;
    else if (ch === "'" && !quoted && !inDouble) {
      const close = body.indexOf("'", k + 1);
      if (close < 0) return undefined;
      for (let j = k + 1; j < close; j++) keep(j);
      k = close;
    } else keep(k);
  }
  return inDouble ? undefined : { text, from };
}

/** Index of the bracket closing the one at `open`, skipping quoted text; -1 if none. */
export function matchClosing(t: string, open: number, opener: string, closer: string): number {
  let depth = 0;
  for (let k = open; k < t.length; k++) {
    const ch = t[k];
    if (ch === "\\") k++;
    else if (ch === "'") {
      const close = t.indexOf("'", k + 1);
      if (close < 0) return -1;
      k = close;
    } else if (ch === opener) depth++;
    else if (ch === closer && --depth === 0) return k;
  }
  return -1;
}
