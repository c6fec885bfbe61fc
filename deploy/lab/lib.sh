# Helpers every lab script shares (sourced, not run): processes started by `up` are stopped by
# their PID files in $dir, children too (PHP's server workers), politely first.

alive() {  # alive PID: the process runs (kill -0 succeeds on a zombie too: dead, not yet reaped)
    kill -0 "$1" 2>/dev/null || return 1
    [ -r "/proc/$1/status" ] || return 0
    ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

stop_pid() {  # stop_pid PID: a process and its children
    local pid="$1"
    alive "$pid" || return 0
    pkill -TERM -P "$pid" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
    # Stopped once it is dead, reaped or not (whoever adopted it, often init, reaps it in its
    # own time: over a second on some machines, for every process a `down` stops).
    for _ in $(seq 50); do alive "$pid" || return 0; sleep 0.1; done
    pkill -KILL -P "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
}

stop_all() {  # stop_all NAME...: every process whose PID is in $dir/NAME.pid
    local name
    for name in "$@"; do
        if [ -f "$dir/$name.pid" ]; then
            stop_pid "$(cat "$dir/$name.pid")"
            rm -f "$dir/$name.pid"
        fi
    done
}

# Packages are installed by one lab script at a time (apt's own lock fails a second one at
# once): `prepare` in the background and an `up` that needs the same packages take turns.
with_package_lock() {  # with_package_lock COMMAND...
    local locks="${SKILLSHIFT_LAB_CACHE:-$HOME/.cache/skillshift-lab}"
    mkdir -p "$locks"
    ( flock 8; "$@" ) 8>"$locks/.lock-packages"
}

running() { [ -f "$dir/$1.pid" ] && alive "$(cat "$dir/$1.pid")"; }

wait_for() {  # wait_for SECONDS COMMAND...: until COMMAND succeeds, at most SECONDS
    local deadline=$((SECONDS + $1)); shift
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.2
    done
}
