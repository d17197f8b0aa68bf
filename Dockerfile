# syntax=docker/dockerfile:1
# One image for every meridian app. The app is chosen at run time by APP (default from the
# APP build arg), and the command selects what to run (deploy/docker/entrypoint.sh):
#   serve (default)      node -r @swc-node/register apps/$APP/src/main.ts
#   migrate [app…]       each app's apps/<app>/src/migrate.ts in turn (default: $APP)
#   revert [--count N | --to <migration>]
#                        $APP's last applied migrations reverted, newest first (one by default)
#   load-labels          audit-api's label packs (data/labels) into its schema
#   provision            tools/messaging/provision.ts (JetStream streams and consumers)
#   reseal               sealed values under the current key: APP=webhook-matcher (default) its
#                        signing secrets (ADR 0424), APP=dashboard the accounts' API keys (0603)
# Apps run from TypeScript source through @swc-node/register, so the only build step is the
# dashboard's web page (vite), and the dev dependencies (swc, typescript, vite) are runtime or
# build needs: `npm install` installs them (not `npm ci`: the lockfile holds only the Linux
# builds of per-platform packages, docs/adr/0001).
#
#   docker build -t meridian .                       # generic image, APP set per container
#   docker build --build-arg APP=rpc-gateway -t meridian-rpc-gateway .
#   docker build --build-arg MERIDIAN_COMMIT=$(git rev-parse HEAD) -t meridian .  # its commit
# Node 24 LTS (maintained to 2028-04-30; Node 20 ended 2026-04-30): the oldest line that meets
# every installed package's `engines` (@nats-io/nuid 3 and content-disposition 3 need >= 22,
# @napi-rs/wasm-runtime >= 22.13). Pinned by tag to the major and the Debian release, so neither
# moves under a rebuild; patch releases come with one. CI tests on Node 20 (docs/adr/0001).
FROM node:24-trixie-slim

ARG APP=""
ENV APP=${APP} \
    HTTP_HOST=0.0.0.0 \
    HTTP_PORT=8080 \
    GRPC_PORT=9090 \
    SWC_NODE_CACHE_DIR=/tmp/swc-node \
    NPM_CONFIG_UPDATE_NOTIFIER=false

WORKDIR /app

# Dependencies first so source edits reuse the layer. NODE_ENV stays unset here: with
# NODE_ENV=production `npm install` would omit the dev dependencies the apps run with.
COPY package.json package-lock.json .npmrc ./
RUN npm install --no-audit --no-fund && npm cache clean --force

COPY . .
RUN chmod 0755 deploy/docker/entrypoint.sh
# The dashboard's page (React, vite) into dist/apps/dashboard-web, where the dashboard serves it
# from (its DEFAULT_WEB_DIST; .dockerignore keeps a local dist/ out of the context).
RUN node node_modules/vite/bin/vite.js build --config apps/dashboard/web/vite.config.mts --logLevel warn \
 && test -f dist/apps/dashboard-web/index.html

# The commit the image is built from (.git is not in the context, so the build is told):
#   docker build --build-arg MERIDIAN_COMMIT=$(git rev-parse HEAD) -t meridian .
# Every app names it, with the root package.json's version, in meridian_build_info on /metrics,
# on /healthz and on its start line; "unknown" when not given. Declared this late so a new
# commit reuses every layer above.
ARG MERIDIAN_COMMIT=""
ENV MERIDIAN_COMMIT=${MERIDIAN_COMMIT}

ENV NODE_ENV=production
# Numeric user (the image's `node` user) so Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE 8080 9090

# Liveness of the HTTP server; one-shot commands (migrate, provision) disable it in compose.
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.HTTP_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/app/deploy/docker/entrypoint.sh"]
CMD ["serve"]
