// The `/slack/events` endpoint, runtime-neutral: verify the signature, read the form,
// answer within Slack's 3 seconds with an ephemeral plan or error, and hand the real work
// to `accept` (the Node server's queue; a durable job on an edge runtime). Nothing here
// waits for GitHub, so the ack costs a signature check, a parse and one store write.
import { helpText, parseSlackCommand, type Command, type PrTarget } from "../core/commands/index.ts";
import { readTarget } from "../core/commands/grammar.ts";
import { code, helpMessage, mrkdwn, textMessage, type SlackMessage } from "../core/render/slack.ts";
import { inThreadAdvise, type AdviseReplies } from "../core/render/layout/advice.ts";
import { takeSlot } from "../store/slots.ts";
import type { Store } from "../store/types.ts";
import { parseSlashCommandForm, type SlashCommand } from "./payload.ts";
import { verifySlackSignature, type HmacSha256 } from "./signature.ts";
import { splitCheckText, type SlackWork } from "./commands.ts";

/** Slack bodies are small; anything bigger is not a slash command. */
export const MAX_BODY_BYTES = 64 * 1024;
/** A command (or its Slack retry) is remembered for a day: a retry never dispatches twice, even after a restart. */
export const COMMAND_CLAIM_SECONDS = 24 * 60 * 60;
/**
 * `/hcp advise` answers per Slack user an hour. Any user of a workspace that installed the app
 * may ask (it names no repository, so there is no GitHub login to check), but not without end.
 */
export const SLACK_ADVISE_PER_HOUR = 10;

/**
 * What the ack understood. "deferred": the text names a repository whose config (extra
 * override keys) may make it valid, so it is parsed again after the ack.
 */
export type DeferredCommand = Command | { kind: "deferred"; sub: "smoke"; target: PrTarget } | { kind: "deferred"; sub: "check"; repo: { owner: string; repo: string } };

export interface SlackCoreDeps {
  signingSecret: string;
  /**
   * Takes a command's work to run after the ack, together with its claim (the command's
   * delivery id, so a Slack retry is not accepted again); `key` orders work on the same PR.
   * False when the claim is held already. A durable host writes both in one step.
   */
  accept: (claim: { key: string; ttlSeconds: number }, key: string, work: SlackWork, command: DeferredCommand) => Promise<boolean>;
  nowSeconds?: () => number;
  /** The host's HMAC-SHA256 for signatures (default: WebCrypto). */
  hmacSha256?: HmacSha256;
  /** Where `/hcp advise`'s per-user limit is kept (its claims); without it advise is not limited. */
  limits?: Pick<Store, "claim">;
  /** Renders `/hcp advise` replies (default: this thread; a worker thread on the Node server). */
  advise?: AdviseReplies;
}

/** `accept` for hosts that run the work in process: claim in the store, then schedule. */
export function claimThenSchedule(store: Pick<Store, "claim">, schedule: (key: string, work: SlackWork, command: DeferredCommand) => void): SlackCoreDeps["accept"] {
  return async (claim, key, work, command) => {
    if (!(await store.claim(claim.key, claim.ttlSeconds))) return false;
    schedule(key, work, command);
    return true;
  };
}

const STORE_DOWN = ":warning: hcp-bot cannot take commands right now (its store is unavailable or it is restarting); nothing was started. Try again in a minute.";

export interface SlackHttpRequest {
  method: string;
  header(name: string): string | null;
  body: string;
}

export interface SlackHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function json(status: number, body: object, extra: Record<string, string> = {}): SlackHttpResponse {
  return { status, headers: { "content-type": "application/json; charset=utf-8", ...extra }, body: JSON.stringify(body) };
}

function ephemeral(message: SlackMessage): SlackHttpResponse {
  return json(200, { response_type: "ephemeral", text: message.text, blocks: message.blocks });
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The id a command keeps across Slack's retries: its trigger_id, or (when Slack sends
 * none) a hash of who typed what, where, in which minute.
 */
export async function commandDeliveryId(p: SlashCommand, nowSeconds: number): Promise<string> {
  if (p.trigger_id) return `slack:${p.trigger_id}`.slice(0, 200);
  return `slack:h:${(await sha256Hex(`${p.team_id}\n${p.user_id}\n${p.channel_id}\n${p.text}\n${Math.floor(nowSeconds / 60)}`)).slice(0, 40)}`;
}

/** Words for the ack: what was understood and what happens next. */
function planText(command: DeferredCommand): string {
  const pr = (t: PrTarget | undefined) => (t ? mrkdwn(`${t.owner}/${t.repo}#${t.pr}`) : "");
  switch (command.kind) {
    case "smoke": {
      const parts = [
        command.recipe ? `recipe=${command.recipe}` : "recipe: repo default",
        command.cp ? `cp=${command.cp}` : "cp: repo default",
        command.sizes === null ? "sizes=none" : command.sizes ? `sizes=${command.sizes.join(",")}` : "sizes: repo default",
        ...command.overrides.map((o) => `${o.key}=${o.text}`),
      ];
      return `:hourglass_flowing_sand: ${command.dryRun ? "Dry run of a smoke run" : "Smoke run"} on ${pr(command.target)}: ${code(parts.join(" "))}. Checking your access, the PR and the pre-flight; the answer follows here${command.dryRun ? "" : " and the run is announced in this channel"}.`;
    }
    case "deferred":
      return command.sub === "smoke"
        ? `:hourglass_flowing_sand: Reading ${pr(command.target)}'s settings to check that command; the answer follows here.`
        : `:mag: Checking that configuration against ${mrkdwn(`${command.repo.owner}/${command.repo.repo}`)} (nothing runs)…`;
    case "status":
      return `:mag: Looking up ${pr(command.target)}…`;
    case "cancel":
      return `:stop_button: Cancelling the smoke run on ${pr(command.target)}…`;
    case "check":
      return ":mag: Checking that configuration for HCP problems (nothing runs)…";
    case "help":
    case "advise":
      return "";
  }
}

/** Queue key: work on one PR runs in order, with the PR comments' work (same key format as the GitHub App). */
function workKey(command: DeferredCommand, deliveryId: string): string {
  const t = command.kind === "deferred" ? (command.sub === "smoke" ? command.target : undefined) : command.kind === "smoke" || command.kind === "status" || command.kind === "cancel" ? command.target : undefined;
  return t ? `${t.owner}/${t.repo}#${t.pr}` : `slack:${deliveryId}`;
}

/**
 * A parse error that may only be about an override key the repository allows (its
 * `smoke.allowed_keys` are read after the ack): defer it when the command names a PR.
 */
function deferrable(text: string): DeferredCommand | undefined {
  const words = text.trim().split(/\s+/);
  if (words[0]?.toLowerCase() === "check") {
    const spec = splitCheckText(text);
    return typeof spec !== "string" && spec.repo ? { kind: "deferred", sub: "check", repo: spec.repo } : undefined;
  }
  if (words[0]?.toLowerCase() !== "smoke" || !words[1]) return undefined;
  const target = readTarget(words[1]);
  return target.ok ? { kind: "deferred", sub: "smoke", target: target.value } : undefined;
}

/** `/hcp check` with the Slack-only `OWNER/REPO recipe=NAME` prefix taken off before the grammar reads it. */
function parseForAck(text: string) {
  if (text.trim().split(/\s+/)[0]?.toLowerCase() !== "check") return parseSlackCommand(text);
  const spec = splitCheckText(text);
  if (typeof spec === "string") return { ok: false as const, error: spec };
  return parseSlackCommand(`check ${spec.rest}`);
}

function isSslCheck(body: string): boolean {
  const fields = new URLSearchParams(body);
  return fields.get("ssl_check") === "1" && !fields.has("command");
}

export type VerifiedRequest = { ok: true; payload: SlashCommand } | { ok: false; response: SlackHttpResponse };

export interface SlackCore {
  /** Signature (past and future timestamps refused), size and form checks. */
  verify(request: SlackHttpRequest): Promise<VerifiedRequest>;
  /** The ack for a verified slash command; its work is scheduled to run after the ack. */
  answer(payload: SlashCommand): Promise<SlackHttpResponse>;
  /** Both, as one fetch-style handler (Deno, Workers). */
  handle(request: SlackHttpRequest): Promise<SlackHttpResponse>;
}

export function createSlackCore(deps: SlackCoreDeps): SlackCore {
  const now = deps.nowSeconds ?? (() => Math.floor(Date.now() / 1000));

  async function verify(request: SlackHttpRequest): Promise<VerifiedRequest> {
    if (request.method !== "POST") return { ok: false, response: json(405, { error: "POST only" }, { allow: "POST" }) };
    if (request.body.length > MAX_BODY_BYTES) return { ok: false, response: json(413, { error: "body too large" }) };
    const verified = await verifySlackSignature(
      deps.signingSecret,
      { signature: request.header("x-slack-signature"), timestamp: request.header("x-slack-request-timestamp") },
      request.body,
      now(),
      deps.hmacSha256,
    );
    if (!verified.ok) return { ok: false, response: json(401, { error: `invalid request signature: ${verified.reason}` }) };
    // Slack checks the certificate with a signed `ssl_check=1` form (no command): it wants a 200.
    if (isSslCheck(request.body)) return { ok: false, response: { status: 200, headers: {}, body: "" } };
    const form = parseSlashCommandForm(request.body, request.header("content-type"));
    if (!form.ok) return { ok: false, response: json(400, { error: form.error }) };
    return { ok: true, payload: form.command };
  }

  /** The advice, within the user's hourly limit; past it one line, and nothing is recorded. */
  async function adviseAck(payload: SlashCommand, command: Extract<Command, { kind: "advise" }>): Promise<SlackHttpResponse> {
    if (deps.limits) {
      let granted: string | undefined;
      try {
        granted = await takeSlot(deps.limits, { key: `advise:slack:${payload.team_id}:${payload.user_id}`, limit: SLACK_ADVISE_PER_HOUR, windowSeconds: 3600 });
      } catch {
        return ephemeral(textMessage(STORE_DOWN));
      }
      if (!granted) return ephemeral(textMessage(`:hourglass: hcp-bot answered ${SLACK_ADVISE_PER_HOUR} \`/hcp advise\` commands of yours in the last hour; ask again later.`));
    }
    return ephemeral(await (deps.advise ?? inThreadAdvise).slack(command));
  }

  async function answer(payload: SlashCommand): Promise<SlackHttpResponse> {
    const parsed = parseForAck(payload.text);
    let command: DeferredCommand;
    if (parsed.ok) command = parsed.command;
    else {
      const deferred = deferrable(payload.text);
      if (!deferred) return ephemeral(textMessage(`:warning: ${mrkdwn(parsed.error)}\nType \`/hcp help\` for the commands.`));
      command = deferred;
    }
    if (command.kind === "help") return ephemeral(helpMessage(helpText({ surface: "slack" })));
    // Pure arithmetic on the command's own numbers: answered in the ack, nothing is scheduled.
    if (command.kind === "advise") return adviseAck(payload, command);

    const deliveryId = await commandDeliveryId(payload, now());
    let first: boolean;
    try {
      first = await deps.accept({ key: `slack-command:${deliveryId}`, ttlSeconds: COMMAND_CLAIM_SECONDS }, workKey(command, deliveryId), { payload, deliveryId }, command);
    } catch {
      // Nothing was recorded (the store is away, or this replica is shutting down): nothing runs, so the user can safely ask again.
      return ephemeral(textMessage(STORE_DOWN));
    }
    if (!first) {
      // A Slack retry (x-slack-retry-num) or a replay: the first delivery already runs it.
      return ephemeral(textMessage("hcp-bot already received this command and is working on it."));
    }
    return ephemeral(textMessage(planText(command)));
  }

  return {
    verify,
    answer,
    async handle(request) {
      const verified = await verify(request);
      return verified.ok ? answer(verified.payload) : verified.response;
    },
  };
}

/** The same handler for fetch-style runtimes (Deno, Workers): `(Request) => Response`. */
export function fetchAdapter(core: Pick<SlackCore, "handle">): (request: Request) => Promise<Response> {
  return async (request) => {
    const body = await request.text();
    const res = await core.handle({ method: request.method, header: (n) => request.headers.get(n), body });
    return new Response(res.body, { status: res.status, headers: res.headers });
  };
}
