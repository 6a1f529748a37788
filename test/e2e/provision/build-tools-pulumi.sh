# Sourced by build-tools.sh: the Pulumi CLI and the Pulumi providers, at the versions of
# package-lock.json. See docs/e2e.md ("What the proxy does not serve").
# shellcheck shell=bash
# ---------------------------------------------------------------- Pulumi CLI
build_pulumi() {
  local version="v$PULUMI_VERSION" started=$SECONDS work pkg_dir
  tool_complete pulumi "$version" && return 0
  require_go
  log "building the Pulumi CLI $version; cold: 6-10 min"
  work="$WORK_ROOT/pulumi-$version"
  pkg_dir=$(module_dir "github.com/pulumi/pulumi/pkg/v3@$version") ||
    fail "downloading module github.com/pulumi/pulumi/pkg/v3@$version failed" "check the Go proxy"
  new_wrapper "$work" "$(go_directive "$pkg_dir/go.mod")"
  copy_replaces "$pkg_dir/go.mod" "$work" ""
  (cd "$work" && go mod edit -require "github.com/pulumi/pulumi/pkg/v3@$version" \
    -require "github.com/pulumi/pulumi/sdk/v3@$version")
  (cd "$work" && run_logged go get "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@$version" \
    "github.com/pulumi/pulumi/sdk/v3@$version") ||
    fail "resolving the Pulumi CLI's modules failed (go get in $work)" "read the log"
  mkdir -p "$work/out"
  (cd "$work" && run_logged go build -p 2 -trimpath \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$version" \
    -o out/pulumi github.com/pulumi/pulumi/pkg/v3/cmd/pulumi) ||
    fail "compiling the Pulumi CLI $version failed" "read the log"
  install_tool pulumi "$version" "$started" "github.com/pulumi/pulumi/pkg/v3@$version" "$work/out/pulumi"
  rm -rf "$work"
}

# ---------------------------------------------------------------- Pulumi providers
# The provider binaries pair with the npm SDKs of package-lock.json (@pulumi/kubernetes, @pulumi/tls):
# same version, so Pulumi neither warns nor looks for another plugin. Only the versions below can be
# built from what the Go module proxy serves (docs/e2e.md, "Pulumi providers").

# Downloads every module of the main module in the current directory before compiling: a download that
# times out on a loaded machine (TLS handshake timeout, unexpected EOF) is retried here, instead of
# failing a long compile minutes later.
download_modules() { # what (for the log)
  local attempt
  for attempt in 1 2 3; do
    run_logged go mod download && return 0
    log "downloading the modules of $1 failed (attempt $attempt of 3)"
    sleep $((attempt * 10))
  done
  return 1
}

# pulumi-resource-kubernetes: the served provider module at the commit of its tag, with the one local
# replace (sdk/v4 => ../sdk) swapped for the served SDK module of the same tag.
provider_kubernetes_module_version() { # SDK version -> provider module version (the tag's commit)
  case "$1" in
  4.25.0) echo v4.0.0-20260115033456-f47bc2d6f199 ;;
  *) return 1 ;;
  esac
}

build_provider_kubernetes() {
  local version="$PROVIDER_KUBERNETES_VERSION" started=$SECONDS work module module_version src
  module=github.com/pulumi/pulumi-kubernetes/provider/v4
  tool_complete pulumi-resource-kubernetes "v$version" && return 0
  module_version=$(provider_kubernetes_module_version "$version") ||
    fail "no served source of $module is known for @pulumi/kubernetes $version (module $module)" \
      "pin @pulumi/kubernetes to 4.25.0 in package.json (the only version whose provider module the proxy serves), or add its tag's pseudo-version to provider_kubernetes_module_version in $0"
  require_go
  log "building pulumi-resource-kubernetes v$version ($module@$module_version); cold: about 9 min"
  work="$WORK_ROOT/pulumi-resource-kubernetes-v$version"
  src=$(module_dir "$module@$module_version") ||
    fail "downloading module $module@$module_version failed" "check the Go proxy: go list -m $module@$module_version"
  rm -rf "$work" && mkdir -p "$work/out"
  cp -r "$src" "$work/src" && chmod -R u+w "$work/src"
  (cd "$work/src" && go mod edit -dropreplace github.com/pulumi/pulumi-kubernetes/sdk/v4 \
    -require "github.com/pulumi/pulumi-kubernetes/sdk/v4@v$version" &&
    run_logged go mod download github.com/pulumi/pulumi-kubernetes/sdk/v4 &&
    run_logged go get "github.com/pulumi/pulumi-kubernetes/sdk/v4@v$version" && download_modules "$module") ||
    fail "resolving module $module@$module_version with github.com/pulumi/pulumi-kubernetes/sdk/v4@v$version failed (in $work/src)" "read the log; check the Go proxy: go list -m $module@$module_version"
  (cd "$work/src/cmd/pulumi-resource-kubernetes" && VERSION="$version" run_logged go run ./generate.go) ||
    fail "generating the embedded schema of module $module (go run ./generate.go) failed" "read the log"
  (cd "$work/src" && run_logged go build -p 1 -trimpath \
    -ldflags "-s -w -X $module/pkg/version.Version=$version" \
    -o "$work/out/pulumi-resource-kubernetes" ./cmd/pulumi-resource-kubernetes) ||
    fail "compiling module $module@$module_version failed" "read the log"
  install_tool pulumi-resource-kubernetes "v$version" "$started" "$module@$module_version (sdk/v4@v$version)" \
    "$work/out/pulumi-resource-kubernetes"
  rm -rf "$work"
}

# pulumi-resource-tls: Pulumi's own provider module is not served, so the binary is our own bridge of
# the upstream Terraform provider (test/deploy/provider-tls, read its files for how). Two steps: the
# schema generator pulumi-tfgen-tls writes schema.json and bridge-metadata.json, then the plugin embeds
# them. The folder is keyed by version; BUILD-INFO records a hash of the sources, and a folder built
# from other sources is rebuilt.
provider_tls_sources() { printf '%s/test/deploy/provider-tls' "$(repo_root)"; }

provider_tls_source_hash() {
  (cd "$(provider_tls_sources)" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print0 |
    sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
}

build_provider_tls() {
  local version="$PROVIDER_TLS_VERSION" started=$SECONDS work hash module=forewarn.test/provider-tls ldflags
  hash=$(provider_tls_source_hash) || fail "cannot read the bridged TLS provider's sources in $(provider_tls_sources)" "check out the repository completely"
  if tool_complete pulumi-resource-tls "v$version" &&
    grep -qx "sources: $hash" "$(tool_dir pulumi-resource-tls "v$version")/BUILD-INFO"; then
    return 0
  fi
  require_go
  log "building pulumi-resource-tls v$version (our bridge of github.com/hashicorp/terraform-provider-tls, sources $hash); cold: about 3 min"
  work="$WORK_ROOT/pulumi-resource-tls-v$version"
  rm -rf "$work" && mkdir -p "$work/out"
  cp -r "$(provider_tls_sources)" "$work/src"
  ldflags="-s -w -X $module/provider.Version=$version"
  (cd "$work/src" && download_modules "$module") ||
    fail "downloading the modules of $module (github.com/pulumi/pulumi-terraform-bridge/v3, github.com/hashicorp/terraform-provider-tls) failed" \
      "read the log; check the Go proxy: go list -m github.com/pulumi/pulumi-terraform-bridge/v3@v3.119.0"
  (cd "$work/src" && run_logged go build -p 1 -trimpath -ldflags "$ldflags" -o "$work/out/pulumi-tfgen-tls" ./cmd/pulumi-tfgen-tls) ||
    fail "compiling the schema generator of $module (./cmd/pulumi-tfgen-tls) failed" "read the log"
  (cd "$work/src" && run_logged "$work/out/pulumi-tfgen-tls" schema --skip-examples --out cmd/pulumi-resource-tls) ||
    fail "generating the schema of $module (pulumi-tfgen-tls schema) failed" "read the log"
  (cd "$work/src" && run_logged go build -p 1 -trimpath -ldflags "$ldflags" -o "$work/out/pulumi-resource-tls" ./cmd/pulumi-resource-tls) ||
    fail "compiling $module (./cmd/pulumi-resource-tls) failed" "read the log"
  install_tool pulumi-resource-tls "v$version" "$started" "$module (test/deploy/provider-tls) over github.com/hashicorp/terraform-provider-tls" \
    "$work/out/pulumi-resource-tls"
  printf 'sources: %s\n' "$hash" >>"$(tool_dir pulumi-resource-tls "v$version")/BUILD-INFO"
  rm -rf "$work"
}
