// A fake Slack Web API on loopback for tests: chat.postMessage, chat.update and slash-command
// response_url posts. Every payload is checked against Slack's limits (50 blocks, 3000
// characters per text object, 40,000 per message text, required fields); a payload Slack
// would refuse is answered as Slack does (`invalid_blocks`, `msg_too_long`...) and recorded
// in `violations`, which every test should expect to be empty.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PATIENCE_MS } from "../patience.ts";

export interface SlackCall {
  /** chat.postMessage, chat.update or response_url */
  method: string;
  body: Record<string, unknown>;
  /** For response_url posts: the id in the URL. */
  responseId?: string;
  at: number;
  /** Answered by an injected fault (nothing was done). */
  injected?: boolean;
}

/** A fault for the next matching calls: Slack's 429 with Retry-After, or a 5xx. */
export interface SlackFault {
  method: "chat.postMessage" | "chat.update" | "response_url";
  status: number;
  /** Seconds, sent as Retry-After (Slack sends it with every 429). */
  retryAfter?: number;
  /** default 1 */
  times?: number;
}

export interface FakeSlackMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: unknown[];
  updates: number;
}

export interface FakeSlack {
  url: string;
  /** SLACK_API_URL for the bot. */
  apiUrl: string;
  calls: SlackCall[];
  violations: string[];
  /** Messages by `channel:ts`, as last posted or updated. */
  messages: Map<string, FakeSlackMessage>;
  /** A response_url the fake serves. */
  responseUrl(id?: string): string;
  /** The JSON bodies posted to one response_url. */
  responses(id: string): Record<string, unknown>[];
  /** Channels the bot is not a member of (postMessage answers not_in_channel). */
  notInChannel: Set<string>;
  /** Answers the next matching call(s) with a fault instead (recorded with `injected`). */
  inject(fault: SlackFault): void;
  /** Resolves once `n` calls matching the filter were recorded. */
  waitFor(filter: (c: SlackCall) => boolean, n?: number, timeoutMs?: number): Promise<SlackCall[]>;
  close(): Promise<void>;
}

export const LIMITS = { blocks: 50, text: 3000, messageText: 40_000, header: 150, fields: 10, fieldText: 2000, contextElements: 10, actions: 25, buttonText: 75, url: 3000 };

type Json = Record<string, unknown>;

function textOf(o: unknown): { type?: unknown; text?: unknown } {
  return (o && typeof o === "object" ? o : {}) as { type?: unknown; text?: unknown };
}

/** Problems Slack would answer with invalid_blocks / msg_too_long / no_text. */
export function messageProblems(body: Json): string[] {
  const out: string[] = [];
  const text = body.text;
  const blocks = body.blocks;
  if (text !== undefined && typeof text !== "string") out.push("text must be a string");
  if (typeof text === "string" && text.length > LIMITS.messageText) out.push(`text is ${text.length} chars (> ${LIMITS.messageText})`);
  if ((typeof text !== "string" || text === "") && (!Array.isArray(blocks) || blocks.length === 0)) out.push("no_text: neither text nor blocks");
  if (blocks === undefined) return out;
  if (!Array.isArray(blocks)) return [...out, "blocks must be an array"];
  if (blocks.length > LIMITS.blocks) out.push(`${blocks.length} blocks (> ${LIMITS.blocks})`);
  blocks.forEach((b: unknown, i) => {
    const block = (b ?? {}) as Json;
    const at = `blocks[${i}] (${String(block.type)})`;
    const checkText = (t: unknown, max: number, where: string, plainOnly = false) => {
      const o = textOf(t);
      if (o.type !== "mrkdwn" && o.type !== "plain_text") out.push(`${where}: text object type must be mrkdwn or plain_text`);
      if (plainOnly && o.type !== "plain_text") out.push(`${where}: must be plain_text`);
      if (typeof o.text !== "string" || o.text.length === 0) out.push(`${where}: empty text`);
      else if (o.text.length > max) out.push(`${where}: ${o.text.length} chars (> ${max})`);
    };
    switch (block.type) {
      case "section": {
        if (block.text === undefined && block.fields === undefined) out.push(`${at}: needs text or fields`);
        if (block.text !== undefined) checkText(block.text, LIMITS.text, `${at}.text`);
        if (block.fields !== undefined) {
          const fields = block.fields as unknown[];
          if (!Array.isArray(fields) || fields.length > LIMITS.fields) out.push(`${at}.fields: at most ${LIMITS.fields}`);
          else fields.forEach((f, j) => checkText(f, LIMITS.fieldText, `${at}.fields[${j}]`));
        }
        break;
      }
      case "header":
        checkText(block.text, LIMITS.header, `${at}.text`, true);
        break;
      case "context": {
        const els = block.elements as unknown[];
        if (!Array.isArray(els) || els.length === 0 || els.length > LIMITS.contextElements) out.push(`${at}.elements: 1-${LIMITS.contextElements}`);
        else els.forEach((e, j) => checkText(e, LIMITS.text, `${at}.elements[${j}]`));
        break;
      }
      case "divider":
        break;
      case "actions": {
        const els = block.elements as Json[];
        if (!Array.isArray(els) || els.length === 0 || els.length > LIMITS.actions) out.push(`${at}.elements: 1-${LIMITS.actions}`);
        else
          els.forEach((e, j) => {
            if (e.type !== "button") out.push(`${at}.elements[${j}]: only buttons are expected`);
            checkText(e.text, LIMITS.buttonText, `${at}.elements[${j}].text`, true);
            if (e.url !== undefined && (typeof e.url !== "string" || e.url.length > LIMITS.url)) out.push(`${at}.elements[${j}].url`);
            if (typeof e.action_id !== "string" || e.action_id.length > 255) out.push(`${at}.elements[${j}].action_id`);
          });
        break;
      }
      default:
        out.push(`${at}: unknown block type`);
    }
  });
  return out;
}

async function readJson(req: IncomingMessage): Promise<Json | undefined> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    const v: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : undefined;
  } catch {
    return undefined;
  }
}

export async function startFakeSlack(options: { token?: string } = {}): Promise<FakeSlack> {
  const token = options.token ?? "xoxb-test";
  const calls: SlackCall[] = [];
  const violations: string[] = [];
  const messages = new Map<string, FakeSlackMessage>();
  const responses = new Map<string, Json[]>();
  const notInChannel = new Set<string>();
  const waiters: Array<() => void> = [];
  let tsCounter = 0;
  const faults: Array<SlackFault & { left: number }> = [];
  /** Answers with a fault when one matches; true when it did. */
  const faulted = (method: string, body: Json, res: import("node:http").ServerResponse, responseId?: string): boolean => {
    const fault = faults.find((f) => f.left > 0 && f.method === method);
    if (!fault) return false;
    fault.left--;
    record({ method, body, at: Date.now(), injected: true, ...(responseId ? { responseId } : {}) });
    res.writeHead(fault.status, { "content-type": "application/json", ...(fault.retryAfter !== undefined ? { "retry-after": String(fault.retryAfter) } : {}) });
    res.end(JSON.stringify({ ok: false, error: fault.status === 429 ? "ratelimited" : "fatal_error" }));
    return true;
  };

  const record = (call: SlackCall) => {
    calls.push(call);
    for (const w of waiters.splice(0)) w();
  };

  const server: Server = createServer(async (req, res) => {
    const send = (status: number, body: object) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method !== "POST") return send(405, { ok: false, error: "method_not_allowed" });
    if (!/^application\/json\b/.test(req.headers["content-type"] ?? "")) {
      violations.push(`${url.pathname}: content-type ${req.headers["content-type"]}`);
      return send(200, { ok: false, error: "invalid_form_data" });
    }
    const body = await readJson(req);
    if (!body) {
      violations.push(`${url.pathname}: body is not a JSON object`);
      return send(200, { ok: false, error: "invalid_json" });
    }
    const response = /^\/response\/([\w-]+)$/.exec(url.pathname);
    if (response) {
      const id = response[1]!;
      if (faulted("response_url", body, res, id)) return;
      record({ method: "response_url", body, responseId: id, at: Date.now() });
      const problems = messageProblems(body);
      if (body.response_type !== undefined && body.response_type !== "ephemeral" && body.response_type !== "in_channel") problems.push("response_type");
      const list = responses.get(id) ?? [];
      // Slack allows five responses per response_url.
      if (list.length >= 5) problems.push("more than 5 responses to one response_url");
      if (problems.length) {
        violations.push(...problems.map((p) => `response_url ${id}: ${p}`));
        return res.writeHead(400).end("invalid_blocks");
      }
      list.push(body);
      responses.set(id, list);
      return res.writeHead(200).end("ok");
    }
    const method = /^\/api\/(chat\.postMessage|chat\.update)$/.exec(url.pathname)?.[1];
    if (!method) {
      violations.push(`unknown method ${url.pathname}`);
      return send(404, { ok: false, error: "unknown_method" });
    }
    if (faulted(method, body, res)) return;
    record({ method, body, at: Date.now() });
    if (req.headers.authorization !== `Bearer ${token}`) return send(200, { ok: false, error: "invalid_auth" });
    const channel = body.channel;
    if (typeof channel !== "string" || channel === "") {
      violations.push(`${method}: channel missing`);
      return send(200, { ok: false, error: "channel_not_found" });
    }
    const problems = messageProblems(body);
    if (problems.length) {
      violations.push(...problems.map((p) => `${method}: ${p}`));
      return send(200, { ok: false, error: problems.some((p) => p.startsWith("text is")) ? "msg_too_long" : problems.some((p) => p.startsWith("no_text")) ? "no_text" : "invalid_blocks" });
    }
    if (notInChannel.has(channel)) return send(200, { ok: false, error: "not_in_channel" });
    if (method === "chat.postMessage") {
      const ts = `${1_700_000_000 + ++tsCounter}.000100`;
      messages.set(`${channel}:${ts}`, { channel, ts, text: String(body.text ?? ""), blocks: (body.blocks as unknown[]) ?? [], updates: 0 });
      return send(200, { ok: true, channel, ts, message: { text: body.text } });
    }
    const key = `${channel}:${String(body.ts)}`;
    const existing = messages.get(key);
    if (!existing) {
      violations.push(`chat.update: no message ${key}`);
      return send(200, { ok: false, error: "message_not_found" });
    }
    messages.set(key, { ...existing, text: String(body.text ?? ""), blocks: (body.blocks as unknown[]) ?? [], updates: existing.updates + 1 });
    return send(200, { ok: true, channel, ts: existing.ts, text: body.text });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  let responseCounter = 0;

  return {
    url,
    apiUrl: `${url}/api/`,
    calls,
    violations,
    messages,
    notInChannel,
    inject: (fault) => faults.push({ ...fault, left: fault.times ?? 1 }),
    responseUrl: (id) => `${url}/response/${id ?? `r${++responseCounter}`}`,
    responses: (id) => responses.get(id) ?? [],
    async waitFor(filter, n = 1, timeoutMs = PATIENCE_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = calls.filter(filter);
        if (found.length >= n) return found;
        if (Date.now() > deadline) throw new Error(`fake Slack: waited ${timeoutMs} ms for ${n} call(s), saw ${found.length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
