// The Node server's logger: pino's JSON lines, or one readable line per event
// (LOG_FORMAT=pretty). Either way the credentials of src/shared/redact.ts are taken out before
// anything is written: the headers of the requests Probot's HTTP logger records, the
// query's one-time codes in URLs and in the messages that quote them.
import { pino, type Logger, type LoggerOptions } from "pino";
import type { ServerSettings } from "./env.ts";
import { pinoCensor, pinoRedactPaths, scrubUrl } from "../shared/redact.ts";

/** Fields a pretty line leaves out: pino's own, and the request/response dumps its message already sums up. */
const NOT_SHOWN = new Set(["level", "time", "pid", "hostname", "name", "msg", "req", "res", "err", "responseTime", "reqId"]);

const oneLine = (text: string) => text.replace(/\s*\r?\n\s*/g, " ⏎ ");

interface LoggedError {
  type?: string;
  message?: string;
  stack?: string;
}

/** The error of an entry as "(Type: message, at where)", so a pretty entry stays on its line. */
function errorPart(err: unknown): string {
  if (!err || typeof err !== "object") return "";
  const e = err as LoggedError;
  const where = /\n\s*(at [^\n]+)/.exec(e.stack ?? "")?.[1];
  return ` (${e.type ?? "Error"}: ${oneLine(e.message ?? "")}${where ? `, ${where.trim()}` : ""})`;
}

/** pino-pretty's message for an entry: the message, its error and its other fields, on one line. */
export function prettyLine(entry: Record<string, unknown>, messageKey: string): string {
  const rest = Object.fromEntries(Object.entries(entry).filter(([k]) => !NOT_SHOWN.has(k)));
  const fields = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : "";
  return oneLine(`${String(entry[messageKey] ?? "")}${errorPart(entry.err)}${fields}`);
}

export function loggerOptions(settings: Pick<ServerSettings, "logLevel">): LoggerOptions {
  return {
    level: settings.logLevel,
    name: "hcp-bot",
    redact: { paths: pinoRedactPaths(), censor: pinoCensor },
    hooks: {
      // Probot's HTTP log line is "METHOD URL STATUS - TIME": its URL is scrubbed like the field.
      logMethod(args, method) {
        method.apply(this, args.map((a) => (typeof a === "string" ? scrubUrl(a) : a)) as Parameters<typeof method>);
      },
    },
  };
}

/**
 * JSON lines (pino's own format) unless LOG_FORMAT=pretty: then one readable line per
 * event, written synchronously so nothing is lost when the process stops.
 */
export async function createLogger(settings: Pick<ServerSettings, "logLevel" | "logFormat">): Promise<Logger> {
  const options = loggerOptions(settings);
  if (settings.logFormat !== "pretty") return pino(options);
  const { default: pretty } = await import("pino-pretty");
  const colorize = process.stdout.isTTY === true && !process.env.NO_COLOR;
  return pino(options, pretty({ sync: true, colorize, translateTime: "SYS:HH:MM:ss", ignore: "pid,hostname", hideObject: true, messageFormat: (entry, key) => prettyLine(entry, key) }));
}
