#!/usr/bin/env bash
# busy_load.sh: a machine as busy as a shared CI runner, for running the
# test suite beside it (`bench/busy_load.sh 1800 & scripts/test`): for
# SECONDS (default 600), in parallel,
#  - perf records CPython -X perf programs one after another (each writes
#    /tmp/perf-PID.map, as the suite's Python tests do), and
#  - short processes are started as fast as the machine allows, so that
#    pids wrap around pid_max within minutes and come back to pids the
#    suite's own processes had.
# It removes only the files of the processes it started, and prints how
# many recordings and processes it made. Needs perf and root.
#   usage: bench/busy_load.sh [SECONDS] [PYTHON]
set -u
seconds=${1:-600}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
python=${2:-$(find_python 12 2>/dev/null || find_python 13 2>/dev/null)}
[ -x "$python" ] || {
	echo "busy_load: no CPython 3.12+ found (give one as the second argument)" >&2
	exit 2
}
work=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-busy-load.XXXXXX") || exit 2
end=$(($(date +%s) + seconds))
# stopped early, the recording in flight ends (a second or so) and its
# program's perf map is removed as the others are
cleanup() {
	touch "$work/stop"
	[ -z "$churn_pid" ] || kill "$churn_pid" 2>/dev/null
	[ -z "$record_pid" ] || wait "$record_pid" 2>/dev/null
	rm -rf "$work"
}
churn_pid='' record_pid=''
trap cleanup EXIT
trap 'exit 130' INT TERM

churn() {
	local n=0
	while [ "$(date +%s)" -lt "$end" ]; do
		for _ in $(seq 200); do /bin/true; done
		n=$((n + 200))
	done
	echo "$n" >"$work/churned"
}

record() {
	local n=0 pid
	while [ "$(date +%s)" -lt "$end" ] && [ ! -e "$work/stop" ]; do
		perf record -q -F 999 -g -o "$work/load.data" -- "$python" -X perf -c '
import os, sys
def leaf(n):
    return sum(i * i for i in range(n))
def mid(n):
    return leaf(n) + leaf(n // 2)
for _ in range(40):
    mid(20000)
print(os.getpid(), file=sys.stderr)' 2>"$work/pid" >/dev/null
		pid=$(tail -n 1 "$work/pid")
		case $pid in
		'' | *[!0-9]*) ;;
		*) rm -f "/tmp/perf-$pid.map" ;;
		esac
		n=$((n + 1))
	done
	echo "$n" >"$work/recorded"
}

churn &
churn_pid=$!
record &
record_pid=$!
wait
echo "busy_load: $(cat "$work/recorded" 2>/dev/null || echo 0) Python recordings, $(cat "$work/churned" 2>/dev/null || echo 0) short processes in ${seconds} s (pid_max $(cat /proc/sys/kernel/pid_max))"
