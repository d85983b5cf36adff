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

  it("waits for `before` without holding a slot, in order per key, and counts the waiting job as not idle", async () => {
    const q = new KeyedQueue(1, { error: () => {} });
    const events: string[] = [];
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    void q.enqueue("pr#1", async () => void events.push("pr#1 first"), () => gate);
    void q.enqueue("pr#1", async () => void events.push("pr#1 second"));
    void q.enqueue("pr#2", async () => void events.push("pr#2"));
    await tick(30);
    // The only slot was free while pr#1's job waited: pr#2 ran; pr#1's second job keeps its place.
    expect(events).toEqual(["pr#2"]);
    expect(await Promise.race([q.idle().then(() => "idle"), tick(30).then(() => "busy")])).toBe("busy");
    open();
    await q.idle();
    expect(events).toEqual(["pr#2", "pr#1 first", "pr#1 second"]);
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
