#!/usr/bin/env bash
# Shared by the scripts that build one binary of a Go module into the tool cache
# (tools/build-opa.sh, tools/build-gatekeeper-webhook.sh, tools/build-kyverno-webhook.sh,
# test/fidelity/build-kyverno.sh, test/fidelity/build-gator.sh). Source it, then:
#   build_go_module_tool NAME VERSION MODULE PACKAGE LDFLAGS_X ENV_NAME COLD_MINUTES
# NAME is the binary (and cache folder) name, MODULE@VERSION the module the Go proxy serves, PACKAGE
# the main package inside it, LDFLAGS_X the `-X` assignment that stamps the version (may be empty),
# ENV_NAME the variable of the result line.
#
# Cache: ${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}/tools/NAME-VERSION/ with a BUILD-INFO written
# last (it marks the folder complete). Warm: returns at once. Cold: `go build -p 1` of a copy of the
# module directory (the module cache is read-only). On success the LAST stdout line is
#   ENV_NAME=<path of the binary>
# Progress goes to stderr, the build output to a log file in the cache.

build_go_module_tool() {
  local name=$1 version=$2 module=$3 package=$4 version_stamp=$5 env_name=$6 cold_minutes=$7
  local cache_root="${FOREWARN_E2E_CACHE:-/var/cache/forewarn-e2e}"
  local tool_dir="$cache_root/tools/$name-$version" work_dir="$cache_root/work/$name-$version"
  local log_dir="$cache_root/logs"
  log() { printf '[build-%s %s] %s\n' "$name" "$(date -u +%H:%M:%S)" "$*" >&2; }

  if [[ -f $tool_dir/BUILD-INFO && -x $tool_dir/$name ]]; then
    printf '%s=%s\n' "$env_name" "$tool_dir/$name"
    return 0
  fi

  export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH="/usr/local/go/bin:$PATH"; fi
  command -v go >/dev/null || {
    log "ERROR: go is not on PATH; install Go >= 1.25"
    return 1
  }

  mkdir -p "$log_dir" "$cache_root/work"
  local log_file started=$SECONDS module_json module_dir
  log_file="$log_dir/build-$name-$(date -u +%Y%m%dT%H%M%SZ)-$$.log"
  log "building $name $version from $module (cold: about $cold_minutes min); log: $log_file"

  module_json=$(go mod download -json "$module@$version" 2>>"$log_file") || {
    log "ERROR: downloading $module@$version failed (see $log_file)"
    return 1
  }
  module_dir=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' <<<"$module_json")
  [[ -d $module_dir ]] || {
    log "ERROR: no module directory in: $module_json"
    return 1
  }

  rm -rf "$work_dir"
  mkdir -p "$work_dir"
  cp -r "$module_dir/." "$work_dir/src"
  chmod -R u+w "$work_dir/src"

  local ldflags="-s -w${version_stamp:+ -X $version_stamp}"
  (cd "$work_dir/src" && nice -n 10 go build -p 1 -trimpath -ldflags "$ldflags" -o "$work_dir/$name" \
    "$package" >>"$log_file" 2>&1) || {
    log "ERROR: compiling $name failed (see $log_file)"
    return 1
  }

  rm -rf "$tool_dir"
  mkdir -p "$tool_dir"
  cp "$work_dir/$name" "$tool_dir/$name"
  {
    printf 'tool: %s\nversion: %s\nsource: %s@%s %s\n' "$name" "$version" "$module" "$version" "$package"
    printf 'built: %s\nbuild seconds: %s\ngo: %s\nbinaries: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
      "$((SECONDS - started))" "$(go env GOVERSION)" "$name"
  } >"$tool_dir/BUILD-INFO"
  rm -rf "$work_dir"
  log "built $name $version in $((SECONDS - started))s -> $tool_dir"
  printf '%s=%s\n' "$env_name" "$tool_dir/$name"
}
