#!/bin/sh
# script_tracepoint: `perf record -e sched:sched_switch` of a program that
# sleeps often, without and with -g; `pystitch script` must print the
# tracepoint fields (and with -g the kernel and user call chain) exactly as
# `perf script` does.
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
exit $failed
