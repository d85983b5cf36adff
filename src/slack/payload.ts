// The slash-command form body Slack posts (application/x-www-form-urlencoded).
// Schemas are built on first use (z.lazy): zod schemas built at module load cost every
// CLI start and edge cold start, most of them before any request needs them.
import * as z from "zod";

const Id = z.string().regex(/^[A-Z0-9]{2,30}$/, "a Slack id");

export const SlashCommandSchema = z.lazy(() =>
  z.object({
    command: z.string().regex(/^\/[a-z0-9_-]{1,31}$/i, "a slash command such as /hcp"),
    text: z.string().max(4000).default(""),
    team_id: Id,
    channel_id: Id,
    user_id: Id,
    user_name: z.string().max(200).optional(),
    channel_name: z.string().max(200).optional(),
    enterprise_id: z.string().max(30).optional(),
    api_app_id: z.string().max(30).optional(),
    response_url: z.url({ protocol: /^https?$/ }),
    trigger_id: z.string().min(1).max(200).optional(),
  }),
);
export type SlashCommand = z.infer<typeof SlashCommandSchema>;

export type PayloadResult = { ok: true; command: SlashCommand } | { ok: false; error: string };

/** The form fields Slack sends; anything missing or malformed is a one-line error. */
export function parseSlashCommandForm(body: string, contentType: string | null): PayloadResult {
  if (!contentType || !/^application\/x-www-form-urlencoded\b/i.test(contentType)) {
    return { ok: false, error: "expected an application/x-www-form-urlencoded slash-command body" };
  }
  let fields: Record<string, string>;
  try {
    fields = Object.fromEntries(new URLSearchParams(body));
  } catch {
    return { ok: false, error: "the form body cannot be decoded" };
  }
  // Interactive payloads and Events API callbacks are not used by this app.
  if ("payload" in fields) return { ok: false, error: "interactive payloads are not handled by this app" };
  const parsed = SlashCommandSchema.safeParse(fields);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, error: `field ${issue.path.join(".") || "(form)"}: ${issue.message}` };
  }
  return { ok: true, command: parsed.data };
}
