# Sourced by cluster.sh: start kube-controller-manager and wait until it works. See docs/e2e.md.
# shellcheck shell=bash
# ---------------------------------------------------------------- kube-controller-manager
# Namespace deletion, garbage collection, quota usage, ServiceAccounts (and their `default` in every
# namespace), Deployments -> ReplicaSets -> Pods. Each controller runs as its own ServiceAccount, as in
# a kubeadm cluster. No serving port (--secure-port=0): readiness is the `default` ServiceAccount.
start_controller_manager() { # data-dir
  local dir=$1 bin_dir pki=$1/pki
  bin_dir=$(env_value "$dir" FOREWARN_E2E_BIN_DIR)
  printf '=== kube-controller-manager started %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$dir/controller-manager.log"
  setsid "$bin_dir/kube-controller-manager" \
    "--kubeconfig=$dir/controller-manager.kubeconfig" \
    "--secure-port=0" \
    "--leader-elect=false" \
    "--use-service-account-credentials=true" \
    "--service-account-private-key-file=$pki/service-account.key" \
    "--root-ca-file=$pki/ca.crt" \
    "--service-cluster-ip-range=$SERVICE_CLUSTER_IP_RANGE" \
    "--cluster-signing-cert-file=$pki/ca.crt" \
    "--cluster-signing-key-file=$pki/ca.key" \
    "--concurrent-gc-syncs=5" \
    "--profiling=false" \
    "--v=1" \
    </dev/null >>"$dir/controller-manager.log" 2>&1 &
  printf '%s\n' "$!" >"$dir/controller-manager.pid"
}

launch_controller_manager_and_wait() { # data-dir
  local dir=$1 started=$SECONDS pid deadline
  start_controller_manager "$dir"
  pid=$(read_pid_file "$dir/controller-manager.pid")
  deadline=$((SECONDS + READY_TIMEOUT))
  until "$(env_value "$dir" FOREWARN_E2E_KUBECTL)" --kubeconfig="$dir/kubeconfig" --request-timeout=5s \
    -n default get serviceaccount default >/dev/null 2>&1; do
    if ! pid_is_ours "$pid" kube-controller-manager "$dir"; then
      tail -n 30 "$dir/controller-manager.log" >&2 || true
      fail "kube-controller-manager exited during startup (log: $dir/controller-manager.log, last lines above)" "read the log"
    fi
    if ((SECONDS >= deadline)); then
      tail -n 30 "$dir/controller-manager.log" >&2 || true
      fail "kube-controller-manager created no default ServiceAccount within ${READY_TIMEOUT}s (log: $dir/controller-manager.log)" \
        "the machine may be overloaded: raise FOREWARN_E2E_READY_TIMEOUT, or read the log"
    fi
    sleep 0.25
  done
  set_env_value "$dir" FOREWARN_E2E_CONTROLLER_MANAGER_PID "$pid"
  log "kube-controller-manager ready in $((SECONDS - started))s (pid $pid)"
}
