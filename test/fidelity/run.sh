#!/usr/bin/env bash
# The fidelity tier (`npm run test:fidelity`; .ci/run calls it after the deploy tier): Forewarn's
# verdict engines compared with the real engines they model, each real engine a Go-built oracle.
#   1. oracles: every test/fidelity/build-<oracle>.sh builds (or finds cached) its tool and prints
#      `FOREWARN_<ORACLE>_BIN=<dir>` as its last line, exported for the tests
#   2. jest -c test/fidelity/jest.config.js --runInBand
# FOREWARN_FIDELITY_JSON=<path>: jest writes its --json results there; when the tier fails before jest
# can, a results file with one failed test is written instead, so CI's count never looks green.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

readonly TIER=fidelity
readonly RESULTS_JSON="${FOREWARN_FIDELITY_JSON:-}"
readonly JEST_TIME_LIMIT="${FOREWARN_FIDELITY_JEST_TIME_LIMIT:-600}"
# shellcheck source=test/e2e/tier-runner.sh
source test/e2e/tier-runner.sh

if [[ -n $RESULTS_JSON ]]; then rm -f "$RESULTS_JSON"; fi
say "fidelity tier: Forewarn's engines against the real ones (docs/e2e.md)"

say "step 1/2: oracles"
for build_script in test/fidelity/build-*.sh; do
  [[ -f $build_script ]] || continue
  oracle_start=$SECONDS
  output=$(bash "$build_script") || give_up oracles "$build_script failed (see its ERROR and 'What to do' lines above)"
  assignment=$(tail -n 1 <<<"$output")
  [[ $assignment == FOREWARN_*_BIN=* ]] || give_up oracles "$build_script did not print FOREWARN_<ORACLE>_BIN=<dir> last"
  export "${assignment?}"
  say "$build_script done in $((SECONDS - oracle_start))s: $assignment"
done

say "step 2/2: jest"
run_jest_tier test/fidelity/jest.config.js "$JEST_TIME_LIMIT" "$@"
say "fidelity tier finished in $((SECONDS - tier_start))s (exit $jest_status)"
exit "$jest_status"
