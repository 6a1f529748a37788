#!/usr/bin/env bash
# Runs a throw-away Kubernetes control plane (etcd + kube-apiserver + kube-controller-manager of a
# current release) on loopback for the end-to-end tier. Binaries come from build-tools.sh's cache.
# See docs/e2e.md.
#
#   cluster.sh start                      fresh data dir, certificates, etcd, kube-apiserver (waits for
#                                         /readyz), kube-controller-manager (waits for the `default`
#                                         ServiceAccount); prints the env file (KEY='value' lines) on stdout
#   cluster.sh stop            [DATA_DIR] SIGTERM then SIGKILL all, remove the data dir (idempotent)
#   cluster.sh kill-apiserver  [DATA_DIR] SIGKILL the API server only (etcd keeps the state)
#   cluster.sh start-apiserver [DATA_DIR] start it again on the same port with the same flags
#   cluster.sh status          [DATA_DIR] print which processes are running
#
# DATA_DIR defaults to $FOREWARN_E2E_DATA_DIR. Logs go to stderr; only the env file goes to stdout.
#
# Environment for `start`:
#   FOREWARN_TOOLS_BIN          dir with etcd, kube-apiserver, kube-controller-manager and kubectl (the
#                               last line of build-tools.sh; FOREWARN_E2E_BIN_DIR is read as well)
#   FOREWARN_E2E_CONTROLLER_MANAGER=0  do not start kube-controller-manager
#   FOREWARN_E2E_OWNER_PID      when set, a watchdog stops the cluster once this process is gone
#   FOREWARN_E2E_READY_TIMEOUT  seconds to wait for etcd and for the API server (default 60)
#   FOREWARN_E2E_APISERVER_EXTRA_ARGS  extra kube-apiserver flags, space separated
set -euo pipefail

readonly SERVICE_CLUSTER_IP_RANGE="10.0.0.0/24"
readonly SERVICE_ACCOUNT_ISSUER="https://kubernetes.default.svc"
readonly DATA_DIR_MARKER=".forewarn-e2e-cluster"
readonly READY_TIMEOUT="${FOREWARN_E2E_READY_TIMEOUT:-60}"
SCRIPT_PATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
readonly SCRIPT_PATH

script_start=$SECONDS
log() { printf '[e2e-cluster %3ss] %s\n' "$((SECONDS - script_start))" "$*" >&2; }
fail() {
  printf '\n[e2e-cluster] ERROR: %s\n' "$1" >&2
  if (($# > 1)); then printf '[e2e-cluster] What to do: %s\n' "$2" >&2; fi
  exit 1
}

# shellcheck source=cluster-processes.sh
source "$(dirname "$SCRIPT_PATH")/cluster-processes.sh"
# shellcheck source=cluster-pki.sh
source "$(dirname "$SCRIPT_PATH")/cluster-pki.sh"
# shellcheck source=cluster-controller-manager.sh
source "$(dirname "$SCRIPT_PATH")/cluster-controller-manager.sh"

resolve_data_dir() { # [dir]
  local dir=${1:-${FOREWARN_E2E_DATA_DIR:-}}
  [[ -n $dir ]] || fail "no data dir given" "pass it as an argument or set FOREWARN_E2E_DATA_DIR (from the env file)"
  printf '%s\n' "$dir"
}

require_cluster_dir() { # dir
  [[ -f $1/$DATA_DIR_MARKER ]] ||
    fail "$1 is not a data dir made by '$(basename "$SCRIPT_PATH") start' (no $DATA_DIR_MARKER)" \
      "pass the FOREWARN_E2E_DATA_DIR printed by start"
}

# ---------------------------------------------------------------- etcd
start_etcd() { # data-dir client-port peer-port bin-dir
  local dir=$1 client_url="http://127.0.0.1:$2" peer_url="http://127.0.0.1:$3"
  : >"$dir/etcd.log"
  setsid "$4/etcd" \
    --name forewarn-e2e \
    --data-dir "$dir/etcd-data" \
    --listen-client-urls "$client_url" --advertise-client-urls "$client_url" \
    --listen-peer-urls "$peer_url" --initial-advertise-peer-urls "$peer_url" \
    --initial-cluster "forewarn-e2e=$peer_url" --initial-cluster-state new \
    --logger zap --log-outputs stderr --log-level warn \
    </dev/null >>"$dir/etcd.log" 2>&1 &
  printf '%s\n' "$!" >"$dir/etcd.pid"
}

wait_for_etcd() { # data-dir client-port -> 0 ready, 1 died, 2 timeout
  local dir=$1 pid deadline=$((SECONDS + READY_TIMEOUT))
  pid=$(read_pid_file "$dir/etcd.pid")
  while ((SECONDS < deadline)); do
    if curl -fsS --max-time 2 "http://127.0.0.1:$2/health" 2>/dev/null | grep -q '"health":"true"'; then
      return 0
    fi
    pid_is_ours "$pid" etcd "$dir" || return 1
    sleep 0.2
  done
  return 2
}

# Starts etcd on fresh free ports (retrying a lost race for them); writes them to etcd.port and
# etcd-peer.port in the data dir.
start_etcd_on_free_ports() { # data-dir bin-dir
  local dir=$1 bin_dir=$2 etcd_port peer_port attempt status started
  for attempt in 1 2 3; do
    etcd_port=$(pick_free_port)
    peer_port=$(pick_free_port "$etcd_port")
    rm -rf "$dir/etcd-data"
    started=$SECONDS
    start_etcd "$dir" "$etcd_port" "$peer_port" "$bin_dir"
    status=0
    wait_for_etcd "$dir" "$etcd_port" || status=$?
    ((status == 0)) && break
    stop_process etcd "$dir/etcd.pid" etcd "$dir" 1 KILL
    if ((status == 1)) && grep -q 'address already in use' "$dir/etcd.log" && ((attempt < 3)); then
      log "etcd lost a race for its ports; retrying with new ones"
      continue
    fi
    tail -n 20 "$dir/etcd.log" >&2 || true
    fail "etcd did not become healthy (log above, from $dir/etcd.log)" "check that it runs: $bin_dir/etcd --version"
  done
  log "etcd ready on 127.0.0.1:$etcd_port in $((SECONDS - started))s (pid $(read_pid_file "$dir/etcd.pid"))"
  printf '%s\n' "$etcd_port" >"$dir/etcd.port"
  printf '%s\n' "$peer_port" >"$dir/etcd-peer.port"
}

# ---------------------------------------------------------------- kube-apiserver
write_apiserver_args() { # data-dir api-port etcd-port
  local dir=$1 pki=$1/pki extra=()
  read -r -a extra <<<"${FOREWARN_E2E_APISERVER_EXTRA_ARGS:-}"
  {
    printf '%s\n' \
      "--bind-address=127.0.0.1" \
      "--advertise-address=127.0.0.1" \
      "--secure-port=$2" \
      "--etcd-servers=http://127.0.0.1:$3" \
      "--cert-dir=$dir/apiserver-certs" \
      "--tls-cert-file=$pki/apiserver.crt" \
      "--tls-private-key-file=$pki/apiserver.key" \
      "--client-ca-file=$pki/ca.crt" \
      "--token-auth-file=$pki/tokens.csv" \
      "--service-account-key-file=$pki/service-account.pub" \
      "--service-account-signing-key-file=$pki/service-account.key" \
      "--service-account-issuer=$SERVICE_ACCOUNT_ISSUER" \
      "--api-audiences=$SERVICE_ACCOUNT_ISSUER" \
      "--service-cluster-ip-range=$SERVICE_CLUSTER_IP_RANGE" \
      "--authorization-mode=Node,RBAC" \
      "--enable-admission-plugins=NodeRestriction" \
      "--allow-privileged=true" \
      "--endpoint-reconciler-type=none" \
      "--profiling=false" \
      "--v=1"
    if ((${#extra[@]} > 0)); then printf '%s\n' "${extra[@]}"; fi
  } >"$dir/apiserver.args"
}

start_apiserver_process() { # data-dir
  local dir=$1 bin_dir args=()
  bin_dir=$(env_value "$dir" FOREWARN_E2E_BIN_DIR)
  mapfile -t args <"$dir/apiserver.args"
  printf '=== kube-apiserver started %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$dir/apiserver.log"
  # The data dir is on the command line (certificate paths), which pid_is_ours relies on.
  setsid "$bin_dir/kube-apiserver" "${args[@]}" </dev/null >>"$dir/apiserver.log" 2>&1 &
  printf '%s\n' "$!" >"$dir/apiserver.pid"
}

wait_for_apiserver() { # data-dir -> 0 ready, 1 died, 2 timeout
  local dir=$1 pki=$1/pki pid url deadline=$((SECONDS + READY_TIMEOUT))
  pid=$(read_pid_file "$dir/apiserver.pid")
  url=$(env_value "$dir" FOREWARN_E2E_API_URL)
  while ((SECONDS < deadline)); do
    if [[ $(curl -sS --max-time 3 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
      "$url/readyz" 2>/dev/null || true) == ok ]]; then
      return 0
    fi
    pid_is_ours "$pid" kube-apiserver "$dir" || return 1
    sleep 0.25
  done
  return 2
}

# Starts the API server with the saved flags and waits for /readyz; on failure shows its log.
launch_apiserver_and_wait() { # data-dir
  local dir=$1 started=$SECONDS status=0 port
  port=$(env_value "$dir" FOREWARN_E2E_API_PORT)
  if port_in_use "$port"; then
    fail "port $port is already in use: the API server cannot start there" \
      "stop whatever listens on 127.0.0.1:$port (an API server that is still running? use kill-apiserver first)"
  fi
  start_apiserver_process "$dir"
  wait_for_apiserver "$dir" || status=$?
  if ((status != 0)); then
    tail -n 30 "$dir/apiserver.log" >&2 || true
    stop_process kube-apiserver "$dir/apiserver.pid" kube-apiserver "$dir" 1 KILL
    if ((status == 1)); then
      fail "kube-apiserver exited during startup (log: $dir/apiserver.log, last lines above)" \
        "read the log; check that etcd is running ($(basename "$SCRIPT_PATH") status $dir)"
    fi
    fail "kube-apiserver was not ready within ${READY_TIMEOUT}s (log: $dir/apiserver.log)" \
      "the machine may be overloaded: raise FOREWARN_E2E_READY_TIMEOUT, or read the log"
  fi
  set_env_value "$dir" FOREWARN_E2E_APISERVER_PID "$(read_pid_file "$dir/apiserver.pid")"
  log "kube-apiserver ready on $(env_value "$dir" FOREWARN_E2E_API_URL) in $((SECONDS - started))s (pid $(read_pid_file "$dir/apiserver.pid"))"
}

# ---------------------------------------------------------------- env file
env_value() { # data-dir key
  sed -n "s/^$2='\\(.*\\)'\$/\\1/p" "$1/cluster.env" | tail -n 1
}
set_env_value() { # data-dir key value
  local file=$1/cluster.env
  grep -v "^$2=" "$file" >"$file.tmp" || true
  printf "%s='%s'\n" "$2" "$3" >>"$file.tmp"
  mv "$file.tmp" "$file"
}

# ---------------------------------------------------------------- watchdog
start_watchdog() { # data-dir owner-pid
  local dir=$1 owner=$2
  [[ -e /proc/$owner ]] || fail "FOREWARN_E2E_OWNER_PID=$owner is not a running process"
  # shellcheck disable=SC2016 # the inner script expands its own positional parameters
  setsid bash -c '
    owner=$1 dir=$2 script=$3
    while [[ -e /proc/$owner && -d $dir ]]; do sleep 2; done
    if [[ -d $dir ]]; then echo "owner $owner is gone: stopping the cluster"; exec bash "$script" stop "$dir"; fi
  ' forewarn-e2e-watchdog "$owner" "$dir" "$SCRIPT_PATH" </dev/null >>"$dir/watchdog.log" 2>&1 &
  printf '%s\n' "$!" >"$dir/watchdog.pid"
}

# ---------------------------------------------------------------- subcommands
command_start() {
  local bin_dir=${FOREWARN_TOOLS_BIN:-${FOREWARN_E2E_BIN_DIR:-}}
  [[ -n $bin_dir ]] ||
    fail "no bin dir: FOREWARN_TOOLS_BIN is not set" "set it to the last line of: FOREWARN_TOOLS_ONLY='kubernetes etcd' bash test/e2e/provision/build-tools.sh"
  local tool
  for tool in etcd kube-apiserver kube-controller-manager kubectl; do
    [[ -x $bin_dir/$tool ]] ||
      fail "$bin_dir/$tool is missing" "build it first: FOREWARN_TOOLS_ONLY='kubernetes etcd' bash test/e2e/provision/build-tools.sh"
  done
  for tool in openssl curl setsid base64; do
    command -v "$tool" >/dev/null 2>&1 || fail "'$tool' is not installed" "apt-get install openssl curl coreutils util-linux"
  done
  local kubernetes_version
  kubernetes_version=$("$bin_dir/kube-apiserver" --version | awk '{print $2}')

  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/forewarn-e2e.XXXXXX")
  touch "$dir/$DATA_DIR_MARKER"
  log "data dir $dir"
  # If anything below fails (fail() exits), tear down what was started.
  # shellcheck disable=SC2064 # expand now: the path is fixed
  trap "bash '$SCRIPT_PATH' stop '$dir' >/dev/null 2>&1 || true" EXIT

  local started=$SECONDS
  generate_certificates "$dir/pki"
  log "certificates generated in $((SECONDS - started))s"

  local etcd_port peer_port api_port
  start_etcd_on_free_ports "$dir" "$bin_dir"
  etcd_port=$(<"$dir/etcd.port")
  peer_port=$(<"$dir/etcd-peer.port")

  api_port=$(pick_free_port "$etcd_port" "$peer_port")
  {
    printf "%s='%s'\n" \
      FOREWARN_E2E_DATA_DIR "$dir" \
      KUBECONFIG "$dir/kubeconfig" \
      FOREWARN_E2E_API_URL "https://127.0.0.1:$api_port" \
      FOREWARN_E2E_API_PORT "$api_port" \
      FOREWARN_E2E_ETCD_URL "http://127.0.0.1:$etcd_port" \
      FOREWARN_E2E_ETCD_PID "$(read_pid_file "$dir/etcd.pid")" \
      FOREWARN_E2E_BIN_DIR "$bin_dir" \
      FOREWARN_E2E_KUBERNETES_VERSION "$kubernetes_version" \
      FOREWARN_E2E_KUBECTL "$bin_dir/kubectl" \
      FOREWARN_E2E_CA_FILE "$dir/pki/ca.crt" \
      FOREWARN_E2E_CLIENT_CERT_FILE "$dir/pki/admin.crt" \
      FOREWARN_E2E_CLIENT_KEY_FILE "$dir/pki/admin.key" \
      FOREWARN_E2E_ADMIN_TOKEN_FILE "$dir/pki/admin.token" \
      FOREWARN_E2E_APISERVER_LOG "$dir/apiserver.log" \
      FOREWARN_E2E_ETCD_LOG "$dir/etcd.log" \
      FOREWARN_E2E_CONTROLLER_MANAGER_LOG "$dir/controller-manager.log"
  } >"$dir/cluster.env"
  write_kubeconfig "$dir/kubeconfig" "https://127.0.0.1:$api_port" "$dir/pki"
  write_kubeconfig "$dir/controller-manager.kubeconfig" "https://127.0.0.1:$api_port" "$dir/pki" controller-manager
  write_apiserver_args "$dir" "$api_port" "$etcd_port"

  if [[ -n ${FOREWARN_E2E_OWNER_PID:-} ]]; then
    start_watchdog "$dir" "$FOREWARN_E2E_OWNER_PID"
    log "watchdog will stop the cluster when pid $FOREWARN_E2E_OWNER_PID exits"
  fi

  launch_apiserver_and_wait "$dir"
  if [[ ${FOREWARN_E2E_CONTROLLER_MANAGER:-1} != 0 ]]; then launch_controller_manager_and_wait "$dir"; fi
  trap - EXIT
  log "cluster up in $((SECONDS - script_start))s; env file $dir/cluster.env"
  cat "$dir/cluster.env"
}

command_stop() {
  local dir
  dir=$(resolve_data_dir "${1:-}")
  if [[ ! -d $dir ]]; then
    log "$dir does not exist: nothing to stop"
    return 0
  fi
  require_cluster_dir "$dir"
  local watchdog_pid
  watchdog_pid=$(read_pid_file "$dir/watchdog.pid")
  if [[ -n $watchdog_pid && $watchdog_pid != "$$" ]] && pid_is_ours "$watchdog_pid" forewarn-e2e-watchdog "$dir"; then
    kill -KILL "$watchdog_pid" 2>/dev/null || true
  fi
  # SIGTERM is graceful and waits for open watches: give it a short grace, then SIGKILL.
  stop_process kube-controller-manager "$dir/controller-manager.pid" kube-controller-manager "$dir" 3 TERM
  stop_process kube-apiserver "$dir/apiserver.pid" kube-apiserver "$dir" 5 TERM
  stop_process etcd "$dir/etcd.pid" etcd "$dir" 10 TERM
  rm -rf "$dir"
  log "stopped; removed $dir"
}

command_kill_apiserver() {
  local dir pid
  dir=$(resolve_data_dir "${1:-}")
  require_cluster_dir "$dir"
  pid=$(read_pid_file "$dir/apiserver.pid")
  if ! pid_is_ours "$pid" kube-apiserver "$dir"; then
    log "kube-apiserver is not running"
    rm -f "$dir/apiserver.pid"
    return 0
  fi
  kill -KILL "$pid"
  wait_for_exit "$pid" 10 || fail "kube-apiserver (pid $pid) survived SIGKILL for 10s"
  rm -f "$dir/apiserver.pid"
  set_env_value "$dir" FOREWARN_E2E_APISERVER_PID ""
  log "kube-apiserver (pid $pid) killed with SIGKILL"
}

command_start_apiserver() {
  local dir
  dir=$(resolve_data_dir "${1:-}")
  require_cluster_dir "$dir"
  if pid_is_ours "$(read_pid_file "$dir/apiserver.pid")" kube-apiserver "$dir"; then
    fail "kube-apiserver is already running (pid $(read_pid_file "$dir/apiserver.pid"))" "kill-apiserver first"
  fi
  pid_is_ours "$(read_pid_file "$dir/etcd.pid")" etcd "$dir" ||
    fail "etcd is not running, so the API server would have no state" "start a fresh cluster with '$(basename "$SCRIPT_PATH") start'"
  launch_apiserver_and_wait "$dir"
}

command_status() {
  local dir name pid
  dir=$(resolve_data_dir "${1:-}")
  require_cluster_dir "$dir"
  for name in etcd kube-apiserver kube-controller-manager; do
    pid=$(read_pid_file "$dir/${name#kube-}.pid")
    if pid_is_ours "$pid" "$name" "$dir"; then echo "$name running (pid $pid)"; else echo "$name stopped"; fi
  done
}

main() {
  local subcommand=${1:-}
  shift || true
  case $subcommand in
    start) command_start ;;
    stop) command_stop "$@" ;;
    kill-apiserver) command_kill_apiserver "$@" ;;
    start-apiserver) command_start_apiserver "$@" ;;
    status) command_status "$@" ;;
    *)
      echo "usage: $(basename "$0") start | stop [DATA_DIR] | kill-apiserver [DATA_DIR] | start-apiserver [DATA_DIR] | status [DATA_DIR]" >&2
      exit 2
      ;;
  esac
}

main "$@"
