// `hcp-bot --help`, `hcp-bot help COMMAND` and `hcp-bot COMMAND --help`, from the specs.
import { VERSION } from "../version.ts";
import { COMMANDS, GLOBAL_OPTIONS, type CommandHelp, type OptionHelp } from "./spec.ts";
import { PLAIN, type Style } from "./style.ts";

const WIDTH = 88;

function wrap(text: string, indent: number, width = WIDTH): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.map((l) => " ".repeat(indent) + l);
}

function optionLabel(o: OptionHelp): string {
  const value = o.value ? (o.value.startsWith("[") ? o.value : ` ${o.value}`) : "";
  return `${o.short ? `${o.short}, ` : "    "}${o.flag}${value}`;
}

function optionLines(options: readonly OptionHelp[], style: Style): string[] {
  const width = Math.max(...options.map((o) => optionLabel(o).length)) + 2;
  return options.flatMap((o) => {
    const label = optionLabel(o);
    const [first = "", ...rest] = wrap(o.help, 2 + width);
    return [`  ${style.paint("cyan", label)}${" ".repeat(width - label.length)}${first.trimStart()}`, ...rest];
  });
}

function heading(text: string, style: Style): string {
  return style.paint("bold", text);
}

export function formatCommandHelp(c: CommandHelp, style: Style = PLAIN): string {
  const out = [`${style.paint("bold", `hcp-bot ${c.name}`)}: ${c.summary}`, "", heading("Usage:", style), ...c.usage.map((u) => `  hcp-bot ${u}`)];
  if (c.description) out.push("", ...wrap(c.description, 0));
  out.push("", heading("Options:", style), ...optionLines([...c.options, ...GLOBAL_OPTIONS], style));
  out.push("", heading("Exit status:", style), ...c.exitCodes.map(([code, meaning]) => `  ${code}  ${meaning}`));
  if (c.examples?.length) out.push("", heading("Examples:", style), ...c.examples.map((e) => `  hcp-bot ${e}`));
  return out.join("\n") + "\n";
}

export function formatMainHelp(style: Style = PLAIN): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    `${style.paint("bold", `hcp-bot ${VERSION}`)}: checks Hierarchical Context Parallel (HCP) settings in Megatron-Bridge recipes`,
    "",
    heading("Usage:", style),
    "  hcp-bot COMMAND [ARGUMENTS] [--help]",
    "",
    heading("Commands:", style),
    ...COMMANDS.map((c) => `  ${style.paint("cyan", c.name)}${" ".repeat(width - c.name.length)}${c.summary}`),
    "",
    heading("Options:", style),
    ...optionLines([{ flag: "--version", short: "-V", help: "print the version and exit" }, ...GLOBAL_OPTIONS], style),
    "",
    heading("Exit status:", style),
    "  0  success      1  findings (lint) or a run that did not pass (verdict, smoke-run)      2  bad usage",
    "",
    "`hcp-bot help COMMAND` or `hcp-bot COMMAND --help` shows a command's options and exit codes.",
    "",
  ].join("\n");
}
