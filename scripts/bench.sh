#!/usr/bin/env bash
# Runs the load benchmark (cmd/bench) on both backends: DynamoDB Local
# (installed and started by scripts/dynamodb-local.sh on DYNAMODB_LOCAL_PORT,
# default 8765, stopped afterwards), then the embedded engine. Each run
# writes bench/results-<backend>.json and its table in BENCHMARKS.md.
# Extra arguments go to both runs, e.g. scripts/bench.sh -rounds 5;
# scripts/bench.sh -burst 200 measures the comment burst instead (200
# comments/s on one post from 16 clients for 10 s, and how soon every list
# shows the final count), into bench/burst-<backend>.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bin=".cache/bench"
mkdir -p .cache
go build -o "$bin" ./cmd/bench

echo "== benchmark on DynamoDB Local"
scripts/dynamodb-local.sh run "${DYNAMODB_LOCAL_PORT:-8765}" -- "$bin" -backend local "$@"

echo "== benchmark on the embedded engine"
env -u DYNAMODB_ENDPOINT "$bin" -backend embedded "$@"
