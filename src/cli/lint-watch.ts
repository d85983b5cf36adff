// `hcp-bot lint --watch`: lint, then lint again whenever a file below the inputs changes, until
// SIGINT or SIGTERM (exit 0). Loaded only with --watch. Changes that come together (an editor's
// save is several events; `git checkout` many) are one re-lint, and a change during a lint
// queues one more after it, so the last report is always of the files as they are.
import { watch, type FSWatcher } from "node:fs";
import type { Io } from "../cli.ts";
import { InputError } from "../node/files.ts";
import { statPath } from "../node/fs-callbacks.ts";
import { UsageError } from "./args.ts";
import type { LintFlags } from "./lint-flags.ts";

/** Events closer together than this are one change. */
const SETTLE_MS = 150;

/** Editor and VCS bookkeeping, which never changes what is linted. */
const IGNORED = /(^|[\\/])(\.git|node_modules|__pycache__)([\\/]|$)|(~|\.swp|\.swx|\.tmp)$/;

export async function watchLint(opts: LintFlags, io: Io, lintOnce: (io: Io) => Promise<number>): Promise<number> {
  for (const input of opts.inputs) {
    const info = await statPath(input).catch(() => undefined);
    if (!info || !(info.isDirectory() || info.isFile())) throw new InputError(`cannot watch ${input}: no such file or folder`);
  }
  const where = opts.inputs.join(", ");
  const once = async () => {
    try {
      await lintOnce(io);
    } catch (error) {
      // A bad state of the files (none left to lint, a broken baseline) is reported; the watch goes on.
      if (!(error instanceof InputError || error instanceof UsageError)) throw error;
      io.err(`hcp-bot: ${error.message}\n`);
    }
    io.err(`hcp-bot: watching ${where} for changes (Ctrl-C to stop)\n`);
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let pending = false;
  const relint = async (first = false): Promise<void> => {
    if (running) {
      pending = true;
      return;
    }
    if (!first) io.err("hcp-bot: files changed; linting again\n");
    running = once();
    await running;
    running = undefined;
    if (pending) {
      pending = false;
      await relint();
    }
  };
  const changed = (_event: string, name: string | Buffer | null) => {
    if (name && IGNORED.test(String(name))) return;
    clearTimeout(timer);
    timer = setTimeout(() => void relint(), SETTLE_MS);
  };
  // Watching starts before the first lint, so a change made once "watching" is printed (or
  // during that lint) is never missed: it queues one more lint.
  const watchers: FSWatcher[] = opts.inputs.map((input) => watch(input, { recursive: true }, changed));
  await relint(true);
  return await new Promise<number>((resolve) => {
    const stop = () => {
      for (const w of watchers) w.close();
      clearTimeout(timer);
      resolve(0);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}
