#!/usr/bin/env bash
# Builds (once) and caches Kyverno's admission controller, run as its admission webhook by the peer
# benchmark (bench/peers.js, issue 33; how it runs out of cluster: ../shared/TOOLCHAIN.md).
#   kyverno-webhook   github.com/kyverno/kyverno@VERSION, package ./cmd/kyverno (cold: about 45 min;
#                     104 s on 2026-11-27 with the Kyverno CLI's packages already in the Go build
#                     cache, test/fidelity/build-kyverno.sh)
# Last stdout line: FOREWARN_KYVERNO_WEBHOOK_BIN=<path>. The cache and the build: tools/build-go-module-tool.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/build-go-module-tool.sh"
version="${FOREWARN_KYVERNO_VERSION:-v1.19.1}"
build_go_module_tool kyverno-webhook "$version" github.com/kyverno/kyverno ./cmd/kyverno \
  "github.com/kyverno/kyverno/pkg/version.BuildVersion=$version" FOREWARN_KYVERNO_WEBHOOK_BIN 40
