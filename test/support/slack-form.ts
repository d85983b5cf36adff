// The form body Slack POSTs for a slash command (application/x-www-form-urlencoded), with
// the fields a real `/hcp` request carries; tests override what they care about.
export function slashCommandForm(text: string, fields: Record<string, string> = {}): string {
  return new URLSearchParams({
    token: "deprecated-verification-token",
    team_id: "T0TEAM",
    team_domain: "acme",
    channel_id: "C0CHAN",
    channel_name: "hcp-smoke",
    user_id: "U0USER",
    user_name: "maint",
    command: "/hcp",
    text,
    api_app_id: "A0APP",
    is_enterprise_install: "false",
    response_url: "https://hooks.example.invalid/commands/1",
    trigger_id: "1.2.trigger",
    ...fields,
  }).toString();
}
