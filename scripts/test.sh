#!/usr/bin/env bash
# Runs every test twice: on the embedded engine, then on DynamoDB Local
# (installed and started by scripts/dynamodb-local.sh, stopped afterwards).
# Extra arguments go to `go test`, e.g. scripts/test.sh -run Pagination.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# tests/ takes about 9 minutes with the race detector on DynamoDB Local,
# near go test's default limit of 10 minutes a package: the limit is 30.
timeout=30m

echo "== go test on the embedded engine"
env -u DYNAMODB_ENDPOINT go test -race -count=1 -timeout "$timeout" "$@" ./...

echo "== go test on DynamoDB Local"
port="${DYNAMODB_LOCAL_PORT:-8765}"
scripts/dynamodb-local.sh run "$port" -- env REQUIRE_DYNAMODB=1 go test -race -count=1 -timeout "$timeout" "$@" ./...
