# syntax=docker/dockerfile:1
# The image runs the hcp-bot-server package exactly as `npm pack` makes it. Three stages: build
# (all dependencies, compiles dist/ and packs both packages: hcp-bot, the CLI, and
# hcp-bot-server, which depends on it), deps (the server tarball unpacked, with the production
# dependencies the lock file pins and hcp-bot from its tarball; nothing native) and runtime
# (no compilers, no dev dependencies, a non-root user).
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Scripts run later, on purpose: `prepare` would build before the sources are copied.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run build && mkdir /pkg && npm pack --ignore-scripts --pack-destination /pkg \
 && npm pack ./packages/server --ignore-scripts --pack-destination /pkg \
 && mkdir /app && tar -xzf /pkg/hcp-bot-server-[0-9]*.tgz -C /app --strip-components=1 \
 && node scripts/install-lock.mjs /app /pkg/hcp-bot-[0-9]*.tgz

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY --from=build /pkg/ /pkg/
COPY --from=build /app/ ./
# The lock (scripts/install-lock.mjs) pins every dependency as the repository's lock does, and
# hcp-bot to its tarball in /pkg. No script runs: nothing is native (the SQLite store is Node's
# own node:sqlite, the Python grammar is WebAssembly), and the package's own are build steps.
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app ./
RUN useradd --system --uid 10001 --home-dir /app hcpbot && mkdir -p /app/data && chown -R hcpbot /app/data
USER hcpbot
ENV PORT=3000 HCP_DATA_DIR=/app/data
EXPOSE 3000
# No curl in the slim image: Node's fetch asks the server itself (test/server/server.test.ts runs this very command).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "bin/hcp-bot-server.js"]
# The GitHub App server; `docker run IMAGE lint /work` lints a mounted checkout instead (the hcp-bot CLI).
CMD ["serve"]
