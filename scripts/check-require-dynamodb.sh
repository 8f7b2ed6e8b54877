#!/usr/bin/env bash
# Checks that one place decides which DynamoDB a test talks to
# (internal/dynamotest): no test reads DYNAMODB_ENDPOINT or
# REQUIRE_DYNAMODB itself, package storage does not import the embedded
# engine, even in its internal tests, and with REQUIRE_DYNAMODB=1 and no
# endpoint every harness fails with the guard's message instead of running
# on the embedded engine. One small test of each harness is run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

status=0
fail() { echo "FAIL: $*"; status=1; }

echo "== the choice of DynamoDB is made in internal/dynamotest only"
if readers=$(grep -rlE 'Getenv\("(DYNAMODB_ENDPOINT|REQUIRE_DYNAMODB)"\)' --include='*_test.go' .); then
	fail "tests that read the variables themselves: $readers"
fi

echo "== storage does not import the embedded engine"
if go list -deps ./storage | grep -qx 'github.com/blogql/blog/embedded'; then
	fail "storage imports embedded"
fi
if go list -f '{{join .TestImports "\n"}}' ./storage | grep -q 'github.com/blogql/blog/\(embedded\|internal/dynamotest\)'; then
	fail "storage's internal tests import the engine"
fi

echo "== with REQUIRE_DYNAMODB=1 and no endpoint every harness fails"
missing='REQUIRE_DYNAMODB=1 but DYNAMODB_ENDPOINT is not set'
# expect PACKAGE NAME... runs the tests or the benchmarks NAME of
# PACKAGE and checks that each fails with the guard's message.
expect() {
	local pkg=$1
	shift
	local pattern flags out
	pattern="^($(IFS='|'; echo "$*"))\$"
	case $1 in
	Benchmark*) flags=(-run '^$' -bench "$pattern" -benchtime 1x) ;;
	*) flags=(-run "$pattern") ;;
	esac
	if out=$(env -u DYNAMODB_ENDPOINT -u DYNAMODB_ENDPOINTS REQUIRE_DYNAMODB=1 go test -count=1 -v "${flags[@]}" "$pkg" 2>&1); then
		fail "$pkg passed without DynamoDB Local"
	fi
	for n in "$@"; do
		if ! grep -qE -- "--- FAIL: $n( |\$)" <<<"$out"; then
			fail "$pkg $n did not fail"
		fi
	done
	if [ "$(grep -c -- "$missing" <<<"$out")" -lt $# ]; then
		fail "$pkg: not every failure is the guard's"
		echo "$out" | tail -20
	fi
}
expect ./storage TestCursorsAreSealedWithTheTablesKey TestPostWriteKeepsCommentCounts
expect ./storage BenchmarkRenameCategoryWithWriters
expect ./demo TestSeed
expect ./webhooks TestDeliverySignedAsStandardWebhooks
expect ./embedded TestDiffItems
expect ./tests TestPaginationToTheEnd TestDeployTemplateMatchesTheStore TestFleetTakesOverTheFeedOfAKilledServer
expect ./cmd/bench TestOperationsKeepTheirBudgets

exit $status
