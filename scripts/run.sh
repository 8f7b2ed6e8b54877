#!/usr/bin/env bash
# Runs the server as a new user wants it: the playground's files installed
# (so GraphiQL works without a CDN), then `go run .` with the embedded
# engine and the demo blog. Arguments go to the server (`scripts/run.sh -h`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if ! scripts/playground-assets.sh; then
  echo "run: playground files not installed; the playground will load GraphiQL from a CDN" >&2
fi
exec go run . "$@"
