# syntax=docker/dockerfile:1
# The example app as an image: `docker build -t entigen-app .`, then compose.yaml runs two of it
# behind nginx on PostgreSQL, Redis and an S3-compatible store. A project of your own copies this
# file and keeps the two stages: build and check with the dev dependencies, run without them.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
RUN npm ci --ignore-scripts
COPY . .
# Compile the CLI and runtime (prepare), and refuse an image whose generated/ is stale.
RUN npm rebuild && node scripts/prepare.mjs && node dist/bin/entigen.js check

FROM node:20-bookworm-slim
# pg_dump and pg_restore, so that `entigen backup` on PostgreSQL takes a real dump.
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-client \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; their own install scripts fetch the native binaries (SQLite, sharp).
RUN npm ci --omit=dev --ignore-scripts && npm rebuild && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/generated ./generated
COPY --from=build /app/admin/build ./admin/build
COPY entities ./entities
COPY hooks ./hooks
COPY jobs ./jobs
COPY templates ./templates
COPY generator/schema ./generator/schema
COPY entigen.config.yaml ./
RUN mkdir -p data && chown node:node data
USER node
EXPOSE 3000
# /api/health answers 200 while the database answers, 503 otherwise and while the server drains.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The server runs as PID 1, so `docker stop` reaches it: on SIGTERM it drains requests, lets its
# leases go and exits 0. (A project with migrations/ copies that folder too.)
STOPSIGNAL SIGTERM
# Two malloc arenas for the server's threads instead of up to eight per core: less memory held.
ENV MALLOC_ARENA_MAX=2
CMD ["node", "--max-semi-space-size=8", "dist/bin/entigen.js", "serve"]
