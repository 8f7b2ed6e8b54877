#!/usr/bin/env bash
# Installs the files of the GraphiQL playground, so that the server serves
# them itself instead of loading them from a CDN.
#
# Usage: scripts/playground-assets.sh [DIR]
#
# DIR defaults to <repo>/.cache/playground, where the server looks by default
# (-playground-assets, PLAYGROUND_ASSETS), also when started from another
# directory; <data directory>/playground and .cache/playground beside the
# executable are found too (README.md, "Run it", lists the order). The files
# come from the npm packages gqlgen's playground page pins (graphiql with
# react and react-dom, and the explorer plugin), fetched with `npm pack` so that none of their
# dependencies is installed, and laid out like the npm CDN:
# DIR/<package>@<version>/<file>. The server checks every file's hash when
# it starts (playground/playground.go lists them) and says in its log whether it
# serves them or falls back to the CDN. Installing again is a no-op.
set -euo pipefail

# package@version, then the files of the package the page loads.
readonly ASSETS=(
  "graphiql@4.1.2 graphiql.min.js graphiql.min.css"
  "react@18.2.0 umd/react.production.min.js"
  "react-dom@18.2.0 umd/react-dom.production.min.js"
  "@graphiql/plugin-explorer@4.0.6 dist/index.umd.js dist/style.css"
)

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$REPO_ROOT/.cache/playground}"

log() { printf 'playground-assets: %s\n' "$*" >&2; }

installed=true
for entry in "${ASSETS[@]}"; do
  read -r pkg files <<<"$entry"
  for f in $files; do
    [[ -f "$DIR/$pkg/$f" ]] || installed=false
  done
done
if $installed; then
  log "already installed in $DIR"
  exit 0
fi
command -v npm >/dev/null 2>&1 || { log "error: npm not found"; exit 1; }

# Build the directory beside DIR and rename it into place, so that an
# interrupted install leaves no half-written file behind.
mkdir -p "$(dirname "$DIR")"
tmp="$(mktemp -d "$(dirname "$DIR")/.playground-assets.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
for entry in "${ASSETS[@]}"; do
  read -r pkg files <<<"$entry"
  log "fetching $pkg"
  mkdir -p "$tmp/npm/$pkg"
  tarball="$(cd "$tmp/npm/$pkg" && npm pack --silent --loglevel=error "$pkg")"
  tar -xzf "$tmp/npm/$pkg/$tarball" -C "$tmp/npm/$pkg"
  for f in $files; do
    mkdir -p "$(dirname "$tmp/out/$pkg/$f")"
    cp "$tmp/npm/$pkg/package/$f" "$tmp/out/$pkg/$f"
  done
done
rm -rf "$DIR"
mv "$tmp/out" "$DIR"
log "installed in $DIR"
