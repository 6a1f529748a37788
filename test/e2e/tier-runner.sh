#!/usr/bin/env bash
# Sourced by the tier runners (test/e2e/run.sh, test/deploy/run.sh): their log lines, the jest-shaped
# results file written when a tier fails before jest can write its own (so CI's count never looks
# green), and jest run under a time limit. The runner sets TIER (e2e, deploy) and RESULTS_JSON (the
# path jest writes its --json results to, or empty) before sourcing it.
tier_start=$SECONDS

say() { printf '[%s %4ss] %s\n' "$TIER" "$((SECONDS - tier_start))" "$*"; }

# A jest-shaped results file with one failed test named after the step that failed.
write_failure_results() { # step message
  [[ -n $RESULTS_JSON ]] || return 0
  STEP="$1" MESSAGE="$2" OUTPUT="$RESULTS_JSON" TIER_NAME="$TIER" node -e '
    const fs = require("node:fs");
    const { STEP: step, MESSAGE: message, OUTPUT: output, TIER_NAME: tier } = process.env;
    fs.writeFileSync(output, JSON.stringify({
      success: false, numTotalTests: 1, numPassedTests: 0, numFailedTests: 1,
      numRuntimeErrorTestSuites: 0, numTotalTestSuites: 1, numFailedTestSuites: 1,
      testResults: [{ name: "test/" + tier + " (" + step + ")", status: "failed", message,
        assertionResults: [{ title: step, fullName: tier + " " + step, status: "failed", failureMessages: [message] }] }],
    }, null, 2));
  '
}

give_up() { # step message
  say "FAILED: $2"
  write_failure_results "$1" "$2"
  exit 1
}

# jest -c CONFIG --runInBand [ARGS...], killed after TIME_LIMIT seconds; sets jest_status. jest runs
# as timeout's direct child (not behind npx) so the limit really stops it; --foreground keeps Ctrl-C
# working in a terminal.
run_jest_tier() { # config time_limit [jest arguments...]
  local config=$1 time_limit=$2
  shift 2
  local jest_bin=node_modules/.bin/jest
  [[ -x $jest_bin ]] || give_up jest "$jest_bin is missing (npm ci not run)"
  local jest_args=(-c "$config" --runInBand)
  if [[ -n $RESULTS_JSON ]]; then jest_args+=(--json "--outputFile=$RESULTS_JSON"); fi
  say "jest -c $config --runInBand (time limit ${time_limit}s)"
  local jest_start=$SECONDS
  jest_status=0
  timeout --foreground --kill-after=30 "$time_limit" "$jest_bin" "${jest_args[@]}" "$@" || jest_status=$?
  say "jest finished with exit code $jest_status in $((SECONDS - jest_start))s"
  if ((jest_status == 124)); then
    write_failure_results "time limit" "the $TIER jest run exceeded ${time_limit}s and was killed"
  elif [[ -n $RESULTS_JSON && ! -s $RESULTS_JSON ]]; then
    write_failure_results jest "jest exited $jest_status without writing results (global setup failed or jest crashed)"
  fi
}
