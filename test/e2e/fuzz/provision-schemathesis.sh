#!/usr/bin/env bash
# Creates (once) a Python venv with schemathesis from PyPI, cached next to the other e2e tools
# (/var/cache/forewarn-e2e, else $XDG_CACHE_HOME/forewarn-e2e), and prints the path of its `st`
# command as FOREWARN_SCHEMATHESIS=<path>. A half-built venv (no .complete marker) is rebuilt.
set -euo pipefail
readonly VERSION="${FOREWARN_SCHEMATHESIS_VERSION:-4.32.5}"
cache_root="${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}"
if ! mkdir -p "$cache_root" 2>/dev/null || [[ ! -w $cache_root ]]; then
  cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/forewarn-e2e"
  mkdir -p "$cache_root"
fi
venv="$cache_root/venv-schemathesis-$VERSION"
if [[ ! -f $venv/.complete ]]; then
  echo "installing schemathesis $VERSION into $venv (PyPI)" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$VERSION" >&2
  touch "$venv/.complete"
fi
echo "FOREWARN_SCHEMATHESIS=$venv/bin/st"
