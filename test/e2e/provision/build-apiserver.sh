#!/usr/bin/env bash
# Provisions the binaries of the end-to-end tier and caches them outside the repository:
#   kube-apiserver  built from Debian's `kubernetes` source package (v1.20.2)
#   kubectl         Debian's `kubernetes-client` package (v1.20.2), unpacked into the cache
#                   (or built from the same source tree with FOREWARN_E2E_BUILD_KUBECTL=1)
#   etcd            Debian's `etcd-server` package (installed system-wide, /usr/bin/etcd)
#
# Idempotent: when the cached binaries exist and answer `--version`, it changes nothing.
# See docs/e2e.md for the whole story.
#
# Environment:
#   FOREWARN_E2E_CACHE         cache root (default /var/cache/forewarn-e2e)
#   FOREWARN_E2E_WORK          build work dir (default $FOREWARN_E2E_CACHE/build)
#   FOREWARN_E2E_KEEP_BUILD=1  keep the 2 GB source/build tree after a successful build
#   FOREWARN_E2E_BUILD_KUBECTL=1  build kubectl from source instead of using Debian's package
#
# Prints, as its last line on success: FOREWARN_E2E_BIN_DIR=<dir holding kube-apiserver and kubectl>
set -euo pipefail

readonly KUBERNETES_VERSION="v1.20.2"
# Upstream commit of the v1.20.2 tag, stamped into the binaries' version info like Debian does.
readonly KUBERNETES_COMMIT="faecb196815e248d3ecfb03c680a4507229c2a56"
readonly CACHE_ROOT="${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}"
readonly BIN_DIR="${CACHE_ROOT}/${KUBERNETES_VERSION}"
readonly WORK_DIR="${FOREWARN_E2E_WORK:-${CACHE_ROOT}/build}"
readonly DEB_SRC_LIST="/etc/apt/sources.list.d/forewarn-e2e-deb-src.sources"

readonly BUILD_PACKAGES=(golang-go rsync golang-github-modern-go-reflect2-dev dpkg-dev build-essential)
readonly RUNTIME_PACKAGES=(etcd-server openssl ca-certificates curl)
readonly REFLECT2_DEBIAN_DIR="/usr/share/gocode/src/github.com/modern-go/reflect2"

script_start=$SECONDS

log() { printf '[e2e-provision %3ss] %s\n' "$((SECONDS - script_start))" "$*" >&2; }

fail() {
  printf '\n[e2e-provision] ERROR: %s\n' "$1" >&2
  if (($# > 1)); then printf '[e2e-provision] What to do: %s\n' "$2" >&2; fi
  exit 1
}

repo_root() { cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd; }

# ---------------------------------------------------------------- privileges and apt
as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    fail "installing Debian packages needs root (tried: $*)" \
      "run as root, give this user password-less sudo, or install by hand: apt-get install ${BUILD_PACKAGES[*]} ${RUNTIME_PACKAGES[*]}"
  fi
}

apt_updated=0
apt_update_once() {
  if ((apt_updated == 0)); then
    log "apt-get update"
    as_root apt-get update -qq >&2 ||
      fail "apt-get update failed" "check that Debian's package repositories are reachable (see /etc/apt/sources.list.d/)"
    apt_updated=1
  fi
}

package_installed() {
  [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) == "install ok installed" ]]
}

ensure_packages() {
  local missing=() package
  for package in "$@"; do
    package_installed "$package" || missing+=("$package")
  done
  ((${#missing[@]} == 0)) && return 0
  apt_update_once
  log "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
    fail "apt-get install ${missing[*]} failed" "see apt's output above; these packages come from Debian 12 (bookworm) main"
}

# A deb-src entry mirroring the machine's own deb entries (never a host name written by hand).
ensure_deb_src() {
  if apt-cache showsrc kubernetes 2>/dev/null | grep -q '^Package: kubernetes$'; then
    return 0
  fi
  local deb_sources="/etc/apt/sources.list.d/debian.sources"
  if [[ ! -f $DEB_SRC_LIST ]]; then
    [[ -f $deb_sources ]] ||
      fail "cannot derive a deb-src entry: $deb_sources does not exist" \
        "add a deb-src line for Debian bookworm main to your apt sources, then re-run"
    log "adding deb-src entries derived from $deb_sources -> $DEB_SRC_LIST"
    sed -e 's/^Types:.*$/Types: deb-src/' "$deb_sources" | as_root tee "$DEB_SRC_LIST" >/dev/null
  fi
  apt_updated=0
  apt_update_once
  apt-cache showsrc kubernetes 2>/dev/null | grep -q '^Package: kubernetes$' ||
    fail "Debian's source package 'kubernetes' is not available even with deb-src enabled" \
      "check $DEB_SRC_LIST and that the repositories carry bookworm's kubernetes source (1.20.5+really1.20.2)"
}

# ---------------------------------------------------------------- cache check
binary_runs() { # path, expected version
  [[ -x $1 ]] && "$1" --version 2>/dev/null | grep -q -- "$2"
}
kubectl_runs() {
  [[ -x $1 ]] && "$1" version --client --short 2>/dev/null | grep -q -- "$2"
}

cache_is_valid() {
  binary_runs "$BIN_DIR/kube-apiserver" "$KUBERNETES_VERSION" &&
    kubectl_runs "$BIN_DIR/kubectl" "$KUBERNETES_VERSION"
}

# ---------------------------------------------------------------- kubectl from Debian
install_debian_kubectl() {
  local download_dir="$WORK_DIR/kubernetes-client"
  rm -rf "$download_dir" && mkdir -p "$download_dir"
  apt_update_once
  log "apt-get download kubernetes-client (Debian's kubectl, unpacked into the cache, not installed)"
  # _apt cannot write into root-owned work dirs; apt warns and downloads unsandboxed, which is fine.
  (cd "$download_dir" && apt-get download -q kubernetes-client >&2) || return 1
  local deb
  deb=$(find "$download_dir" -maxdepth 1 -name 'kubernetes-client_*.deb' | head -n 1)
  [[ -n $deb ]] || return 1
  dpkg-deb -x "$deb" "$download_dir/root"
  install -m 0755 "$download_dir/root/usr/bin/kubectl" "$1"
  kubectl_runs "$1" "$KUBERNETES_VERSION"
}

# ---------------------------------------------------------------- source and build
fetch_source() {
  mkdir -p "$WORK_DIR"
  local existing
  existing=$(find "$WORK_DIR" -maxdepth 1 -type d -name 'kubernetes-*1.20.2*' | head -n 1)
  if [[ -n $existing && -f $existing/.forewarn-source-complete ]]; then
    log "reusing extracted source $existing"
    SOURCE_DIR=$existing
    return 0
  fi
  [[ -n $existing ]] && rm -rf "$existing"
  ensure_deb_src
  local candidate
  candidate=$(apt-cache showsrc kubernetes | sed -n 's/^Version: //p' | sort -V | tail -n 1)
  [[ $candidate == *1.20.2* ]] ||
    fail "Debian's kubernetes source package is version '$candidate', this tier needs upstream ${KUBERNETES_VERSION}" \
      "update KUBERNETES_VERSION in $0 and docs/e2e.md after checking the new version builds"
  log "apt-get source kubernetes=$candidate into $WORK_DIR (about 35 MB)"
  (cd "$WORK_DIR" && apt-get source -qq "kubernetes=$candidate" >&2) ||
    fail "apt-get source kubernetes failed" "see apt's output above; check the deb-src entry in $DEB_SRC_LIST"
  existing=$(find "$WORK_DIR" -maxdepth 1 -type d -name 'kubernetes-*1.20.2*' | head -n 1)
  [[ -n $existing && -f $existing/Makefile ]] ||
    fail "apt-get source did not produce a kubernetes source tree in $WORK_DIR" "inspect $WORK_DIR"
  touch "$existing/.forewarn-source-complete"
  SOURCE_DIR=$existing
}

replace_vendored_reflect2() {
  local vendored="$SOURCE_DIR/vendor/github.com/modern-go/reflect2"
  [[ -d $REFLECT2_DEBIAN_DIR ]] ||
    fail "Debian's reflect2 sources are missing at $REFLECT2_DEBIAN_DIR" \
      "apt-get install --reinstall golang-github-modern-go-reflect2-dev"
  if [[ -f $vendored/.forewarn-debian-1.0.2 ]]; then
    return 0
  fi
  # The vendored reflect2 1.0.1 segfaults with Go >= 1.18; Debian's 1.0.2 is API-compatible.
  log "replacing vendored github.com/modern-go/reflect2 (1.0.1) with Debian's 1.0.2"
  rm -rf "$vendored"
  mkdir -p "$vendored"
  rsync -a --exclude '*_test.go' --exclude 'test*/' "$REFLECT2_DEBIAN_DIR/" "$vendored/"
  touch "$vendored/.forewarn-debian-1.0.2"
}

make_target() { # cmd/NAME
  log "make WHAT=$1 (GOPATH mode; first build also generates code: minutes on 2 cores)"
  local started=$SECONDS
  (
    cd "$SOURCE_DIR"
    export GO111MODULE=off GOFLAGS="" GOPROXY=off GOTOOLCHAIN=local
    export GOCACHE="$WORK_DIR/go-build-cache"
    export KUBE_GIT_VERSION="$KUBERNETES_VERSION" KUBE_GIT_COMMIT="$KUBERNETES_COMMIT"
    export KUBE_GIT_TREE_STATE="archive" KUBE_GIT_MAJOR="1" KUBE_GIT_MINOR="20"
    KUBE_BUILD_PLATFORMS="linux/$(go env GOARCH)"
    export KUBE_BUILD_PLATFORMS
    make WHAT="$1" >"$WORK_DIR/make-$(basename "$1").log" 2>&1
  ) || {
    tail -n 40 "$WORK_DIR/make-$(basename "$1").log" >&2 || true
    fail "make WHAT=$1 failed (full log: $WORK_DIR/make-$(basename "$1").log)" \
      "check free disk (needs about 2 GB in $WORK_DIR) and memory; delete $WORK_DIR to start from a fresh source tree"
  }
  log "make WHAT=$1 done in $((SECONDS - started))s"
}

built_binary() { # NAME
  local found
  found=$(find "$SOURCE_DIR/_output" -path '*/bin/*' -name "$1" -type f -perm -u+x 2>/dev/null | head -n 1)
  [[ -n $found ]] || fail "make finished but no $1 binary was found under $SOURCE_DIR/_output" \
    "inspect $WORK_DIR/make-$1.log"
  printf '%s\n' "$found"
}

# ---------------------------------------------------------------- main
main() {
  case "$(uname -s)/$(uname -m)" in
    Linux/x86_64 | Linux/aarch64) ;;
    *) fail "unsupported platform $(uname -s)/$(uname -m)" "run the e2e tier on Debian 12 (Linux) only" ;;
  esac
  command -v apt-get >/dev/null 2>&1 ||
    fail "apt-get not found: this tier provisions from Debian's packages" "run it on Debian 12 (bookworm)"

  case "$(repo_root)/" in
    "$CACHE_ROOT"/* | "$WORK_DIR"/*) fail "the cache must live outside the repository" "set FOREWARN_E2E_CACHE elsewhere" ;;
  esac

  ensure_packages "${RUNTIME_PACKAGES[@]}"
  command -v etcd >/dev/null 2>&1 || fail "etcd not found after installing etcd-server" "apt-get install etcd-server"

  if cache_is_valid; then
    log "cached binaries in $BIN_DIR are valid ($KUBERNETES_VERSION): nothing to build"
    printf 'FOREWARN_E2E_BIN_DIR=%s\n' "$BIN_DIR"
    return 0
  fi

  mkdir -p "$CACHE_ROOT" 2>/dev/null || as_root mkdir -p "$CACHE_ROOT"
  [[ -w $CACHE_ROOT ]] || as_root chown "$(id -u):$(id -g)" "$CACHE_ROOT"
  exec 9>"$CACHE_ROOT/.build.lock"
  log "waiting for the build lock $CACHE_ROOT/.build.lock"
  flock 9
  if cache_is_valid; then # another run built it while we waited
    log "cached binaries in $BIN_DIR became valid while waiting"
    printf 'FOREWARN_E2E_BIN_DIR=%s\n' "$BIN_DIR"
    return 0
  fi

  local free_kb
  mkdir -p "$WORK_DIR"
  free_kb=$(df -Pk "$WORK_DIR" | awk 'NR == 2 { print $4 }')
  ((free_kb > 3 * 1024 * 1024)) ||
    fail "only $((free_kb / 1024)) MB free in $WORK_DIR; the build needs about 3 GB" \
      "free some disk or point FOREWARN_E2E_WORK / FOREWARN_E2E_CACHE at a larger filesystem"

  log "cold build of $KUBERNETES_VERSION into $BIN_DIR (work dir $WORK_DIR)"
  ensure_packages "${BUILD_PACKAGES[@]}"
  local go_version
  go_version=$(go env GOVERSION)
  log "using $go_version, $(nproc) cores"

  local staging="$BIN_DIR.staging.$$"
  rm -rf "$staging" && mkdir -p "$staging"
  # shellcheck disable=SC2064 # expand now: the path is fixed
  trap "rm -rf '$staging'" EXIT

  SOURCE_DIR=""
  fetch_source
  replace_vendored_reflect2

  if ! binary_runs "$BIN_DIR/kube-apiserver" "$KUBERNETES_VERSION"; then
    make_target cmd/kube-apiserver
    install -m 0755 "$(built_binary kube-apiserver)" "$staging/kube-apiserver"
    binary_runs "$staging/kube-apiserver" "$KUBERNETES_VERSION" ||
      fail "the freshly built kube-apiserver does not run: $("$staging/kube-apiserver" --version 2>&1 | tail -n 3)" \
        "if it segfaults, check that vendor/github.com/modern-go/reflect2 was replaced (delete $WORK_DIR and re-run)"
  else
    cp -p "$BIN_DIR/kube-apiserver" "$staging/kube-apiserver"
  fi

  if [[ ${FOREWARN_E2E_BUILD_KUBECTL:-0} == 1 ]] || ! install_debian_kubectl "$staging/kubectl"; then
    [[ ${FOREWARN_E2E_BUILD_KUBECTL:-0} == 1 ]] || log "Debian's kubernetes-client is not usable: building kubectl from source"
    make_target cmd/kubectl
    install -m 0755 "$(built_binary kubectl)" "$staging/kubectl"
    kubectl_runs "$staging/kubectl" "$KUBERNETES_VERSION" ||
      fail "the freshly built kubectl does not run" "inspect $WORK_DIR/make-kubectl.log"
  fi

  {
    echo "kubernetes_version=$KUBERNETES_VERSION"
    echo "built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "go=$go_version"
    echo "source=$(basename "$SOURCE_DIR")"
    echo "kubectl=$("$staging/kubectl" version --client --short 2>/dev/null)"
    echo "etcd=$(etcd --version 2>/dev/null | head -n 1)"
  } >"$staging/BUILD-INFO"

  # Swap the staging dir into place in one rename so a half-written cache is never seen.
  rm -rf "$BIN_DIR.old"
  [[ -d $BIN_DIR ]] && mv "$BIN_DIR" "$BIN_DIR.old"
  mv "$staging" "$BIN_DIR"
  rm -rf "$BIN_DIR.old"
  trap - EXIT

  if [[ ${FOREWARN_E2E_KEEP_BUILD:-0} != 1 ]]; then
    log "removing the build tree $WORK_DIR (set FOREWARN_E2E_KEEP_BUILD=1 to keep it)"
    rm -rf "$WORK_DIR"
  fi
  log "cold build finished in $((SECONDS - script_start))s: $(tr '\n' ' ' <"$BIN_DIR/BUILD-INFO")"
  printf 'FOREWARN_E2E_BIN_DIR=%s\n' "$BIN_DIR"
}

main "$@"
