// Command transcripts for the docs: `hcp-bot ARGS` run through the built CLI (bin/hcp-bot.js,
// which runs dist/), so a page shows what the released package prints. Commands are split on
// spaces (no quoting, no shell): a docs command is a plain word list.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { COMMANDS } from "../../src/cli/spec.ts";

export const ROOT = join(import.meta.dirname, "..", "..");

/** What `command` prints (stdout, then stderr) and its exit status, run from the repository root. */
export function runCommand(command: string): { output: string; status: number } {
  const words = command.trim().split(/\s+/);
  if (words[0] !== "hcp-bot") throw new Error(`docs can only run hcp-bot commands, not: ${command}`);
  const child = spawnSync(process.execPath, [join(ROOT, "bin", "hcp-bot.js"), ...words.slice(1)], {
    cwd: ROOT,
    encoding: "utf8",
    // No colour, no code cache written, none of this shell's settings: the same text on every machine.
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NO_COLOR: "1", HCP_BOT_CACHE_DIR: "off" },
  });
  if (child.error) throw child.error;
  return { output: `${child.stdout}${child.stderr}`, status: child.status ?? -1 };
}

/** A ```text block: the prompt line, the output, and the exit status when it is not 0. */
export function transcript(command: string): string {
  const { output, status } = runCommand(command);
  const body = output.replace(/\s+$/, "");
  const tail = status === 0 ? "" : `\n[exit status ${status}]`;
  return `\`\`\`text\n$ ${command}\n${body}${tail}\n\`\`\`\n`;
}

/** `hcp-bot --help` and every command's `--help`, each under its own heading. */
export function helpTranscripts(): string {
  const parts = ["### `hcp-bot --help`\n\n" + transcript("hcp-bot --help")];
  for (const c of COMMANDS) parts.push(`### \`hcp-bot ${c.name}\`\n\n${transcript(`hcp-bot ${c.name} --help`)}`);
  return parts.join("\n");
}
