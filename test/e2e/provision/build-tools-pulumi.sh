# Sourced by build-tools.sh: the Pulumi CLI, its Node language host and the Pulumi providers, at the
# versions of package-lock.json. See docs/e2e.md ("What the proxy does not serve").
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

# ---------------------------------------------------------------- Pulumi's Node language host
# Its module has no tags of its own: it is fetched at the commit of the CLI's tag (a pseudo-version).
build_language_nodejs() {
  local version="v$PULUMI_VERSION" started=$SECONDS work commit module
  tool_complete pulumi-language-nodejs "$version" && return 0
  require_go
  module="github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3"
  log "building pulumi-language-nodejs $version ($module)"
  commit=$(tag_commit "github.com/pulumi/pulumi/pkg/v3" "$version") ||
    fail "could not find the commit of github.com/pulumi/pulumi's tag pkg/$version (the proxy's .info has no Origin)" \
      "check: curl -s \$GOPROXY/github.com/pulumi/pulumi/pkg/v3/@v/$version.info"
  module_available "$module" "$commit" ||
    fail "the Go module proxy does not serve $module@$commit (see the log)" \
      "no source for the Node language host is reachable from here; get the module served by the proxy, or put a pulumi-language-nodejs $version binary into $(tool_dir pulumi-language-nodejs "$version")/ with a BUILD-INFO file"
  work="$WORK_ROOT/pulumi-language-nodejs-$version"
  new_wrapper "$work" "1.25"
  (cd "$work" && run_logged go get "$module@$commit" "github.com/pulumi/pulumi/sdk/v3@$version" \
    "github.com/pulumi/pulumi/pkg/v3@$version") ||
    fail "resolving $module@$commit failed (go get in $work)" "read the log"
  mkdir -p "$work/out"
  (cd "$work" && run_logged go build -p 2 -trimpath \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$version" \
    -o out/pulumi-language-nodejs "$module") || fail "compiling pulumi-language-nodejs failed" "read the log"
  install_tool pulumi-language-nodejs "$version" "$started" "$module@$commit" "$work/out/pulumi-language-nodejs"
  rm -rf "$work"
}

# The commit a module version was made from, as the proxy's .info records it (Origin.Hash).
tag_commit() { # module version
  local info
  go mod download -json "$1@$2" >/dev/null 2>>"$LOG_FILE" || return 1
  info=$(curl -fsS --max-time 30 "$(go_proxy_url)/$1/@v/$2.info" 2>>"$LOG_FILE") || return 1
  sed -n 's/.*"Hash":"\([0-9a-f]\{40\}\)".*/\1/p' <<<"$info" | grep .
}

go_proxy_url() { go env GOPROXY | cut -d, -f1 | cut -d'|' -f1; }

module_available() { # module version-or-query
  go list -m -json "$1@$2" >>"$LOG_FILE" 2>&1
}

# ---------------------------------------------------------------- Pulumi providers
# pulumi-resource-kubernetes and pulumi-resource-tls: modules github.com/pulumi/pulumi-kubernetes/provider/v4
# and github.com/pulumi/pulumi-tls/provider/v5 at the commit of the SDK's tag (docs/e2e.md). The proxy
# reachable from this machine answered 403 "not available" for both (and for pulumi-terraform-bridge,
# which the TLS provider needs), so this step only probes and explains.
build_provider() { # name (kubernetes | tls), version, provider module, sdk module
  local name="$1" version="v$2" provider_module="$3" sdk_module="$4"
  tool_complete "pulumi-resource-$name" "$version" && return 0
  require_go
  log "building pulumi-resource-$name $version ($provider_module)"
  if ! module_available "$sdk_module" "$version"; then
    fail "the Go module proxy does not serve $sdk_module@$version, so the commit to build $provider_module from is unknown (see the log)" \
      "no source for pulumi-resource-$name is reachable from here; get $provider_module served by the proxy, or put a pulumi-resource-$name $version binary into $(tool_dir "pulumi-resource-$name" "$version")/ with a BUILD-INFO file"
  fi
  fail "building $provider_module is not automated yet (the proxy served its SDK only after this script was written)" \
    "follow the recipe in docs/e2e.md ('Pulumi providers') and extend build_provider in $0"
}
