#!/usr/bin/env bash
# Builds (once) and caches Gatekeeper's manager, run as its admission webhook by the peer benchmark
# (bench/peers.js, issue 33; how it runs out of cluster: ../shared/TOOLCHAIN.md).
#   gatekeeper-manager   github.com/open-policy-agent/gatekeeper/v3@VERSION, package . (cold: about 35 min;
#                        less once gator's packages are in the Go build cache)
# Last stdout line: FOREWARN_GATEKEEPER_MANAGER_BIN=<path>. The cache and the build: tools/build-go-module-tool.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/build-go-module-tool.sh"
version="${FOREWARN_GATEKEEPER_VERSION:-v3.23.1}"
build_go_module_tool gatekeeper-manager "$version" github.com/open-policy-agent/gatekeeper/v3 . \
  "github.com/open-policy-agent/gatekeeper/v3/pkg/version.Version=$version" FOREWARN_GATEKEEPER_MANAGER_BIN 35
