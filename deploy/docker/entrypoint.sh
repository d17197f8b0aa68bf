#!/bin/sh
# Entrypoint of the meridian image. See the Dockerfile header for the commands.
set -eu

run_ts() {
  node -r @swc-node/register "$@"
}

command="${1:-serve}"
case "$command" in
  serve)
    : "${APP:?APP must name the app to run (e.g. billing-ledger)}"
    exec node -r @swc-node/register "apps/${APP}/src/main.ts"
    ;;
  migrate)
    shift
    apps="${*:-${APP:-}}"
    [ -n "$apps" ] || { echo "migrate: name the apps (arguments) or set APP" >&2; exit 2; }
    for app in $apps; do
      if [ ! -f "apps/${app}/src/migrate.ts" ]; then
        echo "migrate: ${app} has no migrate.ts" >&2
        exit 2
      fi
      run_ts "apps/${app}/src/migrate.ts"
    done
    ;;
  load-labels)
    # audit-api's label packs (data/labels, shipped in the image) into its schema; idempotent,
    # applies audit-api's pending migrations first. Needs audit-api's DATABASE_URL.
    exec node -r @swc-node/register apps/audit-api/src/labels/load-labels.ts
    ;;
  provision)
    exec node -r @swc-node/register tools/messaging/provision.ts
    ;;
  reseal)
    # webhook-matcher's signing secrets re-sealed under the current WEBHOOK_SECRETS_KEY (ADR
    # 0424); needs webhook-matcher's configuration. One JSON report; exit 1 while any is left.
    exec node -r @swc-node/register apps/webhook-matcher/src/reseal.ts
    ;;
  *)
    exec "$@"
    ;;
esac
