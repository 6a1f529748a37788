#!/usr/bin/env bash
# The end-to-end tier (`npm run test:e2e`; .ci/run calls it after `npm test`). See docs/e2e.md.
#   1. provision: build or verify the cached Kubernetes binaries and etcd (build-tools.sh, only the
#      groups this tier needs: kubernetes etcd)
#   2. jest -c test/e2e/jest.config.js --runInBand; each test file starts its own etcd, API server and
#      controller-manager
# FOREWARN_E2E_JSON=<path>: jest writes its --json results there. When the tier fails before jest can
# write them (provisioning impossible, jest crashed), a results file with one failure is written so
# CI's count never looks green. Extra arguments are passed to jest (e.g. a test name pattern).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

readonly TIER=e2e
readonly RESULTS_JSON="${FOREWARN_E2E_JSON:-}"
readonly JEST_TIME_LIMIT="${FOREWARN_E2E_JEST_TIME_LIMIT:-600}"
# shellcheck source=test/e2e/tier-runner.sh
source test/e2e/tier-runner.sh

say "end-to-end tier: etcd + kube-apiserver + kube-controller-manager on loopback (docs/e2e.md)"
if [[ -n $RESULTS_JSON ]]; then rm -f "$RESULTS_JSON"; fi

say "step 1/2: provisioning binaries (test/e2e/provision/build-tools.sh)"
provision_start=$SECONDS
provision_output=$(FOREWARN_TOOLS_ONLY="kubernetes etcd" bash test/e2e/provision/build-tools.sh) ||
  give_up provisioning "provisioning the e2e binaries failed (see the ERROR and 'What to do' lines above)"
bin_dir=$(sed -n 's/^FOREWARN_TOOLS_BIN=//p' <<<"$provision_output" | tail -n 1)
export FOREWARN_TOOLS_BIN="$bin_dir"
say "provisioning done in $((SECONDS - provision_start))s: binaries in $bin_dir"
if [[ -f $bin_dir/BUILD-INFO ]]; then sed 's/^/        /' "$bin_dir/BUILD-INFO"; fi

say "step 2/2: jest (clusters of a killed run are stopped by their watchdog)"
run_jest_tier test/e2e/jest.config.js "$JEST_TIME_LIMIT" "$@"
say "end-to-end tier finished in $((SECONDS - tier_start))s (exit $jest_status)"
exit "$jest_status"
