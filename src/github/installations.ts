// Which installation of the App serves a repository, for commands that name a repository
// rather than arrive in one of its webhooks (Slack). Each lookup is an app-authenticated call,
// and each of those signs a fresh app JWT (an RSA signature, about 1 ms here): a burst of 100
// Slack commands on one repository made 100 of them while the acks were still being written.
// A found installation is kept for a minute and concurrent lookups share one call; "not
// installed" is never kept, so installing the App takes effect at the next command.

export interface RepoInstallations {
  /** The installation id, or undefined when the App is not installed on the repository. */
  get(owner: string, repo: string): Promise<number | undefined>;
  /** Drops what is known about the repository (a call with its installation failed). */
  forget(owner: string, repo: string): void;
}

export const INSTALLATION_CACHE_MS = 60_000;

export function repoInstallations(lookup: (owner: string, repo: string) => Promise<number | undefined>, ttlMs = INSTALLATION_CACHE_MS, now: () => number = Date.now): RepoInstallations {
  const known = new Map<string, { at: number; id: Promise<number | undefined> }>();
  const keyOf = (owner: string, repo: string) => `${owner}/${repo}`.toLowerCase();
  return {
    get(owner, repo) {
      const key = keyOf(owner, repo);
      const hit = known.get(key);
      if (hit && now() - hit.at < ttlMs) return hit.id;
      const id = lookup(owner, repo).then(
        (found) => {
          if (found === undefined && known.get(key)?.id === id) known.delete(key);
          return found;
        },
        (error: unknown) => {
          if (known.get(key)?.id === id) known.delete(key);
          throw error;
        },
      );
      known.set(key, { at: now(), id });
      // A bounded map: a bot asked about many repositories keeps the latest.
      if (known.size > 1000) known.delete(known.keys().next().value!);
      return id;
    },
    forget(owner, repo) {
      known.delete(keyOf(owner, repo));
    },
  };
}
