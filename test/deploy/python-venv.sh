#!/usr/bin/env bash
# The Python side of the deploy tier: a virtualenv with Pulumi's Python SDK at the version of
# @pulumi/pulumi in package-lock.json (the same release line as the CLI), cached by version under
# $FOREWARN_E2E_CACHE/python. Prints `FOREWARN_PYTHON_VENV=<dir>` as its last stdout line.
# Warm: instant; cold: a minute or two (pip downloads pulumi, grpcio, protobuf... from PyPI; pip's own
# download cache is kept in the same directory).
set -euo pipefail
readonly TOOL_TAG=python-venv
# shellcheck source=test/deploy/tool-log.sh
source "$(dirname "${BASH_SOURCE[0]}")/tool-log.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

readonly CACHE_ROOT="${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}"

command -v python3 >/dev/null || fail "python3 is not on PATH" "install Python 3.9 or newer with venv and pip"
version=$(node -p 'require("./package-lock.json").packages["node_modules/@pulumi/pulumi"].version') ||
  fail "cannot read @pulumi/pulumi's version from package-lock.json" "run from a checkout with package-lock.json"
python_version=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
venv="$CACHE_ROOT/python/pulumi-$version-py$python_version"

if [[ ! -f $venv/.complete ]]; then
  say "creating $venv with pulumi==$version from PyPI"
  rm -rf "$venv"
  mkdir -p "$CACHE_ROOT/python"
  python3 -m venv "$venv" || fail "python3 -m venv failed" "install the venv module (Debian: apt-get install python3-venv)"
  PIP_CACHE_DIR="$CACHE_ROOT/python/pip-cache" "$venv/bin/python" -m pip install --quiet \
    --disable-pip-version-check "pulumi==$version" >&2 ||
    fail "pip install pulumi==$version failed" "check that PyPI is reachable (pip download pulumi==$version)"
  touch "$venv/.complete"
fi
echo "FOREWARN_PYTHON_VENV=$venv"
