// A sliding-window rate limit from claims alone: every store has claims, each expires by
// itself, and a claim is atomic across replicas, so no store needs a counter of its own.
// Slot i of a key is a claim held for the window; asking takes the first free slot, so at
// most `limit` are granted in any `windowSeconds`, and what is kept per key is at most
// `limit` claims that expire.
import type { Store } from "./types.ts";

export interface SlotLimit {
  /** Names what is limited and for whom: `smoke-refusal:user:42:mallory`. */
  key: string;
  limit: number;
  windowSeconds: number;
}

/** The claim's key of the slot taken, or undefined when all `limit` are held. */
export async function takeSlot(store: Pick<Store, "claim">, l: SlotLimit): Promise<string | undefined> {
  for (let i = 0; i < l.limit; i++) {
    const key = `limit:${l.key}:${i}`;
    if (await store.claim(key, l.windowSeconds)) return key;
  }
  return undefined;
}

/**
 * One slot of each limit, or none: when a later limit is full, the slots already taken are
 * given back (a refusal silenced by the PR's limit does not count against the requester's).
 */
export async function takeSlots(store: Pick<Store, "claim" | "release">, limits: readonly SlotLimit[]): Promise<boolean> {
  const taken: string[] = [];
  for (const l of limits) {
    const slot = await takeSlot(store, l);
    if (slot === undefined) {
      for (const key of taken) await store.release(key);
      return false;
    }
    taken.push(slot);
  }
  return true;
}
