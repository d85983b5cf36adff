// bench:load's floor: a bare node:http server that reads each request's body and answers a
// small JSON, with the bot's keep-alive settings. The same Slack waves sent to two of these
// show what answering them costs on this machine before any of the bot's own work.
import { createServer } from "node:http";

const server = createServer((req, res) => {
  let length = 0;
  req.on("data", (d) => (length += d.length));
  req.on("end", () => res.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify({ response_type: "ephemeral", text: `read ${length} bytes` })));
});
server.keepAliveTimeout = 65_000;
server.listen(0, "127.0.0.1", () => process.stderr.write(`listening on port ${server.address().port}\n`));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
