#!/usr/bin/env bash
# Builds (once) and caches gator, Gatekeeper's CLI: the oracle of the fidelity tier's Gatekeeper comparison.
#   gator   github.com/open-policy-agent/gatekeeper/v3@GATOR_VERSION, package ./cmd/gator
#
# Cache: ${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}/tools/gator-<version>/ with a BUILD-INFO
# written last (it marks the folder complete). Warm: returns at once. Cold: about 15 minutes on 2 cores
# with `go build -p 1`. The module cache is read-only, so the module directory is copied first.
# On success the LAST stdout line is:
#   FOREWARN_GATOR_BIN=<path of the gator binary>
# Progress goes to stderr, the build output to a log file in the cache.
set -euo pipefail

readonly GATOR_VERSION="${FOREWARN_GATOR_VERSION:-v3.23.1}"
readonly CACHE_ROOT="${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}"
readonly TOOL_DIR="$CACHE_ROOT/tools/gator-$GATOR_VERSION"
readonly WORK_DIR="$CACHE_ROOT/work/gator-$GATOR_VERSION"
readonly LOG_DIR="$CACHE_ROOT/logs"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false

log() { printf '[build-gator %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if [[ -f $TOOL_DIR/BUILD-INFO && -x $TOOL_DIR/gator ]]; then
  printf 'FOREWARN_GATOR_BIN=%s\n' "$TOOL_DIR/gator"
  exit 0
fi

if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH="/usr/local/go/bin:$PATH"; fi
command -v go >/dev/null || {
  log "ERROR: go is not on PATH; install Go >= 1.25"
  exit 1
}

mkdir -p "$LOG_DIR" "$CACHE_ROOT/work"
LOG_FILE="$LOG_DIR/build-gator-$(date -u +%Y%m%dT%H%M%SZ)-$$.log"
started=$SECONDS
log "building gator $GATOR_VERSION (cold: about 15 min); log: $LOG_FILE"

module_json=$(go mod download -json "github.com/open-policy-agent/gatekeeper/v3@$GATOR_VERSION" 2>>"$LOG_FILE") || {
  log "ERROR: downloading github.com/open-policy-agent/gatekeeper/v3@$GATOR_VERSION failed (see $LOG_FILE)"
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

ldflags="-s -w -X github.com/open-policy-agent/gatekeeper/v3/pkg/version.Version=$GATOR_VERSION"
(cd "$WORK_DIR/src" && nice -n 10 go build -p 1 -trimpath -ldflags "$ldflags" -o "$WORK_DIR/gator" \
  ./cmd/gator >>"$LOG_FILE" 2>&1) || {
  log "ERROR: compiling gator failed (see $LOG_FILE)"
  exit 1
}

rm -rf "$TOOL_DIR"
mkdir -p "$TOOL_DIR"
cp "$WORK_DIR/gator" "$TOOL_DIR/gator"
{
  printf 'tool: gator\nversion: %s\nsource: github.com/open-policy-agent/gatekeeper/v3@%s ./cmd/gator\n' \
    "$GATOR_VERSION" "$GATOR_VERSION"
  printf 'built: %s\nbuild seconds: %s\ngo: %s\nbinaries: gator\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$((SECONDS - started))" "$(go env GOVERSION)"
} >"$TOOL_DIR/BUILD-INFO"
rm -rf "$WORK_DIR"
log "built gator $GATOR_VERSION in $((SECONDS - started))s -> $TOOL_DIR"
printf 'FOREWARN_GATOR_BIN=%s\n' "$TOOL_DIR/gator"
