#!/usr/bin/env bash
# The deploy tier (`npm run test:deploy`; .ci/run calls it after the e2e tier). See docs/e2e.md.
#   1. tools: the Pulumi CLI, both providers, kwok and Kubernetes from test/e2e/provision/build-tools.sh
#      (all required: one that fails to build fails the tier); the test
#      language host (build-langhost.sh); a virtualenv with Pulumi's Python SDK (python-venv.sh)
#   2. jest -c test/deploy/jest.config.js --runInBand: `pulumi up` of the repository's stack and of
#      examples/python on a fresh cluster each file
# FOREWARN_DEPLOY_JSON=<path>: jest writes its --json results there; when the tier fails before jest
# can, a results file with one failed test is written instead, so CI's count never looks green.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

readonly TIER=deploy
readonly RESULTS_JSON="${FOREWARN_DEPLOY_JSON:-}"
readonly JEST_TIME_LIMIT="${FOREWARN_DEPLOY_JEST_TIME_LIMIT:-1500}"
# shellcheck source=test/e2e/tier-runner.sh
source test/e2e/tier-runner.sh
last_value() { sed -n "s/^$1=//p" <<<"$2" | tail -n 1; }

if [[ -n $RESULTS_JSON ]]; then rm -f "$RESULTS_JSON"; fi
say "deploy tier: pulumi up of the component on a current kube-apiserver (docs/e2e.md)"
[[ -f dist/infra/stack.js && -f dist/services/webhook/main.js ]] ||
  give_up build "dist/ is missing: run 'npm run build' first (npm test does)"

say "step 1/2: tools"
tools_script=test/e2e/provision/build-tools.sh
[[ -f $tools_script ]] || give_up tools "$tools_script is missing"
# Every tool is required: a tool that does not build fails the tier (build-tools.sh's ERROR line names
# the module), never a silent skip.
tools_output=$(bash "$tools_script") ||
  give_up tools "$tools_script could not build every tool the deploy tier needs (its ERROR lines above name the module, and 'What to do')"
tools_bin=$(last_value FOREWARN_TOOLS_BIN "$tools_output")
for tool in pulumi kube-apiserver kube-controller-manager kubectl etcd pulumi-resource-kubernetes pulumi-resource-tls kwok; do
  [[ -x $tools_bin/$tool ]] || give_up tools "$tools_bin/$tool is missing (build-tools.sh did not provide it)"
done
langhost_output=$(bash test/deploy/build-langhost.sh) || give_up tools "test/deploy/build-langhost.sh failed"
langhost_bin=$(last_value FOREWARN_LANGHOST_BIN "$langhost_output")
venv_output=$(bash test/deploy/python-venv.sh) || give_up tools "test/deploy/python-venv.sh failed"
export FOREWARN_PYTHON_VENV
FOREWARN_PYTHON_VENV=$(last_value FOREWARN_PYTHON_VENV "$venv_output")
export FOREWARN_TOOLS_BIN="$tools_bin" FOREWARN_DEPLOY_PATH="$tools_bin:$langhost_bin"
say "tools: $tools_bin, language host: $langhost_bin, python: $FOREWARN_PYTHON_VENV"
say "pulumi $("$tools_bin/pulumi" version 2>/dev/null || echo '?')"

say "step 2/2: jest"
run_jest_tier test/deploy/jest.config.js "$JEST_TIME_LIMIT" "$@"
say "deploy tier finished in $((SECONDS - tier_start))s (exit $jest_status)"
exit "$jest_status"
