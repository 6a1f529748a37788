#!/usr/bin/env bash
# The API server oracle of the fidelity tier: kube-apiserver and etcd from the end-to-end tier's tool
# cache (test/e2e/provision/build-tools.sh, only those two groups; warm in seconds). Prints
# `FOREWARN_TOOLS_BIN=<dir>` as the last line of stdout, which test/e2e/harness.ts reads.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
FOREWARN_TOOLS_ONLY="kubernetes etcd" bash test/e2e/provision/build-tools.sh | grep -E '^FOREWARN_TOOLS_BIN=' | tail -n 1
