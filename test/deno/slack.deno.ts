// Serves the Slack core's fetch handler with Deno.serve on a loopback port (printed as JSON on
// stdout), the way an edge deployment would. test/deno/slack.test.ts sends it signed requests.
// Test-only routes: GET /test/scheduled (the work scheduled after acks), POST /test/shutdown.
import { claimThenSchedule, createSlackCore, fetchAdapter } from "../../src/slack/endpoint.ts";
import { MemoryStore } from "../../src/store/memory/store.ts";

declare const Deno: {
  args: string[];
  serve(
    options: { port: number; hostname: string; onListen(addr: { port: number }): void },
    handler: (request: Request) => Response | Promise<Response>,
  ): { shutdown(): Promise<void> };
};

const scheduled: { key: string; kind: string }[] = [];
const slack = fetchAdapter(
  createSlackCore({
    signingSecret: Deno.args[0]!,
    accept: claimThenSchedule(new MemoryStore(), (key, _work, command) => void scheduled.push({ key, kind: command.kind })),
  }),
);

const server = Deno.serve(
  { port: 0, hostname: "127.0.0.1", onListen: ({ port }) => console.log(JSON.stringify({ runtime: "deno", port })) },
  (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/slack/events") return slack(request);
    if (path === "/test/scheduled") return Response.json(scheduled);
    if (path === "/test/shutdown") {
      queueMicrotask(() => void server.shutdown());
      return new Response("bye");
    }
    return new Response("not found", { status: 404 });
  },
);
