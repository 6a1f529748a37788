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

readonly RESULTS_JSON="${FOREWARN_E2E_JSON:-}"
readonly JEST_TIME_LIMIT="${FOREWARN_E2E_JEST_TIME_LIMIT:-600}"
tier_start=$SECONDS

say() { printf '[e2e %4ss] %s\n' "$((SECONDS - tier_start))" "$*"; }

# A jest-shaped results file with one failed test named after the step that failed.
write_failure_results() { # step message
  [[ -n $RESULTS_JSON ]] || return 0
  STEP="$1" MESSAGE="$2" OUTPUT="$RESULTS_JSON" node -e '
    const fs = require("node:fs");
    const { STEP: step, MESSAGE: message, OUTPUT: output } = process.env;
    fs.writeFileSync(output, JSON.stringify({
      success: false, numTotalTests: 1, numPassedTests: 0, numFailedTests: 1,
      numRuntimeErrorTestSuites: 0, numTotalTestSuites: 1, numFailedTestSuites: 1,
      testResults: [{ name: "test/e2e (" + step + ")", status: "failed", message,
        assertionResults: [{ title: step, fullName: "e2e " + step, status: "failed", failureMessages: [message] }] }],
    }, null, 2));
  '
}

say "end-to-end tier: etcd + kube-apiserver + kube-controller-manager on loopback (docs/e2e.md)"
if [[ -n $RESULTS_JSON ]]; then rm -f "$RESULTS_JSON"; fi

say "step 1/2: provisioning binaries (test/e2e/provision/build-tools.sh)"
provision_start=$SECONDS
if ! provision_output=$(FOREWARN_TOOLS_ONLY="kubernetes etcd" bash test/e2e/provision/build-tools.sh); then
  message="provisioning the e2e binaries failed (see the ERROR and 'What to do' lines above)"
  say "FAILED: $message"
  write_failure_results provisioning "$message"
  exit 1
fi
bin_dir=$(sed -n 's/^FOREWARN_TOOLS_BIN=//p' <<<"$provision_output" | tail -n 1)
export FOREWARN_TOOLS_BIN="$bin_dir"
say "provisioning done in $((SECONDS - provision_start))s: binaries in $bin_dir"
if [[ -f $bin_dir/BUILD-INFO ]]; then sed 's/^/        /' "$bin_dir/BUILD-INFO"; fi

say "step 2/2: jest -c test/e2e/jest.config.js --runInBand (time limit ${JEST_TIME_LIMIT}s)"
jest_args=(-c test/e2e/jest.config.js --runInBand)
if [[ -n $RESULTS_JSON ]]; then jest_args+=(--json "--outputFile=$RESULTS_JSON"); fi
jest_bin=node_modules/.bin/jest
if [[ ! -x $jest_bin ]]; then
  say "FAILED: $jest_bin is missing: run 'npm ci' first"
  write_failure_results jest "$jest_bin is missing (npm ci not run)"
  exit 1
fi
jest_start=$SECONDS
jest_status=0
# jest runs as timeout's direct child (not behind npx) so the limit really stops it; --foreground keeps
# Ctrl-C working in a terminal. Clusters of a killed run are stopped by their watchdog.
timeout --foreground --kill-after=30 "$JEST_TIME_LIMIT" "$jest_bin" "${jest_args[@]}" "$@" || jest_status=$?
say "jest finished with exit code $jest_status in $((SECONDS - jest_start))s"

if ((jest_status == 124)); then
  write_failure_results "time limit" "the e2e jest run exceeded ${JEST_TIME_LIMIT}s and was killed"
elif [[ -n $RESULTS_JSON && ! -s $RESULTS_JSON ]]; then
  write_failure_results jest "jest exited $jest_status without writing results (global setup failed or jest crashed)"
fi
say "end-to-end tier finished in $((SECONDS - tier_start))s (exit $jest_status)"
exit "$jest_status"
