// The part of the Cloudflare Workers runtime API the entry uses, typed structurally (the
// official types redefine the DOM globals this project's other code is checked against).
// The tests run the built worker on workerd itself, which checks what these only describe.

export interface SqlStorage {
  exec(query: string, ...bindings: unknown[]): { toArray(): Record<string, string | number | null>[] };
}

export interface DurableObjectStorage {
  sql: SqlStorage;
  transactionSync<T>(work: () => T): T;
}

export interface DurableObjectState {
  storage: DurableObjectStorage;
  blockConcurrencyWhile<T>(work: () => Promise<T>): Promise<T>;
}

export interface DurableObjectNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): Record<string, (...args: unknown[]) => Promise<unknown>>;
}

export interface Queue<T> {
  send(body: T, options?: { delaySeconds?: number }): Promise<void>;
}

export interface QueueMessage<T> {
  id: string;
  body: T;
  attempts: number;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

export interface MessageBatch<T> {
  queue: string;
  messages: readonly QueueMessage<T>[];
}

export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

/** Bindings (wrangler.toml) and settings (vars and secrets, the same names as on Node). */
export interface WorkerEnv extends Record<string, unknown> {
  STORE: DurableObjectNamespace;
  JOBS: Queue<{ job: string }>;
  /** Workers Static Assets (wrangler.toml [assets]): the web pages' built files, read by the worker, which sets their headers. */
  ASSETS?: { fetch(request: Request): Promise<Response> };
}
