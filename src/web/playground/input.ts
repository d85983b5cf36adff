// What the playground accepts, decided before any analysis: the kinds of input, the size
// limit, binary data. Kept apart from review.ts so the page's own script stays small (the
// analyzer is loaded by the worker only).

export const INPUT_KINDS = ["python", "yaml", "shell"] as const;
export type InputKind = (typeof INPUT_KINDS)[number];

export const KIND_LABEL: Record<InputKind, string> = {
  python: "Recipe function (Python)",
  yaml: "YAML override file",
  shell: "Launch line (run_recipe.py, torchrun, Megatron-LM flags)",
};

/** Larger pastes are refused before any work (a recipe module is a few hundred KB at most). */
export const MAX_INPUT_CHARS = 1_000_000;
/** A review that takes longer than this is stopped (the worker is replaced). */
export const ANALYSIS_TIMEOUT_MS = 15_000;

export type InputCheck = { ok: true } | { ok: false; message: string };

function megabytes(chars: number): string {
  return `${(chars / 1_000_000).toFixed(1)} MB`;
}

export function tooLargeMessage(what: string, size: number): string {
  return `${what} is ${megabytes(size)}; the playground analyzes up to ${megabytes(MAX_INPUT_CHARS)}. Run \`npx hcp-bot lint FILE\` on larger files.`;
}

/** Refuses what the playground will not analyze, with the reason in words. */
export function checkInput(text: string): InputCheck {
  if (text.trim() === "") return { ok: false, message: "Paste a recipe function, a YAML override file or a launch line, or pick an example." };
  if (text.length > MAX_INPUT_CHARS) return { ok: false, message: tooLargeMessage("The text", text.length) };
  const head = text.slice(0, 65_536);
  let control = 0;
  for (let i = 0; i < head.length; i++) {
    const c = head.charCodeAt(i);
    if (c === 0) return { ok: false, message: "This is binary data (it contains NUL bytes), not a recipe, an override file or a launch line." };
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13) || c === 0xfffd) control++;
  }
  if (control > head.length / 100 + 8) {
    return { ok: false, message: `This looks like binary data (${control} control or undecodable characters), not a recipe, an override file or a launch line.` };
  }
  return { ok: true };
}

/** A best guess at what was pasted; the page lets the user say otherwise. */
export function detectKind(text: string): InputKind {
  if (/^\s*(def|from|import|class)\s/m.test(text) || /^\s*cfg\.[\w.]+\s*=/m.test(text)) return "python";
  if (/(run_recipe\.py|torchrun|torch\.distributed\.run|pretrain_gpt\.py|--recipe\b|^\s*(uv run|python)\b)/m.test(text)) return "shell";
  if (/^[A-Za-z_][\w-]*:\s*(#.*)?$/m.test(text) || /^[A-Za-z_][\w-]*:\s+\S/m.test(text)) return "yaml";
  return /^\s*[+~]{0,2}[\w.]+=\S/m.test(text) ? "shell" : "python";
}

export interface PlaygroundRequest {
  text: string;
  kind: InputKind;
  gpusPerNode: number;
}
