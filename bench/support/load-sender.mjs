// bench:load's client, on a thread of its own: it sends each request and times it to the last
// byte of the answer. The fake GitHub and fake Slack answer the replicas' work on the bench's
// main thread; timed there, an ack would also wait for the fakes' own work (validating each
// call against GitHub's OpenAPI description), which is not the bot's answer time.
// Plain JavaScript: a worker thread does not get the main thread's TypeScript loader.
// Orders: { id, port, path, headers, body }; results: { id, ms, status, text, error? }.
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";
import { parentPort } from "node:worker_threads";

const agents = new Map();
const agentFor = (port) => agents.get(port) ?? agents.set(port, new Agent({ keepAlive: true, maxSockets: 256 })).get(port);

function send(o) {
  const started = performance.now();
  const req = request({ host: "127.0.0.1", port: o.port, method: "POST", path: o.path, agent: agentFor(o.port), headers: { ...o.headers, "content-length": String(Buffer.byteLength(o.body)) } }, (res) => {
    let text = "";
    res.setEncoding("utf8").on("data", (d) => (text += d.length < 200 ? d : ""));
    res.on("end", () => parentPort.postMessage({ id: o.id, ms: performance.now() - started, status: res.statusCode ?? null, text }));
  });
  req.on("error", (error) =>
    parentPort.postMessage({ id: o.id, ms: performance.now() - started, status: null, text: "", error: `connection ${error.code ?? error.message}${req.reusedSocket ? " (on a reused keep-alive socket)" : ""}` }),
  );
  req.end(o.body);
}

parentPort.on("message", (m) => {
  if (m === "close") {
    for (const a of agents.values()) a.destroy();
    parentPort.close();
  } else send(m);
});
