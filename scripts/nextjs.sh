#!/usr/bin/env bash
# Builds the example Next.js app (clients/typescript/examples/next-app)
# with `next build` against a running blog, serves it with `next start`
# and checks it with e2e/nextjs.mjs: pages prerendered from the API, a
# signed webhook delivery revalidating a post's page, a preview link in
# draft mode. docs/nextjs.md follows the same steps.
#
#   DEV_TOKEN=<admin token> scripts/nextjs.sh http://127.0.0.1:8080/graphql
#
# scripts/e2e.sh runs it against the demo blog it starts, after npm ci in
# clients/typescript.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

endpoint="${1:?usage: DEV_TOKEN=... scripts/nextjs.sh ENDPOINT}"
: "${DEV_TOKEN:?DEV_TOKEN: the token of an admin}"
log() { printf 'nextjs: %s\n' "$*" >&2; }

app=clients/typescript/examples/next-app
export NEXT_TELEMETRY_DISABLED=1 BLOG_API="$endpoint"
BLOG_WEBHOOK_SECRET="whsec_$(head -c 32 /dev/urandom | base64)"
export BLOG_WEBHOOK_SECRET

work="$(mktemp -d)"
next_pid=""
stop_next() {
  if [[ -n "$next_pid" ]]; then
    kill -TERM "$next_pid" 2>/dev/null && wait "$next_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap stop_next EXIT

log "next build against $endpoint"
start=$SECONDS
(cd "$app" && ../../node_modules/.bin/next build) >"$work/build" 2>&1 || {
  cat "$work/build" >&2
  exit 1
}
log "built in $((SECONDS - start)) s"

port="$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
site="http://127.0.0.1:$port"
(cd "$app" && exec ../../node_modules/.bin/next start -H 127.0.0.1 -p "$port") >"$work/log" 2>&1 &
next_pid=$!

# next start logs "Ready" once it listens.
for _ in $(seq 600); do
  grep -q 'Ready' "$work/log" && break
  kill -0 "$next_pid" 2>/dev/null || { cat "$work/log" >&2; exit 1; }
  sleep 0.1
done
grep -q 'Ready' "$work/log" || { cat "$work/log" >&2; log "next start did not start within 60 s"; exit 1; }

log "checking $site"
node e2e/nextjs.mjs "$endpoint" "$site"
