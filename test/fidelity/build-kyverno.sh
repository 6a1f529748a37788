#!/usr/bin/env bash
# Builds (once) and caches the Kyverno CLI, the oracle of the fidelity tier's Kyverno comparison.
#   kyverno   github.com/kyverno/kyverno@VERSION, package ./cmd/cli/kubectl-kyverno (cold: about 22 minutes)
# Last stdout line: FOREWARN_KYVERNO_BIN=<path>. The cache and the build: tools/build-go-module-tool.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../tools/build-go-module-tool.sh"
version="${FOREWARN_KYVERNO_VERSION:-v1.19.1}"
build_go_module_tool kyverno "$version" github.com/kyverno/kyverno ./cmd/cli/kubectl-kyverno \
  "github.com/kyverno/kyverno/pkg/version.BuildVersion=$version" FOREWARN_KYVERNO_BIN 22
