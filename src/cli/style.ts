// Terminal styling for the CLI's human output. Colour is on for a terminal, off when the
// output is piped, and the user decides over both: `--color[=always|never|auto]`,
// `--no-color`, then NO_COLOR (https://no-color.org) and FORCE_COLOR. Machine formats (JSON,
// SARIF, GitHub annotations, Markdown) never pass through here.

export type ColorChoice = "always" | "never" | "auto";

export interface ColorContext {
  /** From --color / --no-color; undefined when neither was given. */
  flag?: ColorChoice;
  env: Readonly<Record<string, string | undefined>>;
  isTTY: boolean;
}

export function colorEnabled({ flag, env, isTTY }: ColorContext): boolean {
  if (flag === "always") return true;
  if (flag === "never") return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "" && env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false") return true;
  return isTTY && env.TERM !== "dumb";
}

const SGR = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
} as const;

export type StyleName = keyof typeof SGR;

export interface Style {
  readonly color: boolean;
  paint(name: StyleName, text: string): string;
}

export function makeStyle(color: boolean): Style {
  return {
    color,
    paint: (name, text) => (color && text ? `\u001b[${SGR[name][0]}m${text}\u001b[${SGR[name][1]}m` : text),
  };
}

export const PLAIN: Style = makeStyle(false);

// C0 controls other than tab and newline, DEL, and the C1 range (0x9b alone is a CSI).
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Control characters from recipes and logs are shown as `\xNN` on a terminal, so a hostile
 * file cannot move the cursor, retitle the window or hide a finding behind escape codes.
 */
export function defuseControls(text: string): string {
  return text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

const SEVERITY_STYLE: Record<string, StyleName> = { error: "red", warning: "yellow", info: "cyan" };

/**
 * Colours the text report (`path:line:col: severity RULE [*] message`, a code frame's lines, the
 * summary line) by its shape; a line of any other shape is left as it is.
 */
export function styleReport(text: string, style: Style): string {
  if (!style.color) return text;
  return text
    .split("\n")
    .map((line) => {
      const head = /^(\S.*?:\d+(?::\d+)?): (error|warning|info) ([A-Za-z0-9_-]+)( \[\*\])?( \[[^\]]+\])?(.*)$/.exec(line);
      if (head) {
        const [, where, severity, code, mark = "", name = "", rest] = head;
        const tone = SEVERITY_STYLE[severity!]!;
        return `${style.paint("bold", where!)}: ${style.paint(tone, severity!)} ${style.paint("bold", code!)}${style.paint("cyan", mark)}${style.paint("dim", name)}${rest}`;
      }
      // A code frame (src/cli/code-frame.ts): its lines start with a space, so no recipe text
      // shown in one can take the shape of a finding's line.
      const source = /^( +\d+ \|)(.*)$/.exec(line);
      if (source) return `${style.paint("blue", source[1]!)}${source[2]}`;
      const caret = /^( +\|)( *)(\^+)$/.exec(line);
      if (caret) return `${style.paint("blue", caret[1]!)}${caret[2]}${style.paint("red", caret[3]!)}`;
      if (/^ +\|$/.test(line)) return style.paint("blue", line);
      const note = /^( +)= (fix:|see) (.*)$/.exec(line);
      if (note) return `${note[1]}${style.paint("blue", "=")} ${style.paint(note[2] === "fix:" ? "green" : "dim", note[2]!)} ${note[3]}`;
      if (/^(Found |No findings in )/.test(line)) {
        return line
          .replace(/^No findings/, (t) => style.paint("green", t))
          .replace(/^(Found )(\d+ errors?)/, (_, lead: string, t: string) => `${lead}${style.paint("red", t)}`)
          .replace(/\b(\d+ warnings?)\b/, (t) => style.paint("yellow", t));
      }
      return line;
    })
    .join("\n");
}

const VERDICT_TONE: Record<string, StyleName> = { PASS: "green" };

/** The verdict's first line in colour: green only for a pass. */
export function styleVerdict(text: string, style: Style): string {
  if (!style.color) return text;
  return text.replace(/^(HCP smoke verdict: )(\S+)/, (_, lead: string, status: string) => `${lead}${style.paint("bold", style.paint(VERDICT_TONE[status] ?? "red", status))}`);
}
