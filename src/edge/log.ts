// Logs on edge runtimes: one JSON line per entry on the console (Workers and Deno Deploy
// collect those), with the LOG_LEVEL the Node server takes, and the same secrets taken out
// as on Node (src/shared/redact.ts): headers, tokens and one-time codes never reach the console.
import type { Log } from "../shared/log.ts";
import { redactFields, scrubUrl } from "../shared/redact.ts";

const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: 100 } as const;

function errorFields(obj: object): object {
  const err = (obj as { err?: unknown }).err;
  if (!(err instanceof Error)) return obj;
  return { ...obj, err: { message: err.message, name: err.name, status: (err as { status?: number }).status, stack: err.stack?.split("\n").slice(0, 6).join("\n") } };
}

export function consoleLog(level: string | undefined, base: Record<string, unknown> = {}): Log {
  const min = LEVELS[(level ?? "info") as keyof typeof LEVELS] ?? LEVELS.info;
  const line = (name: "info" | "warn" | "error", obj: object, msg?: string) => {
    if (LEVELS[name] < min) return;
    const fields = redactFields(errorFields(obj)) as object;
    const text = JSON.stringify({ level: name, time: new Date().toISOString(), ...base, ...fields, ...(msg ? { msg: scrubUrl(msg) } : {}) });
    if (name === "error") console.error(text);
    else if (name === "warn") console.warn(text);
    else console.log(text);
  };
  return {
    info: (obj, msg) => line("info", obj, msg),
    warn: (obj, msg) => line("warn", obj, msg),
    error: (obj, msg) => line("error", obj, msg),
  };
}
