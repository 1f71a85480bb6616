#!/bin/sh
# record_remote_exec: `pystitch record --pid` on a running CPython 3.14
# started without -X perf. record turns its perf trampolines on through
# sys.remote_exec() (PEP 768), says so, records, turns them off again and
# says so, and removes the map the process wrote because of it. Functions
# called after that are named: at least 99% of the samples carry the
# leaf end of the chain the interpreter reported (pychains_check.py
# --suffix: the frames that were already running stay unnamed).
# A target that ends before the recording does: record says so, not that
# it could not turn the trampolines off.
# A 3.14 comes only from PS_E2E_PYTHONS (README.md, "Building by hand"):
# without one the test says SKIP, also under CI=true.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

workload=$e2e_dir/../programs/pychains.py
min_samples=300
failed=0
summary=
python=
for candidate in ${PS_E2E_PYTHONS:-}; do
	"$candidate" -c 'import sys; sys.exit(not hasattr(sys, "remote_exec"))' 2>/dev/null &&
		python=$candidate && break
done
[ -n "$python" ] ||
	e2e_skip_optional "no CPython 3.14+ (with sys.remote_exec) in PS_E2E_PYTHONS"
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

# 12 s of CPU time: the target outlives record's 2 s, started 1 s in, and
# perf's end (which reads the whole capture), also on a free-threaded
# CPython, where its two threads run at once (6 s)
"$python" "$workload" 12 "$E2E_TMP/late.expected" &
target=$!
sleep 1
[ -e "/tmp/perf-$target.map" ] && e2e_fail "the target wrote a perf map before record turned it on"
e2e_run "$PYSTITCH" record --pid "$target" --duration 2 -o "$E2E_TMP/late.txt" \
	2>"$E2E_TMP/late.log" || {
	status=$?
	e2e_show "$E2E_TMP/late.log"
	e2e_fail "record --pid failed (exit status $status)"
}
grep -q "pid $target (python3[.0-9t]*): turned CPython 3.1[4-9]'s perf trampolines on (sys.remote_exec)" "$E2E_TMP/late.log" ||
	e2e_fail "record did not say it turned the trampolines on: $(cat "$E2E_TMP/late.log")"
grep -q "pid $target (python3[.0-9t]*): turned perf trampolines off again" "$E2E_TMP/late.log" ||
	e2e_fail "record did not say it turned them off: $(cat "$E2E_TMP/late.log")"
[ -e "/tmp/perf-$target.map" ] && e2e_fail "record left the map it made the process write"
wait "$target"
target=
e2e_chains "record --pid, 3.14 activated remotely" "$E2E_TMP/late.expected" late.txt --suffix
[ "$failed" = 0 ] || e2e_fail "chains below 99%:$summary"

# a target that ends first (a zombie until the wait below)
# 3 s of CPU time: 1.5 s on a free-threaded CPython, time enough for
# record to turn the trampolines on; record's 6 s outlast it either way
"$python" "$workload" 3 "$E2E_TMP/short.expected" &
target=$!
sleep 0.3
e2e_run "$PYSTITCH" record --pid "$target" --duration 6 -o "$E2E_TMP/short.txt" \
	2>"$E2E_TMP/short.log" || {
	e2e_show "$E2E_TMP/short.log"
	e2e_fail "record --pid of a target that ends first failed"
}
grep -q "pid $target: ended before the recording did; nothing to turn off" "$E2E_TMP/short.log" ||
	e2e_fail "record did not say the target had ended: $(cat "$E2E_TMP/short.log")"
wait "$target"
rm -f "/tmp/perf-$target.map"
target=
exit 0
