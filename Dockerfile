# syntax=docker/dockerfile:1
# Multi-stage Node 20 image. The build stage installs exact dependencies from the lock
# file; the runtime stage carries production dependencies only and runs as a non-root user.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json app.yml ./
COPY bin ./bin
COPY src ./src
RUN useradd --system --uid 10001 --home-dir /app hcpbot && chown -R hcpbot /app
USER hcpbot
ENTRYPOINT ["node", "bin/hcp-bot.js"]
# Until the GitHub App server lands, the image lints a mounted checkout:
#   docker run --rm -v "$PWD:/work:ro" -w /work hcp-bot lint .
CMD ["lint", "."]
