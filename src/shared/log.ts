// The one Log port: what every layer above shared logs through (the job runner, the GitHub
// App's behaviour, the hosts). pino (src/server/logger.ts) and the edge's console log
// (src/edge/log.ts) satisfy it; nothing here names either, so every runtime can bundle it.
export interface Log {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
