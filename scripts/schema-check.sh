#!/usr/bin/env bash
# Checks schema.graphqls the way its clients see it: it passes the lint
# rules (tools/schema/graphql-schema-linter.config.js), breaks nothing that
# schema.snapshot.graphqls promised, and the TypeScript client generated
# from it (clients/typescript) still type-checks. Installs the pinned npm
# packages with npm ci first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

for dir in tools/schema clients/typescript; do
  echo "== npm ci in $dir"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
done

echo "== schema lint"
(cd tools/schema && npm run --silent lint)

echo "== breaking changes against schema.snapshot.graphqls"
if ! (cd tools/schema && npm run --silent breaking); then
  cat >&2 <<'MSG'
schema.graphqls breaks clients built against schema.snapshot.graphqls.
If the break is intended, accept it with
  cp schema.graphqls schema.snapshot.graphqls
and commit the snapshot with the change.
MSG
  exit 1
fi

echo "== TypeScript client: codegen and tsc"
(cd clients/typescript && npm run --silent check)
