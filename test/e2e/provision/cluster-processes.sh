# Sourced by cluster.sh: free loopback ports, and the processes it starts (PID files, checks that a
# PID is still ours, stopping with a grace period). See docs/e2e.md.
# shellcheck shell=bash
port_in_use() { (: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A loopback port nobody listens on, below Linux's ephemeral range, not in the exclusion list.
pick_free_port() { # excluded ports...
  local port excluded
  for _ in $(seq 1 200); do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 12000))
    for excluded in "$@"; do
      [[ $port == "$excluded" ]] && continue 2
    done
    port_in_use "$port" || {
      printf '%s\n' "$port"
      return 0
    }
  done
  fail "found no free loopback port in 20000-31999" "check what is listening: ss -ltn"
}

# True when PID is alive and its command line mentions both NEEDLE strings (guards PID reuse).
pid_is_ours() { # pid binary-name data-dir
  local pid=$1 cmdline
  [[ -n $pid && -r /proc/$pid/cmdline ]] || return 1
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmdline == *"$2"* && $cmdline == *"$3"* ]]
}

read_pid_file() {
  if [[ -f $1 ]]; then cat "$1"; fi
}

wait_for_exit() { # pid timeout-seconds -> 0 when gone
  local pid=$1 deadline=$((SECONDS + $2))
  while [[ -e /proc/$pid ]] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

stop_process() { # name pid-file binary data-dir grace-seconds signal-first
  local name=$1 pid_file=$2 binary=$3 data_dir=$4 grace=$5 first_signal=$6 pid
  pid=$(read_pid_file "$pid_file")
  if pid_is_ours "$pid" "$binary" "$data_dir"; then
    log "stopping $name (pid $pid, SIG$first_signal)"
    kill "-$first_signal" "$pid" 2>/dev/null || true
    if ! wait_for_exit "$pid" "$grace"; then
      log "$name did not exit within ${grace}s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      wait_for_exit "$pid" 10 || log "WARNING: $name (pid $pid) survived SIGKILL"
    fi
  fi
  rm -f "$pid_file"
}
