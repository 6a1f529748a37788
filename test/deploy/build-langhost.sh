#!/usr/bin/env bash
# Builds the deploy tier's Pulumi language host (test/deploy/langhost: one binary serving the nodejs and
# python runtimes; see langhost/main.go for why it exists) into the tools cache, keyed by a hash of its
# sources, and prints `FOREWARN_LANGHOST_BIN=<dir>` as the last line of stdout. The directory holds
# pulumi-language-nodejs and pulumi-language-python. Warm: well under a second; cold: about 1-3 minutes
# (the Pulumi modules are shared with build-tools.sh's Go module cache).
set -euo pipefail
readonly TOOL_TAG=langhost
# shellcheck source=test/deploy/tool-log.sh
source "$(dirname "${BASH_SOURCE[0]}")/tool-log.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/langhost"

readonly CACHE_ROOT="${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
# The proxy serves the Pulumi modules but the checksum database does not know the newest releases.
export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}github.com/pulumi"

command -v go >/dev/null || fail "go is not on PATH" "install Go 1.26 (see docs/e2e.md)"
pulumi_version=$(sed -n 's#^\s*github.com/pulumi/pulumi/sdk/v3 v\([0-9.]*\)$#\1#p' go.mod | head -n 1)
source_hash=$(cat go.mod go.sum ./*.go ./*.py | sha256sum | cut -c1-12)
target="$CACHE_ROOT/tools/langhost-$pulumi_version-$source_hash"

if [[ ! -x $target/pulumi-language-python ]]; then
  say "building the test language host (Pulumi $pulumi_version, sources $source_hash) into $target"
  staging=$(mktemp -d "$CACHE_ROOT/tools/.langhost-staging.XXXXXX")
  trap 'rm -rf "$staging"' EXIT
  if ! nice go build -trimpath -ldflags "-s -w -X main.version=$pulumi_version" \
    -o "$staging/pulumi-language-nodejs" . >&2; then
    fail "compiling test/deploy/langhost failed" "read the compiler output above; 'go mod download' in test/deploy/langhost shows a missing module"
  fi
  ln "$staging/pulumi-language-nodejs" "$staging/pulumi-language-python"
  rm -rf "$target"
  mv "$staging" "$target"
  trap - EXIT
fi
echo "FOREWARN_LANGHOST_BIN=$target"
