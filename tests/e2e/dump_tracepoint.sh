#!/bin/sh
# dump_tracepoint: `-e sched:sched_switch` on a program that sleeps often:
# RAW tracepoint samples, CPU columns, and the tracepoint formats (feature
# TRACING_DATA in a file; in pipe mode a HEADER_TRACING_DATA record whose
# payload lies outside its size field). `pystitch dump` must print `perf
# report -D`'s text, byte for byte.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
status=0
e2e_record "$E2E_TMP/perf.data" -e sched:sched_switch -- "$E2E_PROGRAMS/sleeper" 50 1000
e2e_compare_dump "$E2E_RECORDED" "$e2e_name (file)" 20 || status=1
e2e_record - -e sched:sched_switch -- "$E2E_PROGRAMS/sleeper" 50 1000
e2e_compare_dump "$E2E_RECORDED" "$e2e_name (pipe)" 20 || status=1
grep -q 'PERF_RECORD_TRACING_DATA' "$E2E_TMP/perf-dump.txt" || {
	e2e_say "$e2e_name (pipe): perf shows no TRACING_DATA record in the pipe capture"
	status=1
}
exit $status
