#!/usr/bin/env bash
# Runs the tests on both backends: every package with the race detector on
# the embedded engine, then the packages whose tests talk to DynamoDB on
# DynamoDB Local (installed and started by scripts/dynamodb-local.sh,
# stopped afterwards), then the media library's tests on s3rver, an S3
# server apart from the embedded store (scripts/s3rver.sh). Extra arguments go to `go test`, e.g.
# scripts/test.sh -run Pagination.
#
#   scripts/test.sh          the suite, both backends (12 to 14 minutes on 2 cores)
#   scripts/test.sh -long    the long runs only (load, soak, crash, fleet:
#                            the tests that call longtest.Skip), both
#                            backends, as the suite (CI runs it)
#
# The DynamoDB Local passes run without the race detector: it would check
# the same code as the embedded pass, which has it on, more slowly.
# RACE_ON_DYNAMODB=1 turns it on there too.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# tests/ takes about 3 minutes, and 13 beside two CPU hogs on a machine
# already busy, past go test's default limit of 10 minutes a package:
# the limit is 30.
timeout=30m
port="${DYNAMODB_LOCAL_PORT:-8765}"
s3port="${S3RVER_PORT:-8766}"
# Four DynamoDB Locals, the tests spread over them by name
# (internal/dynamotest/endpoint): each does its queries in one thread, and
# its writes to tables with a stream slow down as the stream records of
# every table it had add up.
ports="${DYNAMODB_LOCAL_PORTS:-$port,$((port + 1000)),$((port + 2000)),$((port + 3000))}"
race=()
if [[ "${RACE_ON_DYNAMODB:-}" == "1" ]]; then
	race=(-race)
fi

# The tests' temporary directories (t.TempDir, the data directories of
# the servers they start) on tmpfs when it has room and runs programs:
# the embedded engine on a data directory syncs the file at each commit,
# and a sync on a busy disk takes tens of milliseconds (TestCheckCommand
# took two to three times as long on disk). go build keeps its work
# directory where it was. Without tmpfs (or where it runs no programs, as
# a container's small /dev/shm) they stay where they were.
if [[ -d /dev/shm && -w /dev/shm ]] &&
	(($(df -Pk /dev/shm | awk 'NR == 2 { print $4 }') > 4 * 1024 * 1024)) &&
	shm=$(mktemp -d /dev/shm/blog-test.XXXXXX); then
	trap 'rm -rf "$shm"' EXIT
	if printf '#!/bin/sh\n' >"$shm/probe" && chmod +x "$shm/probe" && "$shm/probe" 2>/dev/null; then
		export GOTMPDIR="${GOTMPDIR:-${TMPDIR:-/tmp}}" TMPDIR="$shm"
	fi
	rm -f "$shm/probe"
fi

# The packages whose tests run on the DynamoDB internal/dynamotest
# chooses: the others test the same thing on either backend.
backend_packages() {
	go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
		awk '/ github.com\/blogql\/blog\/internal\/dynamotest(\/endpoint)?( |$)/ { print $1 }'
}

# The packages whose tests keep media in the S3 internal/s3test chooses.
s3_packages() {
	go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
		awk '/ github.com\/blogql\/blog\/internal\/s3test( |$)/ { print $1 }'
}

if [[ "${1:-}" == "-long" ]]; then
	shift
	# The long tests are the Test functions whose body calls longtest.Skip.
	files=$(git ls-files -co --exclude-standard '*_test.go' | xargs grep -l 'longtest\.Skip(' || true)
	if [[ -z "$files" ]]; then
		echo "no long test found (no test calls longtest.Skip)" >&2
		exit 1
	fi
	# shellcheck disable=SC2086
	names=$(awk 'FNR == 1 { fn = "" }
		/^func Test[A-Za-z0-9_]*\(/ { fn = $2; sub(/\(.*/, "", fn) }
		/longtest\.Skip\(/ { if (fn == "") { print "longtest.Skip outside a Test function: " FILENAME ":" FNR > "/dev/stderr"; exit 1 } print fn }' $files | sort -u)
	pattern="^($(echo "$names" | paste -sd '|'))\$"
	# shellcheck disable=SC2086
	packages=$(for f in $files; do echo "./$(dirname "$f")"; done | sort -u)
	echo "== long tests: $(echo "$names" | paste -sd ' ')"
	echo "== long tests on the embedded engine"
	# shellcheck disable=SC2086
	env -u DYNAMODB_ENDPOINT -u DYNAMODB_ENDPOINTS BLOG_LONG=1 go test -race -count=1 -timeout "$timeout" -run "$pattern" "$@" $packages
	echo "== long tests on DynamoDB Local"
	# shellcheck disable=SC2086
	scripts/dynamodb-local.sh run "$ports" -- env BLOG_LONG=1 REQUIRE_DYNAMODB=1 \
		go test "${race[@]}" -count=1 -timeout "$timeout" -run "$pattern" "$@" $packages
	exit 0
fi

# go test runs packages at once in the order given: tests/ and
# storage/, the longest, start first, beside the others, not after them.
# Four at once, not go test's default of one a CPU: the longest
# packages' tests wait on servers, timers and DynamoDB Local more than
# they compute (two at a time kept 1.5 of 2 cores busy). The DynamoDB
# Local pass, whose CPU goes to DynamoDB Local, takes as long either way.
first=(./tests ./storage)
at_once=(-p "${TEST_PACKAGES_AT_ONCE:-4}")

echo "== go test -race on the embedded engine"
env -u DYNAMODB_ENDPOINT -u DYNAMODB_ENDPOINTS -u S3_ENDPOINT go test "${at_once[@]}" -race -count=1 -timeout "$timeout" "$@" "${first[@]}" ./...

echo "== go test ${race[*]:+${race[*]} }on DynamoDB Local"
# shellcheck disable=SC2046
scripts/dynamodb-local.sh run "$ports" -- env REQUIRE_DYNAMODB=1 \
	go test "${at_once[@]}" "${race[@]}" -count=1 -timeout "$timeout" "$@" "${first[@]}" $(backend_packages)

# The media library's tests (TestMedia…) on s3rver: the other tests keep
# no media.
echo "== go test -race of the media library on s3rver"
# shellcheck disable=SC2046
scripts/s3rver.sh run "$s3port" -- env REQUIRE_S3=1 \
	go test -race -count=1 -timeout "$timeout" "$@" -run '^TestMedia' $(s3_packages)
