# guest-common.sh: what the VM rig's guest scripts (guest-e2e.sh, guest-l2cap.sh, guest-monitor.sh) share.
# Sourced, not run. It defines PIDS (every background process: the caller appends, cleanup stops
# them, newest first, TERM then KILL, at exit), to_us, log (each line prefixed "[$LOG_NAME Ns]",
# seconds since it was sourced), nap and wait_until, and resets FAILED and PASSED. The caller sets
# LOG_NAME first (or defines its own log after) and defines its own pass and fail.

PIDS=()
cleanup() {
    local i
    for (( i=${#PIDS[@]}-1; i>=0; i-- )); do kill "${PIDS[$i]}" 2>/dev/null; done
    sleep 0.5
    for (( i=${#PIDS[@]}-1; i>=0; i-- )); do kill -9 "${PIDS[$i]}" 2>/dev/null; done
}
trap cleanup EXIT
# to_us VAR SECONDS.FRACTION: VAR = that time in microseconds.
to_us() { local s=${2%.*} f=000000; [[ $2 == *.* ]] && f=${2#*.}000000; printf -v "$1" '%d' $(( s * 1000000 + 10#${f:0:6} )); }
T_START=$EPOCHREALTIME
log() { local now begin; to_us now "$EPOCHREALTIME"; to_us begin "$T_START"; echo "[$LOG_NAME $(( (now - begin) / 1000000 ))s] $*"; }
exec {NAP_FD}<> <(:)                                                 # nap: read -t on a pipe nobody writes
nap() { read -r -t "$1" -u "$NAP_FD" _ || :; }
# wait_until SECONDS COMMAND...: runs COMMAND every 0.2 s until it succeeds (0) or time is up (1).
# (Its locals have odd names: COMMAND may be a function that reads its caller's variables.)
wait_until() {
    local _wu_end _wu_now; to_us _wu_end "$EPOCHREALTIME"; _wu_end=$(( _wu_end + $1 * 1000000 )); shift
    while :; do
        "$@" && return 0
        to_us _wu_now "$EPOCHREALTIME"; (( _wu_now >= _wu_end )) && return 1
        nap 0.2
    done
}
FAILED=0; PASSED=0
