# syntax=docker/dockerfile:1
# Build stage: the full Node image has python3, make and g++ for better-sqlite3's native module.
# It installs every dependency (tsc, tsx, esbuild and Preact are dev dependencies), type-checks
# src/ and scripts/, bundles the service into dist/main.js and the operator scripts into
# dist/scripts/ (esbuild) with the console's files, then drops the dev dependencies again.
FROM node:26-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci && npm cache clean --force
COPY tsconfig.json schema.sql ./
COPY src ./src
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev

# Run stage: slim image, production dependencies only, non-root, data on a volume.
FROM node:26-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_PATH=/app/data/service.db \
    LITESTREAM=off \
    LITESTREAM_CONFIG=/app/litestream.yml
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
# The service and the operator scripts run the bundled JavaScript: no sources, no TypeScript loader,
# no bundler in this image.
COPY --from=build /app/dist ./dist
# dist/main.js finds schema.sql, migrations/ (applied at every start) and package.json one level up;
# better-sqlite3, pdfjs-dist and swagger-ui-dist stay in node_modules/ (native code, files of their own),
# and so does yaml, which a worker thread loads from there to read an OpenAPI spec written in YAML.
COPY package.json schema.sql litestream.yml ./
COPY migrations ./migrations
# The entry point, and what the operator scripts' npm scripts run (docker exec <container> npm run
# backup -- /app/data/backup.db, see docs/operations.md): without sources here, it runs dist/scripts/<name>.js.
COPY scripts/docker-entrypoint.sh scripts/operator.js ./scripts/
# Litestream (LITESTREAM=on) is the binary inside the npm package @flydotio/litestream-linux-x64,
# an optional dependency: the registry has no other Linux build of it, so an arm64 image has none.
RUN bin="/app/node_modules/@flydotio/litestream-linux-$(node -p process.arch)/litestream"; \
    if [ -x "$bin" ]; then ln -s "$bin" /usr/local/bin/litestream && litestream version; \
    else echo "no Litestream binary for linux-$(node -p process.arch): LITESTREAM=on is not available in this image"; fi
# The volume holds the database, its -wal/-shm files and the secret key file (service.db.key).
RUN mkdir -p /app/data && chown node:node /app/data && chmod 700 /app/data
USER node
VOLUME ["/app/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# tini forwards SIGTERM (npm would swallow it), so shutdown is graceful. The entry point runs the
# CMD as given, or, with LITESTREAM=on, under `litestream replicate` (docs/operations.md, "Replication").
ENTRYPOINT ["/usr/bin/tini", "--", "/app/scripts/docker-entrypoint.sh"]
# The same command as `npm run start:prod` (a test keeps the two equal).
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=20", "dist/main.js"]
