#!/usr/bin/env bash
# Builds (once) and caches Open Policy Agent, which compiles Gatekeeper templates' Rego to Wasm for the
# controller (docs/decisions.md, "Gatekeeper Rego"); the container image builds the same version.
#   opa   github.com/open-policy-agent/opa@OPA_VERSION, package .
#
# Cache: ${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}/tools/opa-<version>/ with a BUILD-INFO
# written last (it marks the folder complete). Warm: returns at once. Cold: about 6 minutes on 2 cores
# with `go build -p 1`. The module cache is read-only, so the module directory is copied first.
# On success the LAST stdout line is:
#   FOREWARN_OPA_BIN=<path of the opa binary>
# Progress goes to stderr, the build output to a log file in the cache.
set -euo pipefail

readonly OPA_VERSION="${FOREWARN_OPA_VERSION:-v1.22.3}"
readonly CACHE_ROOT="${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}"
readonly TOOL_DIR="$CACHE_ROOT/tools/opa-$OPA_VERSION"
readonly WORK_DIR="$CACHE_ROOT/work/opa-$OPA_VERSION"
readonly LOG_DIR="$CACHE_ROOT/logs"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false

log() { printf '[build-opa %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if [[ -f $TOOL_DIR/BUILD-INFO && -x $TOOL_DIR/opa ]]; then
  printf 'FOREWARN_OPA_BIN=%s\n' "$TOOL_DIR/opa"
  exit 0
fi

if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH="/usr/local/go/bin:$PATH"; fi
command -v go >/dev/null || {
  log "ERROR: go is not on PATH; install Go >= 1.25"
  exit 1
}

mkdir -p "$LOG_DIR" "$CACHE_ROOT/work"
LOG_FILE="$LOG_DIR/build-opa-$(date -u +%Y%m%dT%H%M%SZ)-$$.log"
started=$SECONDS
log "building Open Policy Agent $OPA_VERSION (cold: about 6 min); log: $LOG_FILE"

module_json=$(go mod download -json "github.com/open-policy-agent/opa@$OPA_VERSION" 2>>"$LOG_FILE") || {
  log "ERROR: downloading github.com/open-policy-agent/opa@$OPA_VERSION failed (see $LOG_FILE)"
  exit 1
}
module_dir=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' <<<"$module_json")
[[ -d $module_dir ]] || {
  log "ERROR: no module directory in: $module_json"
  exit 1
}

rm -rf "$WORK_DIR"
mkdir -p "$WORK_DIR"
cp -r "$module_dir/." "$WORK_DIR/src"
chmod -R u+w "$WORK_DIR/src"

ldflags="-s -w -X github.com/open-policy-agent/opa/v1/version.Version=${OPA_VERSION#v}"
(cd "$WORK_DIR/src" && nice -n 10 go build -p 1 -trimpath -ldflags "$ldflags" -o "$WORK_DIR/opa" \
  . >>"$LOG_FILE" 2>&1) || {
  log "ERROR: compiling Open Policy Agent failed (see $LOG_FILE)"
  exit 1
}

rm -rf "$TOOL_DIR"
mkdir -p "$TOOL_DIR"
cp "$WORK_DIR/opa" "$TOOL_DIR/opa"
{
  printf 'tool: opa\nversion: %s\nsource: github.com/open-policy-agent/opa@%s .\n' \
    "$OPA_VERSION" "$OPA_VERSION"
  printf 'built: %s\nbuild seconds: %s\ngo: %s\nbinaries: opa\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$((SECONDS - started))" "$(go env GOVERSION)"
} >"$TOOL_DIR/BUILD-INFO"
rm -rf "$WORK_DIR"
log "built Open Policy Agent $OPA_VERSION in $((SECONDS - started))s -> $TOOL_DIR"
printf 'FOREWARN_OPA_BIN=%s\n' "$TOOL_DIR/opa"
