#!/usr/bin/env bash
# Checks the running server from the outside, as its users' tools see it:
#
#   - the GraphQL over HTTP audit suite of graphql-http (e2e/audit.mjs);
#   - subscriptions with the npm graphql-ws and graphql-sse clients
#     (e2e/live.mjs): comments added through mutations arrive, and a client
#     that reconnects with its last cursor gets the missed ones in order;
#   - a browser's own EventSource in headless Chromium (e2e/eventsource.mjs):
#     it subscribes with a GET, and when the stream ends it reconnects by
#     itself with Last-Event-ID and misses no comment;
#   - the GraphiQL playground in headless Chromium, with every request that
#     does not go to the server blocked (e2e/playground.mjs): its default
#     query shows the demo posts, its headers editor holds the development
#     token the server logged, its Content-Security-Policy refuses nothing
#     it needs, and the token stays out of localStorage and the address;
#     its screenshot is kept in .ci/artifacts/playground.png;
#   - the TypeScript client's request function (e2e/tsclient.mjs): its
#     reads are GETs of persisted queries, answered public, its writes
#     POSTs;
#   - the example Next.js app of clients/typescript, built with next build
#     against the demo blog and served (scripts/nextjs.sh, e2e/nextjs.mjs):
#     its pages, its webhook route revalidating a post, a preview link;
#   - the demo blog's RSS, Atom and JSON feeds of the blog, a category and
#     an author, parsed by npm feedparser and checked against JSON Feed
#     1.1 (e2e/feeds.mjs), and its sitemap's pages validated against the
#     sitemaps.org XML schema with xmllint (e2e/sitemap.mjs).
#
# It installs what it needs when missing: Debian's chromium and
# libxml2-utils (xmllint) with apt-get, as root, the Node packages of e2e/
# and clients/typescript (npm ci, versions from their package-lock.json)
# and the playground assets
# (scripts/playground-assets.sh). Then it builds the server, starts it with
# the embedded engine and the demo blog on 127.0.0.1 (a free port), runs
# the checks and stops it.
#
# Environment:
#   CHROMIUM   the browser to drive (default /usr/bin/chromium)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
export CHROMIUM
ARTIFACTS=.ci/artifacts

log() { printf 'e2e: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ ! -x "$CHROMIUM" ]]; then
  [[ "$(id -u)" == 0 ]] || die "$CHROMIUM not found: install Debian's chromium (apt-get install chromium) or set CHROMIUM"
  log "installing chromium"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

if ! command -v xmllint >/dev/null; then
  [[ "$(id -u)" == 0 ]] || die "xmllint not found: install Debian's libxml2-utils"
  log "installing xmllint"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libxml2-utils >/dev/null
fi

log "installing the Node packages of e2e/"
npm ci --prefix e2e --no-audit --no-fund --ignore-scripts --loglevel=error
log "installing the Node packages of clients/typescript"
npm ci --prefix clients/typescript --no-audit --no-fund --ignore-scripts --loglevel=error
scripts/playground-assets.sh

work="$(mktemp -d)"
server_pid=""
stop_server() {
  local rc=$?
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" && wait "$server_pid" || true
  fi
  if [[ $rc != 0 && -f "$work/log" ]]; then
    log "the server's log:"
    tail -n 50 "$work/log" >&2
  fi
  rm -rf "$work"
}
trap stop_server EXIT

log "building and starting the server"
go build -o "$work/blog" .
# A clean environment: the embedded engine with a fresh data directory and
# its development tokens, whatever the caller's DYNAMODB_*, DATA_DIR or JWT_*
# variables say. The log exists
# before the server starts, so that reading it cannot race its creation.
: >"$work/log"
env -i PATH="$PATH" "$work/blog" -host 127.0.0.1 -port 0 -log-format json -data "$work/data" \
  -playground-assets .cache/playground >>"$work/log" 2>&1 &
server_pid=$!

# The server logs its endpoint once it listens.
endpoint=""
for _ in $(seq 600); do
  endpoint="$(sed -n 's/.*"endpoint":"\([^"]*\)".*/\1/p' "$work/log" | head -n 1)"
  [[ -n "$endpoint" ]] && break
  kill -0 "$server_pid" 2>/dev/null || die "the server exited"
  sleep 0.1
done
[[ -n "$endpoint" ]] || die "the server did not start within 60 s"
endpoint="${endpoint/localhost/127.0.0.1}"
base="${endpoint%/graphql}"
grep -q 'playground assets served by this server' "$work/log" || die "the server does not serve the playground assets"
# The embedded mode logs development tokens; the playground prefills the first.
DEV_TOKEN="$(sed -n 's/.*"header":"Authorization: Bearer \([^"]*\)".*/\1/p' "$work/log" | head -n 1)"
[[ -n "$DEV_TOKEN" ]] || die "the server logged no development token"
export DEV_TOKEN

log "GraphQL over HTTP audit against $endpoint"
node e2e/audit.mjs "$endpoint"

log "the TypeScript client's requests against $endpoint"
node e2e/tsclient.mjs "$endpoint"

log "feeds parsed by feedparser at $base"
node e2e/feeds.mjs "$base"
log "sitemap validated against sitemap.xsd"
node e2e/sitemap.mjs "$base"
log "subscriptions with graphql-ws and graphql-sse against $endpoint"
node e2e/live.mjs "$endpoint"
log "EventSource in $("$CHROMIUM" --version 2>/dev/null)"
node e2e/eventsource.mjs "$endpoint"

log "playground in $("$CHROMIUM" --version 2>/dev/null)"
node e2e/playground.mjs "$base" "$ARTIFACTS/playground.png"

# Last: it edits a post's title.
log "the example Next.js app against $endpoint"
scripts/nextjs.sh "$endpoint"
