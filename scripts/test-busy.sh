#!/usr/bin/env bash
# Runs scripts/test.sh RUNS times in a row (default 1) beside two CPU hogs
# (`yes > /dev/null`), as on a busy machine: a test that passes only on an
# idle one fails here. The hogs are stopped on exit. Extra arguments go to
# scripts/test.sh.
#
#   scripts/test-busy.sh 3            three runs of the suite
#   scripts/test-busy.sh 1 -run Live  one run of the tests matching Live
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs="${1:-1}"
shift || true
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/test-busy.sh [RUNS] [go test args...]" >&2; exit 2; }

hogs=()
stop_hogs() {
	if ((${#hogs[@]})); then
		kill "${hogs[@]}" 2>/dev/null || true
		wait "${hogs[@]}" 2>/dev/null || true
	fi
}
trap stop_hogs EXIT
for _ in 1 2; do
	yes >/dev/null &
	hogs+=("$!")
done

for ((i = 1; i <= runs; i++)); do
	echo "== run $i of $runs beside two CPU hogs"
	start=$SECONDS
	scripts/test.sh "$@"
	echo "== run $i of $runs passed in $((SECONDS - start)) s"
done
