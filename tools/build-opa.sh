#!/usr/bin/env bash
# Builds (once) and caches Open Policy Agent, which compiles Gatekeeper templates' Rego to Wasm for the
# controller (docs/decisions.md, "Gatekeeper Rego"); the container image builds the same version.
#   opa   github.com/open-policy-agent/opa@VERSION, package . (cold: about 6 minutes on 2 cores)
# Last stdout line: FOREWARN_OPA_BIN=<path>. The cache and the build: tools/build-go-module-tool.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/build-go-module-tool.sh"
version="${FOREWARN_OPA_VERSION:-v1.22.3}"
build_go_module_tool opa "$version" github.com/open-policy-agent/opa . \
  "github.com/open-policy-agent/opa/v1/version.Version=${version#v}" FOREWARN_OPA_BIN 6
