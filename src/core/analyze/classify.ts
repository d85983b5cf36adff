// Which extractor reads a file, and which files of a folder are worth reading.
// Globs follow docs/domain.md 1.1 (the union of the seed-era and current layouts).

export type FileKind = "python" | "yaml" | "shell" | "markdown" | "pins";

export const DEFAULT_GLOBS: readonly string[] = [
  "src/megatron/bridge/recipes/**/*.py",
  "src/megatron/bridge/perf_recipes/**/*.py",
  "src/megatron/bridge/diffusion/recipes/**/*.py",
  "scripts/performance/configs/**/*.py",
  "scripts/performance/utils/overrides.py",
  "src/megatron/bridge/models/**/*provider*.py",
  "src/megatron/bridge/models/**/*_bridge.py",
  "examples/**/*.{py,yaml,yml,sh,md}",
  "tutorials/**/*.{py,yaml,yml,sh,md}",
  "scripts/training/**",
  "tests/functional_tests/launch_scripts/**/*.sh",
  "**/card.yaml",
  "docs/**/*context-parallel*.md",
  "uv.lock",
  "pyproject.toml",
  "requirements*.txt",
  "docker/Dockerfile*",
  "Dockerfile*",
];

/** What to read a file as, from its name alone; undefined = not a file the analyzer reads. */
export function classifyFile(path: string): FileKind | undefined {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
  if (name === "uv.lock" || name === "pyproject.toml" || /^requirements.*\.txt$/.test(name)) return "pins";
  if (name.startsWith("dockerfile") || name.endsWith(".dockerfile")) return "pins";
  if (name.endsWith(".py")) return "python";
  if (name.endsWith(".yaml") || name.endsWith(".yml")) return "yaml";
  if (name.endsWith(".sh") || name.endsWith(".bash") || name.endsWith(".sbatch") || name.endsWith(".slurm")) return "shell";
  if (name.endsWith(".md") || name.endsWith(".markdown")) return "markdown";
  return undefined;
}

/** Expands `{a,b}` alternatives, then turns a glob into an anchored regular expression. */
export function globToRegExp(glob: string): RegExp {
  const alternatives = expandBraces(glob);
  const bodies = alternatives.map((g) => {
    let re = "";
    for (let i = 0; i < g.length; i++) {
      const c = g[i]!;
      if (c === "*") {
        if (g[i + 1] === "*") {
          // `**/` matches zero or more folders; a trailing `**` matches everything below.
          if (g[i + 2] === "/") {
            re += "(?:.*/)?";
            i += 2;
          } else {
            re += ".*";
            i += 1;
          }
        } else re += "[^/]*";
      } else if (c === "?") re += "[^/]";
      else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
    }
    return re;
  });
  return new RegExp(`^(?:${bodies.join("|")})$`);
}

function expandBraces(glob: string): string[] {
  const open = glob.indexOf("{");
  const close = open < 0 ? -1 : glob.indexOf("}", open);
  if (open < 0 || close < 0) return [glob];
  const head = glob.slice(0, open);
  const tail = glob.slice(close + 1);
  return glob
    .slice(open + 1, close)
    .split(",")
    .flatMap((alt) => expandBraces(head + alt + tail));
}

export function compileGlobs(globs: readonly string[]): (path: string) => boolean {
  const regexes = globs.map(globToRegExp);
  return (path) => regexes.some((r) => r.test(path));
}
