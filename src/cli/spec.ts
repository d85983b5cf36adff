// What each command accepts, as data: the help text, the flags an unknown flag is compared
// with, and the exit codes are all read from here, so they cannot drift apart. (smoke-run's
// help is its own module's usage text, SMOKE_RUN_USAGE; its flags are read from that text.)
import type { Flag } from "./args.ts";

export interface OptionHelp {
  /** "--format" */
  flag: string;
  short?: string;
  /** Placeholder for a value: "FORMAT"; absent for a switch. */
  value?: string;
  help: string;
}

export interface CommandHelp {
  name: string;
  /** One line for `hcp-bot --help`. */
  summary: string;
  /** Usage lines, without the leading "hcp-bot ". */
  usage: string[];
  description?: string;
  options: OptionHelp[];
  exitCodes: [number, string][];
  examples?: string[];
}

/** Flags every command takes. */
export const GLOBAL_OPTIONS: OptionHelp[] = [
  { flag: "--help", short: "-h", help: "show this help and exit" },
  { flag: "--color", value: "[=WHEN]", help: "colour: auto (a terminal; the default), always or never; NO_COLOR=1 turns it off" },
  { flag: "--no-color", help: "same as --color=never" },
];


export const COMMANDS: CommandHelp[] = [
  {
    name: "lint",
    summary: "check recipes, YAML overrides and launch scripts for HCP mistakes",
    usage: [
      "lint PATH... [--format text|json|sarif|github] [--select IDS] [--ignore IDS] [--gpus-per-node N] [--all] [--config FILE | --isolated] [--baseline FILE] [--fix | --diff] [--exit-zero] [--quiet] [--statistics] [--output-file FILE] [--watch]",
      "lint - --stdin-filename NAME [options]",
    ],
    description:
      "Files are read as given; folders through the default globs (recipes, perf recipes, providers, examples, " +
      "launch scripts, model cards, uv.lock, pyproject.toml, requirements files, Dockerfiles). Each finding has a " +
      "rule id (see `hcp-bot rules`, `hcp-bot explain ID`) and, when the fix is mechanical, the edit (marked [*]; " +
      "--fix applies it). Text output is one line per finding; on a terminal the source line is shown under it.",
    options: [
      { flag: "--format", short: "-f", value: "FORMAT", help: "text (default), json, sarif (SARIF 2.1.0 for code scanning) or github (workflow annotations)" },
      { flag: "--select", value: "IDS", help: "only these rules, comma-separated (HCP001,HCP002)" },
      { flag: "--ignore", value: "IDS", help: "skip these rules, comma-separated" },
      { flag: "--gpus-per-node", value: "N", help: "GPUs in one NVLink domain, for HCP018 and the proposed sizes (default 8)" },
      { flag: "--all", help: "read every .py, .yaml, .sh and .md below a folder, not only the default globs" },
      { flag: "--config", value: "FILE", help: "the settings file (a .github/hcp-bot.yml, or a pyproject.toml with [tool.hcp-bot]); default: the nearest above each file" },
      { flag: "--isolated", help: "read no settings file" },
      { flag: "--add-noqa", help: "write a `# noqa: HCPnnn` on every reported line (to turn the linter on, then fix one by one)" },
      { flag: "--baseline", value: "FILE", help: "report only findings not in this baseline (a fixed one leaves it without error)" },
      { flag: "--baseline-write", value: "FILE", help: "write today's findings to a baseline file and exit 0" },
      { flag: "--fix", help: "apply the mechanical fixes (the findings marked [*]) to the files, until none is left; a file with a parse error is never edited" },
      { flag: "--diff", help: "print what --fix would change as a unified diff (for git apply or patch -p1) and change nothing; exit 1 when there is a diff" },
      { flag: "--exit-zero", help: "exit 0 even when findings are reported (bad usage and unanalyzed input still exit 2)" },
      { flag: "--quiet", short: "-q", help: "print the findings only: no summary line, no notes" },
      { flag: "--statistics", help: "print how many findings each rule has, instead of the findings" },
      { flag: "--output-file", short: "-o", value: "FILE", help: "write the report to FILE (without colour) instead of stdout" },
      { flag: "--stdin-filename", value: "NAME", help: "with the path -, lint stdin as if it were the file NAME (its kind, settings and paths); with --fix the fixed text goes to stdout, the report to stderr" },
      { flag: "--watch", short: "-w", help: "lint again whenever a file below the given folders changes, until Ctrl-C" },
    ],
    exitCodes: [
      [0, "no error found (warnings and notes may be printed), or --exit-zero"],
      [1, "an error-severity finding or parse error; with --diff, a diff was printed"],
      [2, "bad usage (an unknown flag, a missing argument), or input that could not be read or analyzed"],
    ],
    examples: [
      "lint src/megatron/bridge/recipes",
      "lint . --format sarif > hcp.sarif",
      "lint recipe.py --select HCP001,HCP002",
      "lint recipes/ --fix",
      "lint recipes/ --diff | git apply",
      "lint - --stdin-filename recipes/llama3.py < recipes/llama3.py",
    ],
  },
  {
    name: "advise",
    summary: "recommend cp_comm_type and hierarchical sizes, and draw the rank groups",
    usage: [
      "advise --cp N [--tp N] [--pp N] [--heads H --kv-heads K] [--gpus-per-node G | --nvlink-domain G] [--nodes N] [--svg FILE]",
      "advise RECIPE_FILE::FUNCTION [--gpus-per-node G] [--nodes N] [--svg FILE]",
    ],
    description:
      "Follows the upstream decision tree: a2a (Ulysses) inside the NVLink domain when CP divides the heads per TP " +
      "rank, a2a+p2p (a2a inside the domain, a p2p ring across it) when CP must exceed that, p2p otherwise. Prints " +
      "the recommendation with its reasons, the alternatives it rejected and why, and which global ranks form each " +
      "TP group, a2a group and p2p ring in Megatron-Core's rank order (tp-cp-dp-pp), node by node. With " +
      "RECIPE_FILE::FUNCTION the numbers come from the analyzed recipe.",
    options: [
      { flag: "--cp", value: "N", help: "context_parallel_size" },
      { flag: "--tp", value: "N", help: "tensor_model_parallel_size (default 1)" },
      { flag: "--pp", value: "N", help: "pipeline_model_parallel_size (default 1)" },
      { flag: "--heads", value: "H", help: "num_attention_heads (with --kv-heads: checks that a2a divides the heads per TP rank)" },
      { flag: "--kv-heads", value: "K", help: "num_query_groups (KV heads; equal to --heads without GQA)" },
      { flag: "--gpus-per-node", value: "G", help: "GPUs per node, one NVLink domain (default 8)" },
      { flag: "--nvlink-domain", value: "G", help: "GPUs in one NVLink domain when it spans nodes (NVL72: 72); the same as --gpus-per-node for placement" },
      { flag: "--nodes", value: "N", help: "nodes in the job (default: just enough for TP × CP × PP); the rest is data parallel" },
      { flag: "--svg", value: "FILE", help: "also write the picture as an SVG file" },
      { flag: "--format", short: "-f", value: "FORMAT", help: "text (default), json, or markdown (the Mermaid block PR comments show)" },
    ],
    exitCodes: [[0, "a recommendation was printed"], [2, "bad usage, an unreadable recipe, or a recipe whose CP or TP is not known"]],
    examples: [
      "advise --cp 16 --heads 32 --kv-heads 8",
      "advise --cp 8 --tp 2 --gpus-per-node 8 --nodes 2 --svg layout.svg",
      "advise src/megatron/bridge/recipes/llama/llama3.py::llama3_8b_pretrain_config",
    ],
  },
  {
    name: "verdict",
    summary: "did a torchrun smoke-run log really pass with HCP on?",
    usage: ["verdict LOG [--exit-code N] [--expect-hcp|--no-expect-hcp] [--probe-key HEX] [--world-size N] [--cp N] [--sizes A,B] [--cp-comm-type TYPE] [--gpu NAME] [--timed-out] [--format text|json|markdown]"],
    description:
      "Streams the log in constant memory. Pass needs exit code 0, an iteration with a finite loss, no NaN and, when " +
      "HCP is expected, positive evidence of the hierarchical groups (torch's process-group names or the HCP-PROBE line).",
    options: [
      { flag: "--exit-code", value: "N", help: "the run's exit status (without it the verdict cannot be pass)" },
      { flag: "--expect-hcp", help: "the run must prove HCP active (the default)" },
      { flag: "--no-expect-hcp", help: "a run with flat CP may pass" },
      { flag: "--probe-key", value: "HEX", help: "the run's probe key (smoke-run prints it after the run): HCP-PROBE reports count only when signed with it" },
      { flag: "--world-size", value: "N", help: "ranks the run started (torchrun's --nproc_per_node), checked against the reports" },
      { flag: "--cp", value: "N", help: "the context_parallel_size the run asked for, checked against the log" },
      { flag: "--sizes", value: "A,B", help: "the hierarchical_context_parallel_sizes the run asked for, checked against the log" },
      { flag: "--cp-comm-type", value: "TYPE", help: "the cp_comm_type the run asked for, checked against the log" },
      { flag: "--gpu", value: "NAME", help: "H100, H200, B200, GB200: flags TFLOP/s above the GPU's peak" },
      { flag: "--timed-out", help: "the run was stopped at its time limit" },
      { flag: "--format", short: "-f", value: "FORMAT", help: "text (default), json or markdown" },
    ],
    exitCodes: [[0, "pass"], [1, "any other verdict (fail, hcp-inactive, hcp-degenerate, inconclusive)"], [2, "bad usage or an unreadable log"]],
    examples: ["verdict smoke.log --exit-code 0 --gpu H100"],
  },
  {
    name: "smoke-run",
    summary: "run the HCP smoke test on this GPU machine (the workflow's step)",
    usage: ["smoke-run --recipe NAME [options] [-- OVERRIDES...]"],
    options: [],
    exitCodes: [[0, "pass"], [1, "any other verdict"], [2, "bad usage"]],
  },
  {
    name: "init-workflow",
    summary: "write the GitHub Actions smoke workflow",
    usage: ["init-workflow [--labels L1,L2] [--timeout-minutes N] [--out FILE] [--force]"],
    description:
      "Renders templates/hcp-smoke.yml with the runner labels, the job's time limit and this hcp-bot version; " +
      "defaults come from .github/hcp-bot.yml's smoke section when it exists. Commit the file to the default branch.",
    options: [
      { flag: "--labels", value: "L1,L2", help: "runner labels (default smoke.runner_labels, else self-hosted,linux,gpu-4)" },
      { flag: "--timeout-minutes", value: "N", help: "the job's limit (default smoke.timeouts.run_minutes + 5)" },
      { flag: "--out", value: "FILE", help: "where to write it (default .github/workflows/<smoke.workflow>)" },
      { flag: "--force", help: "overwrite an existing file" },
    ],
    exitCodes: [[0, "written"], [2, "bad usage, an invalid .github/hcp-bot.yml, or the file exists (without --force)"]],
  },
  {
    name: "serve",
    summary: "run the GitHub App (and Slack app) server",
    usage: ["serve"],
    description:
      "Settings come from the environment (and .env): APP_ID, PRIVATE_KEY or PRIVATE_KEY_PATH, WEBHOOK_SECRET, PORT, " +
      "HOST, LOG_LEVEL, LOG_FORMAT (pretty on a terminal, json otherwise), GHE_HOST, GHE_PROTOCOL, WEBHOOK_PROXY_URL, " +
      "SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN, SLACK_API_URL, HCP_DATA_DIR. Without App credentials it serves the " +
      "registration page built from app.yml. The server is the hcp-bot-server package's (npm install hcp-bot-server); " +
      "where only hcp-bot is installed, serve says so and exits 2.",
    options: [],
    exitCodes: [[0, "stopped by SIGINT or SIGTERM"], [2, "a missing or malformed setting (named in the message)"]],
  },
  {
    name: "server",
    summary: "the editor server: diagnostics, quick fixes and rule docs over the Language Server Protocol",
    usage: ["server --stdio [--config FILE | --isolated]"],
    description:
      "Speaks LSP on stdin and stdout for an editor (VS Code through a generic LSP client, Neovim's vim.lsp.start). " +
      "Recipes, YAML overrides and launch scripts are checked as they are typed, under the same settings file and " +
      "suppressions as lint; the fixes lint --fix applies are quick fixes; hovering a finding shows its rule's doc.",
    options: [
      { flag: "--stdio", help: "talk LSP over stdin and stdout (the only transport)" },
      { flag: "--config", value: "FILE", help: "the settings file for every document; default: the nearest above each file" },
      { flag: "--isolated", help: "read no settings file" },
      { flag: "--clientProcessId", value: "PID", help: "the editor's process: the server exits when it does (some LSP clients add it)" },
    ],
    exitCodes: [[0, "the editor sent shutdown, then exit"], [1, "exit without shutdown, or the editor's end of stdin closed first"], [2, "bad usage (an unknown flag, a missing argument)"]],
    examples: ["server --stdio"],
  },
  {
    name: "rules",
    summary: "list the rules",
    usage: ["rules [--format text|json]"],
    options: [{ flag: "--format", short: "-f", value: "FORMAT", help: "text (default) or json (id, name, severity, summary, doc and documentation url of each rule)" }],
    exitCodes: [[0, "always"]],
  },
  {
    name: "explain",
    summary: "print a rule's documentation",
    usage: ["explain RULE_ID [--format text|json]"],
    options: [{ flag: "--format", short: "-f", value: "FORMAT", help: "text (default) or json (the rule's id, name, severity, summary, doc and documentation url)" }],
    exitCodes: [[0, "printed"], [2, "unknown rule"]],
    examples: ["explain HCP001"],
  },
  {
    name: "help",
    summary: "show the help of hcp-bot or of one command",
    usage: ["help [COMMAND]"],
    options: [],
    exitCodes: [[0, "printed"], [2, "unknown command"]],
  },
];

export function commandHelp(name: string): CommandHelp | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** A command's flags (the global ones excluded), for the unknown-flag check. */
export function flagsOf(help: CommandHelp): Flag[] {
  return help.options.map((o) => ({ name: o.flag, ...(o.short ? { short: o.short } : {}), takesValue: o.value !== undefined }));
}

/** The flags an "Options:" list of a usage text names (`  --out DIR   ...`), for commands whose help is their own text. */
export function flagsFromUsage(text: string): Flag[] {
  const flags = new Map<string, Flag>();
  for (const m of text.matchAll(/^ {2}(?:(-[A-Za-z]), )?(--[a-z][a-z0-9-]*)( [A-Z][A-Z0-9_,.]*)?/gm)) {
    flags.set(m[2]!, { name: m[2]!, ...(m[1] ? { short: m[1] } : {}), takesValue: m[3] !== undefined });
  }
  return [...flags.values()];
}
