#!/usr/bin/env bash
# Builds (once) and caches the Go-built binaries of the end-to-end and deploy tiers:
#   kube-apiserver, kube-controller-manager, kube-scheduler, kubectl   Kubernetes KUBERNETES_VERSION
#   etcd                                      the go.etcd.io/etcd/server/v3 version Kubernetes pins
#   pulumi                                    the @pulumi/pulumi version of package-lock.json
#   pulumi-resource-kubernetes, -tls          the @pulumi/kubernetes and @pulumi/tls versions of the lock
#                                             (4.25.0 and 5.3.0: the versions buildable from served modules)
#   kwok                                      makes Deployments Available for the deploy tier's await test
# Pulumi's own language hosts are not served by the Go module proxy: the deploy tier builds its own
# (test/deploy/build-langhost.sh).
#
# Cache: ${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}/tools/<tool>-<version>/ (one folder per tool
# and version, each with its BUILD-INFO); a tool is rebuilt only when its folder is incomplete. The
# union of the tools is a folder of symlinks, printed as the LAST stdout line on success:
#   FOREWARN_TOOLS_BIN=<dir>
# Progress (timestamped) goes to stderr; the build commands' output to a log file in the cache.
# See docs/e2e.md.
#
# Environment:
#   FOREWARN_E2E_CACHE          cache root (default /var/cache/forewarn-e2e)
#   FOREWARN_KUBERNETES_VERSION Kubernetes release to build (default below)
#   FOREWARN_TOOLS_ONLY="a b"   build only these tool groups (kubernetes etcd pulumi provider-kubernetes
#                               provider-tls kwok); the bin dir then holds them only
set -euo pipefail

readonly KUBERNETES_VERSION="${FOREWARN_KUBERNETES_VERSION:-v1.34.4}"
readonly KWOK_VERSION="v0.7.0"
readonly CACHE_ROOT="${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}"
readonly TOOLS_ROOT="$CACHE_ROOT/tools"
readonly WORK_ROOT="$CACHE_ROOT/work"
readonly LOG_DIR="$CACHE_ROOT/logs"
readonly TOOL_GROUPS="kubernetes etcd pulumi provider-kubernetes provider-tls kwok"

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
# The proxy serves these modules but the checksum database does not know the newest Pulumi releases.
export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}github.com/pulumi"

script_start=$SECONDS
mkdir -p "$TOOLS_ROOT" "$WORK_ROOT" "$LOG_DIR"
LOG_FILE="$LOG_DIR/build-tools-$(date -u +%Y%m%dT%H%M%SZ)-$$.log"
readonly LOG_FILE

log() {
  local line
  line=$(printf '[build-tools %s +%4ss] %s' "$(date -u +%H:%M:%S)" "$((SECONDS - script_start))" "$*")
  printf '%s\n' "$line" >&2
  printf '%s\n' "$line" >>"$LOG_FILE"
}

fail() { # message what-to-do
  log "ERROR: $1"
  log "What to do: $2"
  log "Full log: $LOG_FILE"
  exit 1
}

# Runs a build command niced, its output into the log file only.
run_logged() {
  printf '$ %s\n' "$*" >>"$LOG_FILE"
  nice -n 5 "$@" >>"$LOG_FILE" 2>&1
}

repo_root() { cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd; }

# ---------------------------------------------------------------- versions
lock_version() { # npm package name -> version in package-lock.json
  PKG="$1" LOCK="$(repo_root)/package-lock.json" node -e '
    const lock = require(process.env.LOCK);
    const entry = lock.packages && lock.packages["node_modules/" + process.env.PKG];
    if (!entry || !entry.version) process.exit(1);
    console.log(entry.version);
  '
}

# Go is needed to build, and on a warm cache only if the Kubernetes folder predates its etcd line.
require_go() {
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH="/usr/local/go/bin:$PATH"; fi
  command -v go >/dev/null || fail "go is not on PATH" "install Go >= 1.24 (this machine has it in /usr/local/go/bin)"
}

read_versions() {
  command -v node >/dev/null || fail "node is not on PATH" "install Node 20"
  PULUMI_VERSION=$(lock_version @pulumi/pulumi) ||
    fail "no @pulumi/pulumi in package-lock.json" "run npm install so the lock file names the Pulumi SDK"
  PROVIDER_KUBERNETES_VERSION=$(lock_version @pulumi/kubernetes) ||
    fail "no @pulumi/kubernetes in package-lock.json" "run npm install"
  PROVIDER_TLS_VERSION=$(lock_version @pulumi/tls) || fail "no @pulumi/tls in package-lock.json" "run npm install"
}

# ---------------------------------------------------------------- module helpers
module_dir() { # module@version -> its directory in the (read-only) module cache
  local json
  json=$(go mod download -json "$1" 2>>"$LOG_FILE") || {
    printf '%s\n' "$json" >>"$LOG_FILE"
    return 1
  }
  sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' <<<"$json"
}

go_directive() { sed -n 's/^go \([0-9.]*\).*/\1/p' "$1" | head -n 1; }

# Copies the replace lines of a dependency's go.mod that point at other modules (Go ignores them in a
# dependency); local-path replacements are dropped, except `k8s.io/X => ./staging/...`, which become
# the published k8s.io/X at STAGING_VERSION.
copy_replaces() { # dependency go.mod, wrapper dir, staging version (may be empty)
  local gomod="$1" wrapper="$2" staging="$3" line old new
  while IFS= read -r line; do
    old=$(awk '{print $1}' <<<"$line")
    new=$(sed 's/.*=> *//' <<<"$line")
    if [[ $new == ./staging/* && -n $staging ]]; then
      (cd "$wrapper" && go mod edit -replace "$old=$old@$staging")
    elif [[ $new != .* && $new != /* ]]; then
      (cd "$wrapper" && go mod edit -replace "$old=$(awk '{print $1 "@" $2}' <<<"$new")")
    fi
  done < <(
    awk '/^replace *\($/ {inblock=1; next} inblock && /^\)/ {inblock=0; next}
         inblock && /=>/ {print; next} /^replace .*=>/ {sub(/^replace */, ""); print}' "$gomod" |
      sed 's/^[[:space:]]*//'
  )
}

new_wrapper() { # dir, go version
  rm -rf "$1"
  mkdir -p "$1"
  (cd "$1" && go mod init local/forewarn-e2e-tools >>"$LOG_FILE" 2>&1 && go mod edit -go="$2")
}

# ---------------------------------------------------------------- cache bookkeeping
tool_dir() { printf '%s/%s-%s' "$TOOLS_ROOT" "$1" "$2"; }

tool_complete() { [[ -f $(tool_dir "$1" "$2")/BUILD-INFO ]]; }

# Moves the built binaries into the tool's cache folder and writes its BUILD-INFO (last: it marks the
# folder complete).
install_tool() { # tool, version, started-at seconds, source description, binaries...
  local tool="$1" version="$2" started="$3" source="$4" dir
  shift 4
  dir=$(tool_dir "$tool" "$version")
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$@" "$dir/"
  {
    printf 'tool: %s\nversion: %s\nsource: %s\n' "$tool" "$version" "$source"
    printf 'built: %s\nbuild seconds: %s\ngo: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
      "$((SECONDS - started))" "$(go env GOVERSION)"
    printf 'binaries:'
    for bin in "$@"; do printf ' %s' "$(basename "$bin")"; done
    printf '\n'
  } >"$dir/BUILD-INFO"
  log "built $tool $version in $((SECONDS - started))s -> $dir"
}

# ---------------------------------------------------------------- Kubernetes
build_kubernetes() {
  local version="$KUBERNETES_VERSION" started=$SECONDS work k8s_dir minor staging date ldflags pkg
  tool_complete kubernetes "$version" && return 0
  require_go
  log "building Kubernetes $version (kube-apiserver, kube-controller-manager, kube-scheduler, kubectl); cold: 15-25 min"
  work="$WORK_ROOT/kubernetes-$version"
  minor=$(cut -d. -f2 <<<"$version")
  staging="v0.${version#v1.}"
  k8s_dir=$(module_dir "k8s.io/kubernetes@$version") ||
    fail "downloading module k8s.io/kubernetes@$version failed" "check the Go proxy (go list -m k8s.io/kubernetes@$version) or pick another FOREWARN_KUBERNETES_VERSION"
  new_wrapper "$work" "$(go_directive "$k8s_dir/go.mod")"
  copy_replaces "$k8s_dir/go.mod" "$work" "$staging"
  (cd "$work" && go mod edit -require "k8s.io/kubernetes@$version")
  local packages=(k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
  (cd "$work" && run_logged go get "${packages[@]/%/@$version}") ||
    fail "resolving the Kubernetes $version modules (go get in $work) failed" "read the log; a staging module k8s.io/*@$staging may be missing from the proxy"
  date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  mkdir -p "$work/out"
  (cd "$work" && run_logged go build -p 2 -trimpath -ldflags "$ldflags" -o out/ "${packages[@]}") ||
    fail "compiling Kubernetes $version failed" "read the log; try again (a killed link needs ~3 GB free memory)"
  install_tool kubernetes "$version" "$started" "k8s.io/kubernetes@$version, staging modules @$staging" \
    "$work"/out/{kube-apiserver,kube-controller-manager,kube-scheduler,kubectl}
  printf 'requires etcd: %s\n' "$ETCD_VERSION" >>"$(tool_dir kubernetes "$version")/BUILD-INFO"
  rm -rf "$work"
}

# etcd: the server version that Kubernetes' own go.mod requires, remembered in the Kubernetes folder's
# BUILD-INFO so a warm run needs no Go.
etcd_version() {
  local info k8s_dir version
  info="$(tool_dir kubernetes "$KUBERNETES_VERSION")/BUILD-INFO"
  version=$(sed -n 's/^requires etcd: //p' "$info" 2>/dev/null | head -n 1)
  if [[ -n $version ]]; then
    printf '%s\n' "$version"
    return 0
  fi
  require_go
  k8s_dir=$(module_dir "k8s.io/kubernetes@$KUBERNETES_VERSION") || return 1
  version=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2; exit}' "$k8s_dir/go.mod")
  [[ -n $version ]] || return 1
  if [[ -f $info ]]; then printf 'requires etcd: %s\n' "$version" >>"$info"; fi
  printf '%s\n' "$version"
}

build_etcd() {
  local version="$ETCD_VERSION" started=$SECONDS work etcd_dir
  tool_complete etcd "$version" && return 0
  require_go
  log "building etcd $version (go.etcd.io/etcd/server/v3); cold: 2-4 min"
  work="$WORK_ROOT/etcd-$version"
  etcd_dir=$(module_dir "go.etcd.io/etcd/server/v3@$version") ||
    fail "downloading module go.etcd.io/etcd/server/v3@$version failed" "check the Go proxy"
  new_wrapper "$work" "$(go_directive "$etcd_dir/go.mod")"
  (cd "$work" && go mod edit -require "go.etcd.io/etcd/server/v3@$version")
  (cd "$work" && run_logged go get "go.etcd.io/etcd/server/v3@$version") ||
    fail "resolving etcd $version's modules failed (go get in $work)" "read the log"
  mkdir -p "$work/out"
  (cd "$work" && run_logged go build -p 2 -trimpath \
    -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$version" -o out/etcd go.etcd.io/etcd/server/v3) ||
    fail "compiling etcd $version failed" "read the log"
  install_tool etcd "$version" "$started" "go.etcd.io/etcd/server/v3@$version" "$work/out/etcd"
  rm -rf "$work"
}

# The Pulumi CLI and the providers.
# shellcheck source=build-tools-pulumi.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-tools-pulumi.sh"

# ---------------------------------------------------------------- kwok
build_kwok() {
  local version="$KWOK_VERSION" started=$SECONDS work
  tool_complete kwok "$version" && return 0
  require_go
  log "building kwok $version; cold: 3-5 min"
  work="$WORK_ROOT/kwok-$version"
  rm -rf "$work" && mkdir -p "$work/out"
  GOBIN="$work/out" run_logged go install -p 2 -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$version" ||
    fail "compiling module sigs.k8s.io/kwok@$version (cmd/kwok) failed" "read the log; check the Go proxy: go list -m sigs.k8s.io/kwok@$version"
  install_tool kwok "$version" "$started" "sigs.k8s.io/kwok/cmd/kwok@$version" "$work/out/kwok"
  rm -rf "$work"
}

# ---------------------------------------------------------------- verification and the bin dir
verify_binary() { # path, version-printing arguments...
  local bin="$1" out
  shift
  [[ -x $bin ]] || fail "$bin is missing" "delete its folder $(dirname "$bin") and run this script again"
  out=$(timeout 20 "$bin" "$@" 2>&1) ||
    fail "$bin $* failed: $out" "delete its folder $(dirname "$bin") and run this script again"
  log "  $(basename "$bin"): $(head -n 1 <<<"$out")"
}

link_bin_dir() { # dir, tool folders...
  local bin_dir="$1" folder bin
  shift
  mkdir -p "$bin_dir"
  for folder in "$@"; do
    for bin in "$folder"/*; do
      [[ $(basename "$bin") == BUILD-INFO ]] && continue
      ln -sfn "$bin" "$bin_dir/$(basename "$bin")"
    done
  done
  for folder in "$@"; do
    cat "$folder/BUILD-INFO"
    echo
  done >"$bin_dir/BUILD-INFO"
}

wanted() { [[ -z ${FOREWARN_TOOLS_ONLY:-} || " $FOREWARN_TOOLS_ONLY " == *" $1 "* ]]; }

# Runs one tool's build in a subshell (its fail() ends only that build), and records the tool's folder
# or the failure: every wanted group is required, a failure fails the script once all were tried.
FOLDERS=()
FAILED=()
build_group() { # group, tool folder, build command...
  local group="$1" folder="$2"
  shift 2
  wanted "$group" || return 0
  if ("$@"); then
    FOLDERS+=("$folder")
  else
    FAILED+=("$group")
  fi
}

verify_folder() { # tool folder
  local folder="$1"
  case "$(basename "$folder")" in
  kubernetes-*)
    verify_binary "$folder/kube-apiserver" --version
    verify_binary "$folder/kube-controller-manager" --version
    verify_binary "$folder/kube-scheduler" --version
    verify_binary "$folder/kubectl" version --client
    ;;
  etcd-*) verify_binary "$folder/etcd" --version ;;
  pulumi-v*) verify_binary "$folder/pulumi" version ;;
  # The Kubernetes provider has no version flag: -help shows that it starts on this machine.
  pulumi-resource-kubernetes-*) verify_binary "$folder/pulumi-resource-kubernetes" -help ;;
  pulumi-resource-tls-*) verify_binary "$folder/pulumi-resource-tls" -version ;;
  kwok-*) verify_binary "$folder/kwok" --version ;;
  *) for bin in "$folder"/*; do [[ $(basename "$bin") == BUILD-INFO || -x $bin ]] || fail "$bin is not executable" "delete $folder and run this script again"; done ;;
  esac
}

main() {
  exec 9>"$CACHE_ROOT/.build-tools.lock"
  if ! flock -n 9; then
    log "another build-tools.sh holds $CACHE_ROOT/.build-tools.lock: waiting for it"
    flock 9
  fi
  log "cache $CACHE_ROOT; log $LOG_FILE"
  # Keep the 30 newest logs.
  find "$LOG_DIR" -maxdepth 1 -name 'build-tools-*.log' -printf '%T@ %p\n' | sort -rn | tail -n +31 |
    cut -d' ' -f2- | xargs -r rm -f
  local group
  for group in ${FOREWARN_TOOLS_ONLY:-}; do
    [[ " $TOOL_GROUPS " == *" $group "* ]] ||
      fail "FOREWARN_TOOLS_ONLY names an unknown tool group '$group'" "use some of: $TOOL_GROUPS"
  done
  read_versions
  ETCD_VERSION=$(etcd_version) && [[ -n $ETCD_VERSION ]] ||
    fail "could not read the etcd version from k8s.io/kubernetes@$KUBERNETES_VERSION's go.mod" "check the Go proxy: go list -m k8s.io/kubernetes@$KUBERNETES_VERSION"
  log "versions: Kubernetes $KUBERNETES_VERSION, etcd $ETCD_VERSION, Pulumi v$PULUMI_VERSION, pulumi-kubernetes v$PROVIDER_KUBERNETES_VERSION, pulumi-tls v$PROVIDER_TLS_VERSION, kwok $KWOK_VERSION"

  # Order: what the e2e tier needs first, then the Pulumi CLI, the providers, and kwok last.
  build_group kubernetes "$(tool_dir kubernetes "$KUBERNETES_VERSION")" build_kubernetes
  build_group etcd "$(tool_dir etcd "$ETCD_VERSION")" build_etcd
  build_group pulumi "$(tool_dir pulumi "v$PULUMI_VERSION")" build_pulumi
  build_group provider-kubernetes "$(tool_dir pulumi-resource-kubernetes "v$PROVIDER_KUBERNETES_VERSION")" \
    build_provider_kubernetes
  build_group provider-tls "$(tool_dir pulumi-resource-tls "v$PROVIDER_TLS_VERSION")" build_provider_tls
  build_group kwok "$(tool_dir kwok "$KWOK_VERSION")" build_kwok

  if ((${#FAILED[@]} > 0)); then
    fail "these tools could not be built: ${FAILED[*]} (their ERROR lines are above)" \
      "fix what those lines say; or build only what a tier needs, e.g. FOREWARN_TOOLS_ONLY='kubernetes etcd' $0"
  fi
  log "verifying"
  local folder
  for folder in "${FOLDERS[@]}"; do verify_folder "$folder"; done
  local key bin_dir
  key=$(for folder in "${FOLDERS[@]}"; do basename "$folder"; done | sort | tr '\n' '_' | sed 's/_$//')
  bin_dir="$CACHE_ROOT/bin/$key"
  link_bin_dir "$bin_dir" "${FOLDERS[@]}"
  log "done in $((SECONDS - script_start))s"
  printf 'FOREWARN_TOOLS_BIN=%s\n' "$bin_dir"
}

main "$@"; exit $?
