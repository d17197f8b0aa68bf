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
  revert)
    # APP's last applied migrations reverted, newest first, each down() in the transaction mode
    # its class asks for: revert [--count N | --to <migration name>], one by default. Run it with
    # the image that applied them (it holds their down()); deploy/README.md "Rollback".
    shift
    [ -n "${APP:-}" ] || { echo "revert: set APP to the app whose migrations to revert" >&2; exit 2; }
    if [ ! -f "apps/${APP}/src/migrate.ts" ]; then
      echo "revert: ${APP} has no migrate.ts" >&2
      exit 2
    fi
    exec node -r @swc-node/register "apps/${APP}/src/migrate.ts" revert "$@"
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
    # Sealed values re-sealed under the current key, with the app's own configuration; one JSON
    # report, exit 1 while any is left under another key. APP=webhook-matcher (the default): the
    # signing secrets, WEBHOOK_SECRETS_KEY (ADR 0424). APP=dashboard: the accounts' API keys,
    # DASHBOARD_SECRETS_KEY (ADR 0603).
    case "${APP:-webhook-matcher}" in
      webhook-matcher) exec node -r @swc-node/register apps/webhook-matcher/src/reseal.ts ;;
      dashboard) exec node -r @swc-node/register apps/dashboard/src/reseal.ts ;;
      *) echo "reseal: APP must be webhook-matcher or dashboard" >&2; exit 2 ;;
    esac
    ;;
  *)
    exec "$@"
    ;;
esac
