#!/usr/bin/env bash
# Builds the CEL cost oracle (test/fidelity/cel-cost: the API server's own CEL stack from
# k8s.io/apiserver v0.34.4 and the github.com/google/cel-go it requires) into the tools cache, keyed by
# a hash of its sources, and prints `FOREWARN_CEL_COST_BIN=<dir>` as the last line of stdout. Warm:
# instant; cold: several minutes on 2 shared cores (the Kubernetes modules compile once per cache).
set -euo pipefail
say() { printf '[cel-cost] %s\n' "$*" >&2; }
fail() { say "ERROR: $1"; say "What to do: $2"; exit 1; }
cd "$(dirname "${BASH_SOURCE[0]}")/cel-cost"

readonly CACHE_ROOT="${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false

command -v go >/dev/null || fail "go is not on PATH" "install Go 1.26 (see docs/e2e.md)"
apiserver_version=$(sed -n 's#^\s*k8s.io/apiserver v\([0-9.]*\)$#\1#p' go.mod | head -n 1)
source_hash=$(cat go.mod go.sum ./*.go | sha256sum | cut -c1-12)
target="$CACHE_ROOT/tools/cel-cost-$source_hash"

if [[ ! -x $target/cel-cost ]]; then
  say "building the CEL cost oracle (k8s.io/apiserver v$apiserver_version, sources $source_hash) into $target"
  mkdir -p "$CACHE_ROOT/tools"
  staging=$(mktemp -d "$CACHE_ROOT/tools/.cel-cost-staging.XXXXXX")
  trap 'rm -rf "$staging"' EXIT
  if ! nice -n 10 go build -p 1 -o "$staging/cel-cost" . >&2; then
    fail "compiling test/fidelity/cel-cost failed" "read the compiler output above; 'go mod download' in test/fidelity/cel-cost shows a missing module"
  fi
  {
    echo "tool: cel-cost (Forewarn's CEL cost oracle)"
    echo "k8s.io/apiserver: v$apiserver_version"
    echo "cel-go: $(sed -n 's#^\s*github.com/google/cel-go \(v[0-9.]*\).*#\1#p' go.mod | head -n 1)"
    echo "sources: $source_hash"
    echo "go: $(go env GOVERSION)"
  } >"$staging/BUILD-INFO"
  rm -rf "$target"
  mv "$staging" "$target"
  trap - EXIT
fi
echo "FOREWARN_CEL_COST_BIN=$target"
