// `/` when the server runs as the GitHub App (app mode): a small page that says what this
// server is and links what it serves (the playground; the run history when it is on; the rule
// pages). In setup mode `/` stays Probot's (it registers the App).
import { html, page } from "./html.ts";
import { htmlResponse } from "./headers.ts";

export function landingPage(options: { runsOn: boolean }): Response {
  const runs = options.runsOn
    ? html`<li><a href="/runs">Smoke runs</a>: the history of this server's GPU smoke runs and their verdicts (sign-in with GitHub).</li>`
    : "";
  const body = html`<h1>hcp-bot</h1>
    <p>This server runs hcp-bot, the GitHub App that reviews Megatron-Bridge hierarchical context parallelism settings on pull requests.</p>
    <ul>
      <li><a href="/playground">Playground</a>: paste a recipe, an override file or a launch line and see the review the bot would post (it runs in your browser; nothing is uploaded).</li>
      ${runs}
      <li><a href="/docs/rules">Rules</a>: what each check catches, why it matters and how to fix it (the pages the bot's findings link to).</li>
    </ul>
    <p>The same checks run locally with <code>npx hcp-bot lint FILE</code>; <code>npx hcp-bot explain RULE</code> prints a rule's page in a terminal.</p>`;
  return htmlResponse(200, page({ title: "hcp-bot", current: "home" }, body));
}
