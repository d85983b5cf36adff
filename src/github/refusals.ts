// What a command costs the bot when anyone may type it. A PR comment is open to every GitHub
// user, so a refusal of someone without permission (`/hcp smoke`, `/hcp cancel`) and every
// `/hcp advise` are limited per requester in an installation and per PR (src/store/slots.ts);
// past a limit the bot stays silent and records nothing new. The records a refusal leaves
// (its smoke request and audit entry) expire after REFUSAL_LIMITS.keepDays in every store.
import { takeSlots, type SlotLimit } from "../store/slots.ts";
import type { Store } from "../store/types.ts";

const HOUR = 3600;

export const REFUSAL_LIMITS = {
  /** Refusals answered per requester and installation in an hour. */
  perRequester: 3,
  /** Refusals answered per pull request in an hour (whoever asks). */
  perPr: 5,
  /** Days a refusal's records are kept. */
  keepDays: 7,
} as const;

/**
 * `/hcp advise` replies per hour. Anyone who may comment may ask (it reads nothing from the
 * repository and runs nothing, and its layout is bounded: MAX_ADVISE_GPUS), but not without end.
 */
export const ADVISE_LIMITS = { perRequester: 10, perPr: 20 } as const;

export interface Asker {
  installationId: number;
  login: string;
  repo: string;
  pr: number;
}

function limits(kind: string, a: Asker, perRequester: number, perPr: number): SlotLimit[] {
  return [
    { key: `${kind}:user:${a.installationId}:${a.login.toLowerCase()}`, limit: perRequester, windowSeconds: HOUR },
    { key: `${kind}:pr:${a.repo.toLowerCase()}#${a.pr}`, limit: perPr, windowSeconds: HOUR },
  ];
}

/**
 * Whether this refusal of someone without permission is answered and recorded: when so, the
 * expiry its records carry; undefined: stay silent, write nothing more.
 */
export async function refusalBudget(store: Pick<Store, "claim" | "release">, a: Asker, now: Date): Promise<{ expiresAt: Date } | undefined> {
  if (!(await takeSlots(store, limits("refusal", a, REFUSAL_LIMITS.perRequester, REFUSAL_LIMITS.perPr)))) return undefined;
  return { expiresAt: new Date(now.getTime() + REFUSAL_LIMITS.keepDays * 24 * HOUR * 1000) };
}

/** Whether this `/hcp advise` is answered (false: stay silent). */
export function adviseBudget(store: Pick<Store, "claim" | "release">, a: Asker): Promise<boolean> {
  return takeSlots(store, limits("advise", a, ADVISE_LIMITS.perRequester, ADVISE_LIMITS.perPr));
}
