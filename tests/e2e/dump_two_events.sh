#!/bin/sh
# dump_two_events: two events in one capture (`-e cpu-clock -e task-clock`)
# add PERF_SAMPLE_IDENTIFIER and need samples matched to attrs by id; in
# pipe mode perf dumps the second ATTR record with the timestamp columns of
# the first event. `pystitch dump` must print `perf report -D`'s text, byte
# for byte, in file and in pipe mode.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
status=0
e2e_record "$E2E_TMP/perf.data" -F 999 -e cpu-clock -e task-clock -- "$E2E_PROGRAMS/loop" 0.3
e2e_compare_dump "$E2E_TMP/perf.data" "$e2e_name (file)" 200 || status=1
e2e_record - -F 999 -e cpu-clock -e task-clock -- "$E2E_PROGRAMS/loop" 0.3
e2e_compare_dump "$E2E_RECORDED" "$e2e_name (pipe)" 200 || status=1
[ "$(grep -c 'PERF_RECORD_ATTR$' "$E2E_TMP/perf-dump.txt")" = 2 ] ||
	e2e_fail "perf printed not two ATTR records in pipe mode (the test no longer checks them)"
exit $status
