# The Nothing Store: the built pages and the auction service in one small non-root image.
#   docker build -t nothing-store .         # PUBLIC_* page settings: --build-arg, below
#   docker run -d --restart unless-stopped -p 4321:4321 -v nothing-data:/data nothing-store   # embedded PGlite
# With PostgreSQL in a container named db, both on a network of their own (`db` resolves only there):
#   docker network create nothing
#   docker run -d --restart unless-stopped --network nothing -p 4321:4321 \
#     -e DATABASE_URL=postgres://user:pass@db:5432/nothing nothing-store
# /metrics answers on port 9464 only (METRICS_PORT): reachable from the container's network (a
# Prometheus beside it), never published by the commands above. docs/settings.md lists every setting.

# The Node version pinned by package.json's `node` devDependency.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# The build letters the link preview image in DejaVu Sans (scripts/siteImages.ts); the slim image has no fonts.
RUN apt-get update && apt-get install -y --no-install-recommends fonts-dejavu-core && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc ./
RUN npm ci
COPY . .
# Every PUBLIC_* setting the build reads (README "Configuration") can be passed with --build-arg;
# a build argument is in the environment of the RUN below, where Astro reads it. Unset ones keep
# their placeholders, which the build names in a warning. tests/unit/dockerfile.test.ts keeps this
# list equal to what the build reads.
ARG PUBLIC_SITE_URL
ARG PUBLIC_REALTIME_URL
ARG PUBLIC_CONTRACT_ADDRESS
ARG PUBLIC_PAYMENT_ADDRESS
ARG PUBLIC_DONATION_ADDRESS
ARG PUBLIC_NATIVE_COIN
ARG PUBLIC_COMMUNITY_URL
ARG PUBLIC_CHART_URL
ARG PUBLIC_VIDEO_EMBED_ORIGIN
ARG PUBLIC_VIDEO_PROMO
ARG PUBLIC_VIDEO_WHEEL
ARG PUBLIC_VIDEO_FORTUNE
ARG PUBLIC_VIDEO_AUCTION
ARG PUBLIC_VIDEO_CALCULATOR
ARG PUBLIC_VIDEO_CAPTCHA
ARG PUBLIC_VIDEO_REVIEWS
ARG PUBLIC_VIDEO_DONATION
ENV ASTRO_TELEMETRY_DISABLED=1
# PGlite writes some of the template's files owner-only; the service (user node) copies it.
RUN npm run build && chmod -R a+rX node_modules/.cache/nothing-store

FROM ${NODE_IMAGE} AS runtime-deps
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# Only what runs. --omit=optional too: TypeScript (24 MB) and a TextEncoder polyfill are optional
# peers of @solana/kit's packages that dev packages require, so npm keeps them under --omit=dev
# alone; the only other optional packages are ws's native speed-ups (bufferutil, utf-8-validate),
# which ws does without: Node 24 has buffer.isUtf8, and a client's frames (4 KiB at most) are
# unmasked in plain JS. tests/container/image.test.ts checks what is left out.
RUN npm ci --omit=dev --omit=optional && npm cache clean --force

FROM ${NODE_IMAGE}
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4321 \
    METRICS_HOST=0.0.0.0 \
    METRICS_PORT=9464 \
    STATIC_DIR=/app/dist \
    DATA_DIR=/data \
    SHUTDOWN_TIMEOUT_MS=8000
COPY --from=runtime-deps /app/node_modules ./node_modules
# The build's PGlite template: a first start on an empty /data copies it instead of running initdb
# (docs/design.md#9). Read-only to the service.
COPY --from=build /app/node_modules/.cache/nothing-store ./node_modules/.cache/nothing-store
COPY package.json ./
# The service runs its TypeScript directly (Node's type stripping): the sources it imports, the migrations, the built site.
COPY service ./service
COPY sql ./sql
COPY src/lib ./src/lib
# The tiers' prices, which payment requests charge (service/payments/routes.ts).
COPY src/data/tiers.ts ./src/data/tiers.ts
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 4321 9464
# Below Docker's 10 s stop grace: SHUTDOWN_TIMEOUT_MS above leaves the drain time to finish.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4321) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "service/main.ts"]
