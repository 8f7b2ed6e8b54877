#!/usr/bin/env bash
# Verifies the server's webhook deliveries independently of its Go code:
# installs the Node receiver of scripts/webhook-verify (npm ci, versions
# from its package-lock.json: standardwebhooks, the Standard Webhooks
# specification's reference library), then runs the Go test that sends it
# deliveries of every event, a ping, a redelivery and messages signed by
# two secrets during a rotation; it fails if the library refuses any.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "== webhook deliveries verified by standardwebhooks (Node)"
npm ci --prefix scripts/webhook-verify --no-audit --no-fund --ignore-scripts --loglevel=error
WEBHOOK_VERIFY=1 go test -count=1 -run '^TestStandardWebhooksVerifiesEveryDelivery$' ./webhooks
