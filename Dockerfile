# syntax=docker/dockerfile:1
# Build stage: the full Node image has python3, make and g++ for better-sqlite3's native module.
FROM node:26-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

# Run stage: slim image, production dependencies only, non-root, data on a volume.
FROM node:26-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_PATH=/app/data/service.db
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY package.json tsconfig.json schema.sql ./
# migrations/ must ship with src/: openDatabase applies the missing steps at every start.
COPY migrations ./migrations
COPY src ./src
# Operator scripts: docker exec <container> npm run backup -- /app/data/backup.db (see README).
COPY scripts ./scripts
# The volume holds the database, its -wal/-shm files and the secret key file (service.db.key).
RUN mkdir -p /app/data && chown node:node /app/data && chmod 700 /app/data
USER node
VOLUME ["/app/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# tini forwards SIGTERM to node (npm start would swallow it), so shutdown is graceful.
ENTRYPOINT ["/usr/bin/tini", "--"]
# The same entry point as `npm start`.
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=20", "--import", "tsx", "src/main.ts"]
