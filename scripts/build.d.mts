// Types for scripts/build.mjs (plain JavaScript so `npm ci` can run it before anything is compiled).
export const ENTRY_POINTS: Record<string, string>;
export const EXTERNAL: string[];
export function buildPackage(options?: { types?: boolean }): Promise<void>;
export function newestInput(): number;
export function isStale(options?: { types?: boolean }): boolean;
