#!/usr/bin/env bash
# The fidelity tier (`npm run test:fidelity`; .ci/run calls it after `npm test`): Forewarn's verdicts
# compared with the real engines on the shared corpus (docs/accuracy.md).
#   1. every test/fidelity/build-<oracle>.sh builds (once, into the tool cache) or finds its oracle and
#      prints FOREWARN_<ORACLE>_BIN=<path> as its last line; each is exported for the tests
#   2. jest -c test/fidelity/jest.config.js --runInBand
# FOREWARN_FIDELITY_JSON=<path>: jest writes its --json results there (a one-failure file when the
# tier fails before jest can). Extra arguments are passed to jest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

readonly TIER=fidelity
readonly RESULTS_JSON="${FOREWARN_FIDELITY_JSON:-}"
readonly JEST_TIME_LIMIT="${FOREWARN_FIDELITY_JEST_TIME_LIMIT:-900}"
# shellcheck source=test/e2e/tier-runner.sh
source test/e2e/tier-runner.sh

say "fidelity tier: Forewarn's verdicts against the real engines (docs/accuracy.md)"
if [[ -n $RESULTS_JSON ]]; then rm -f "$RESULTS_JSON"; fi

say "step 1/2: oracles (test/fidelity/build-*.sh)"
for build in test/fidelity/build-*.sh; do
  [[ -f $build ]] || continue
  started=$SECONDS
  output=$(bash "$build") || give_up "$(basename "$build" .sh)" "$build failed (see its log lines above)"
  line=$(grep -E '^FOREWARN_[A-Z_]+_BIN=' <<<"$output" | tail -n 1) ||
    give_up "$(basename "$build" .sh)" "$build printed no FOREWARN_<ORACLE>_BIN line"
  export "${line?}"
  say "$(basename "$build"): ${line} ($((SECONDS - started))s)"
done

say "step 2/2: jest"
run_jest_tier test/fidelity/jest.config.js "$JEST_TIME_LIMIT" "$@"
say "fidelity tier finished in $((SECONDS - tier_start))s (exit $jest_status)"
exit "$jest_status"
