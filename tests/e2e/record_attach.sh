#!/bin/sh
# record_attach: `pystitch record --pid PID --duration S` on a running
# CPython 3.12 (tests/programs/pychains.py).
#  - started with -X perf: every Python frame is named; at least 99% of
#    the samples carry exactly the chain the interpreter reported, and the
#    map the process wrote itself is left where it is;
#  - started without it: one line says how to start it so that its frames
#    get names (`-X perf`), and record records anyway (exit status 0).
# CPython 3.14's remote activation is record_remote_exec.sh's.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

workload=$e2e_dir/../programs/pychains.py
min_samples=300
failed=0
summary=
python=$(e2e_newest_python 12) || python=$(e2e_newest_python 13) ||
	e2e_skip "no CPython 3.12+ under \$(pyenv root)/versions (or ~/.pyenv/versions)"
e2e_say "$e2e_name: python: $python"

target=
# shellcheck disable=SC2317 # called by the trap
finish() {
	if [ -n "$target" ]; then
		kill "$target" 2>/dev/null
		rm -f "/tmp/perf-$target.map"
	fi
	e2e_cleanup
}
trap finish EXIT

# attach NAME ARGS...: runs the workload with ARGS for 5 s of CPU time,
# records it for 2 s from 1 s in, into $E2E_TMP/NAME.txt (stderr NAME.log)
attach() {
	at_name=$1
	shift
	"$python" "$@" "$workload" 5 "$E2E_TMP/$at_name.expected" &
	target=$!
	sleep 1
	e2e_run "$PYSTITCH" record --pid "$target" --duration 2 -o "$E2E_TMP/$at_name.txt" \
		2>"$E2E_TMP/$at_name.log" || {
		at_status=$?
		e2e_show "$E2E_TMP/$at_name.log"
		e2e_fail "$at_name: record --pid failed (exit status $at_status)"
	}
	wait "$target"
}

attach named -X perf
[ -s "/tmp/perf-$target.map" ] || e2e_fail "named: record removed the map the process wrote itself"
rm -f "/tmp/perf-$target.map"
target=
e2e_chains "record --pid, -X perf" "$E2E_TMP/named.expected" named.txt

attach unnamed
rm -f "/tmp/perf-$target.map"
target=
grep -q "pid [0-9]* (python3[.0-9]*): CPython 3.1[23] without perf trampolines: its Python frames will not be named (start it with -X perf or PYTHONPERFSUPPORT=1); recording anyway" \
	"$E2E_TMP/unnamed.log" || e2e_fail "unnamed: no line saying how to start it: $(cat "$E2E_TMP/unnamed.log")"
samples=$(grep -c '^[^[:space:]]' "$E2E_TMP/unnamed.txt")
[ "$samples" -ge "$min_samples" ] || e2e_fail "unnamed: $samples samples recorded"
e2e_say "unnamed: told how to start it; $samples samples recorded"

[ "$failed" = 0 ] || e2e_fail "chains below 99%:$summary"
