// Answers first: a job's run waits while the server is answering, up to its bound.
import { createServer, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { watchAnswers } from "../../src/server/answers.ts";

describe("watchAnswers", () => {
  it("holds a job until the request being answered is answered, and never longer than its bound", async () => {
    const held: ServerResponse[] = [];
    const http = createServer((_req, res) => held.push(res));
    const answers = watchAnswers(http);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const port = (http.address() as AddressInfo).port;
    const replies: Promise<number>[] = [];
    const ask = () => replies.push(new Promise((resolve) => request({ host: "127.0.0.1", port, path: "/" }, (res) => res.resume().on("end", () => resolve(res.statusCode!))).end()));
    try {
      await answers.quiet(10); // nothing in flight: at once
      ask();
      ask();
      while (held.length < 2) await new Promise((r) => setTimeout(r, 10));
      expect(answers.inFlight).toBe(2);

      let ran = false;
      const job = answers.quiet(60_000).then(() => (ran = true));
      held[0]!.end("one");
      await new Promise((r) => setTimeout(r, 50));
      expect(ran).toBe(false); // one answer still being written
      held[1]!.end("two");
      await job;
      expect(answers.inFlight).toBe(0);

      // A request that is never answered holds a job only for the bound.
      ask();
      while (held.length < 3) await new Promise((r) => setTimeout(r, 10));
      const started = Date.now();
      await answers.quiet(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(answers.inFlight).toBe(1);
      held[2]!.end("three");
      expect(await Promise.all(replies)).toEqual([200, 200, 200]);
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });

  it("does not start a job in a gap between the requests of one burst, only once answers have settled", async () => {
    const held: ServerResponse[] = [];
    const http = createServer((_req, res) => held.push(res));
    const settleMs = 150;
    const answers = watchAnswers(http, settleMs);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const port = (http.address() as AddressInfo).port;
    const ask = () => new Promise<void>((resolve) => request({ host: "127.0.0.1", port, path: "/" }, (res) => res.resume().on("end", () => resolve())).end());
    try {
      const first = ask();
      while (held.length < 1) await new Promise((r) => setTimeout(r, 5));
      let ranAt = 0;
      const job = answers.quiet(60_000).then(() => (ranAt = performance.now()));
      held[0]!.end("one");
      await first;
      // The next request of the burst comes after a gap shorter than the settle time.
      const second = ask();
      while (held.length < 2) await new Promise((r) => setTimeout(r, 5));
      expect(ranAt).toBe(0);
      await new Promise((r) => setTimeout(r, settleMs + 50));
      expect(ranAt).toBe(0); // still answering the second one
      const answeredAt = performance.now();
      held[1]!.end("two");
      await second;
      await job;
      expect(ranAt - answeredAt).toBeGreaterThanOrEqual(settleMs - 20);
      // Settled: a job asking now runs at once.
      await answers.quiet(60_000);
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });
});
