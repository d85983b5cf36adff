// The playground's examples: every file in fixtures/playground, named by its base name
// (`/playground?example=hcp001`), titled by its first comment or docstring line. Read at
// build time (build.ts) and bundled into the page.
import type { InputKind } from "./input.ts";

export interface Example {
  name: string;
  title: string;
  kind: InputKind;
  text: string;
}

const KIND_BY_EXTENSION: Record<string, InputKind> = { py: "python", yaml: "yaml", yml: "yaml", sh: "shell" };

/** The example a fixture file makes, or undefined for files of other kinds. */
export function exampleFromFile(fileName: string, text: string): Example | undefined {
  const m = /^([\w-]+)\.(py|ya?ml|sh)$/.exec(fileName);
  if (!m) return undefined;
  const first = text.split("\n").find((l) => l.trim() !== "") ?? "";
  const title = first.replace(/^\s*(#|"""|''')\s*/, "").replace(/\s*("""|''')\s*$/, "").trim() || m[1]!;
  return { name: m[1]!, title, kind: KIND_BY_EXTENSION[m[2]!]!, text };
}
