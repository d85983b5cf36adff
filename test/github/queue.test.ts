// The background queue: one job at a time per key, a global concurrency cap, idle().
import { describe, expect, it } from "vitest";
import { KeyedQueue } from "../../src/github/queue.ts";

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("KeyedQueue", () => {
  it("runs jobs of one key in order, never overlapping", async () => {
    const errors: object[] = [];
    const q = new KeyedQueue(4, { error: (o) => errors.push(o) });
    const events: string[] = [];
    for (const n of [1, 2, 3]) {
      void q.enqueue("pr#1", async () => {
        events.push(`start ${n}`);
        await tick(15 - n * 4);
        events.push(`end ${n}`);
      });
    }
    await q.idle();
    expect(events).toEqual(["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
    expect(errors).toEqual([]);
  });

  it("caps concurrency across keys", async () => {
    const q = new KeyedQueue(2, { error: () => {} });
    let running = 0;
    let peak = 0;
    for (let i = 0; i < 6; i++) {
      void q.enqueue(`pr#${i}`, async () => {
        running++;
        peak = Math.max(peak, running);
        await tick(10);
        running--;
      });
    }
    expect(q.size).toBe(6);
    await q.idle();
    expect(peak).toBe(2);
    expect(q.size).toBe(0);
  });

  it("logs a failing job and keeps going", async () => {
    const errors: object[] = [];
    const q = new KeyedQueue(1, { error: (o) => errors.push(o) });
    const done: number[] = [];
    void q.enqueue("k", async () => {
      throw new Error("boom");
    });
    void q.enqueue("k", async () => {
      done.push(2);
    });
    await q.idle();
    expect(done).toEqual([2]);
    expect(errors).toHaveLength(1);
    expect(await Promise.race([q.idle().then(() => "idle"), tick(50).then(() => "stuck")])).toBe("idle");
  });
});
