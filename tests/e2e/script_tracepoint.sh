#!/bin/sh
# script_tracepoint: `perf record -e sched:sched_switch` of a program that
# sleeps often, without and with -g; `pystitch script` must print the
# tracepoint fields (and with -g the kernel and user call chain) exactly as
# `perf script` does. Also the allocations of kmem:kmalloc and kmem:kfree
# (and `perf kmem record`), whose call_site argument perf prints as the
# kernel function holding it (%pS: name+0xoffset): perf script resolves it
# with the kernel's symbols.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0
E2E_MIN_SAMPLES=20
e2e_record "$E2E_TMP/tp.data" -e sched:sched_switch -- "$E2E_PROGRAMS/sleeper" 50 1000
e2e_script_diff "sched_switch" 100 "$E2E_TMP/tp.data" || failed=1
e2e_record "$E2E_TMP/tp-g.data" -e sched:sched_switch -g -- "$E2E_PROGRAMS/sleeper" 50 1000
e2e_script_diff "sched_switch -g" 100 "$E2E_TMP/tp-g.data" || failed=1
e2e_script_diff "sched_switch -g: -F comm,tid,event,trace" 100 "$E2E_TMP/tp-g.data" -F comm,tid,event,trace ||
	failed=1
E2E_MIN_SAMPLES=50
e2e_record "$E2E_TMP/kmem.data" -e kmem:kmalloc -e kmem:kfree -a -- "$E2E_PROGRAMS/sleeper" 20 1000
e2e_script_diff "kmalloc, kfree" 100 "$E2E_TMP/kmem.data" || failed=1
grep -q 'call_site=[A-Za-z_][A-Za-z0-9_.]*+0x[0-9a-f]* ' "$E2E_TMP/$E2E_PERF_OUT" || {
	e2e_say "$e2e_name: perf named no call_site"
	failed=1
}
# one writer per event on one reader: each names the call sites
kmem=$E2E_TMP/kmem.data
mkdir "$E2E_TMP/dump-perf" "$E2E_TMP/dump-ours"
e2e_perf script -i "$kmem" --per-event-dump >/dev/null 2>&1 || e2e_fail "perf script --per-event-dump failed"
mv "$kmem".*.dump "$E2E_TMP/dump-perf/"
e2e_run "$PYSTITCH" script -q -i "$kmem" --per-event-dump >/dev/null ||
	e2e_fail "pystitch script --per-event-dump failed"
mv "$kmem".*.dump "$E2E_TMP/dump-ours/"
for f in "$E2E_TMP/dump-perf/"*.dump; do
	if cmp -s "$f" "$E2E_TMP/dump-ours/${f##*/}"; then
		e2e_say "$e2e_name: --per-event-dump: ${f##*/}: identical ($(wc -l <"$f") lines)"
	else
		e2e_say "$e2e_name: --per-event-dump: ${f##*/}: DIFFERENT"
		failed=1
	fi
done
exit $failed
