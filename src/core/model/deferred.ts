// A value built on first use and kept. The zod schemas of the model are made this way:
// building them at module load (zod's own loading with them) costs every CLI start and edge
// cold start, while a plain `hcp-bot lint` uses them only as types (bench:cli: ~5 ms; the
// lint bundle loads zod at the first schema built, scripts/build.mjs).
export function deferred<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}
