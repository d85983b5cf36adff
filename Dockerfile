# syntax=docker/dockerfile:1
# Multi-stage Node 20 image. The build stage installs exact dependencies from the lock
# file; the runtime stage carries production dependencies only and runs as a non-root user.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary can be downloaded.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json app.yml ./
COPY bin ./bin
COPY src ./src
COPY templates ./templates
COPY fixtures/playground ./fixtures/playground
# The playground's browser bundle (dist/web), so the server does not build it at start.
RUN node --import tsx src/web/build.ts
RUN useradd --system --uid 10001 --home-dir /app hcpbot && chown -R hcpbot /app
USER hcpbot
ENV PORT=3000 HCP_DATA_DIR=/app/data
EXPOSE 3000
# No curl in the slim image: Node's fetch asks the server itself (test/node/server.test.ts runs this very command).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "bin/hcp-bot.js"]
# The GitHub App server; `docker run IMAGE lint /work` lints a mounted checkout instead.
CMD ["serve"]
