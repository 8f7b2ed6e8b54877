#!/usr/bin/env bash
# Runs every fuzz target for a while: cursor decoding and input validation
# (storage), global-id and preview-token decoding (graph), the checks of a document before it
# runs (gqlhttp: parsing, validation, limits, from fragment chains that once
# took exponential time), Markdown rendering and sanitizing, and what
# rendering costs for each byte of Markdown, in memory and time (markdown).
# Their seeds (f.Add and
# testdata/fuzz/) already run with every `go test`; this searches beyond
# them. A failing input is written to the package's testdata/fuzz/ and
# fails the run; commit it with the fix, as a seed.
#
# Usage: scripts/fuzz.sh [FUZZTIME]   (default 10s each; e.g. 5m, or 100000x)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fuzztime="${1:-${FUZZTIME:-10s}}"
targets=(
  "./storage FuzzDecodeCursor"
  "./storage FuzzValidate"
  "./graph FuzzDecodeID"
  "./graph FuzzOpenPreview"
  "./markdown FuzzRender"
  # Its inputs are slower to run (it measures each), so new ones are
  # minimized for a short while only.
  "./markdown FuzzRenderCost -fuzzminimizetime=2s"
  "./gqlhttp FuzzCheckDocument"
)
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
for t in "${targets[@]}"; do
  read -r pkg name extra <<<"$t"
  for attempt in 1 2 3; do
    echo "== fuzz $name ($pkg) for $fuzztime"
    # shellcheck disable=SC2086 # extra is flags, split on purpose
    if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" $extra "$pkg" 2>&1 | tee "$out"; then
      break
    fi
    # Go's fuzzing engine sometimes ends a run whose time is up with
    # "context deadline exceeded" while a worker still answers, having
    # found nothing (more often on FuzzRenderCost, whose inputs take up to
    # a second each): that run, and only that, is tried again, up to
    # three runs. A failing input is always a failure.
    if [[ $attempt == 3 ]] || grep -q 'Failing input written' "$out" || ! grep -q '^    context deadline exceeded$' "$out"; then
      exit 1
    fi
    echo "== $name: the fuzzing engine timed out with nothing found; again"
  done
done
