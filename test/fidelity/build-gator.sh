#!/usr/bin/env bash
# Builds (once) and caches gator, Gatekeeper's CLI: the oracle of the fidelity tier's Gatekeeper comparison.
#   gator   github.com/open-policy-agent/gatekeeper/v3@VERSION, package ./cmd/gator (cold: about 21 minutes)
# Last stdout line: FOREWARN_GATOR_BIN=<path>. The cache and the build: tools/build-go-module-tool.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/build-go-module-tool.sh"
version="${FOREWARN_GATOR_VERSION:-v3.23.1}"
build_go_module_tool gator "$version" github.com/open-policy-agent/gatekeeper/v3 ./cmd/gator \
  "github.com/open-policy-agent/gatekeeper/v3/pkg/version.Version=$version" FOREWARN_GATOR_BIN 21
