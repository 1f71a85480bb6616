#!/bin/sh
# dump_stdin: `perf record -o - ... | pystitch dump -i -` reads the pipe format
# from a real pipe and must print what `perf report -D` prints of a copy of
# the stream (tee), byte for byte.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
stream=$E2E_TMP/stream.data
{
	"$PERF" record -o - -F 999 -- "$E2E_PROGRAMS/loop" 0.3 2>"$E2E_TMP/record.err"
	echo $? >"$E2E_TMP/record.status"
} | tee "$stream" | e2e_run "$PYSTITCH" dump -i - >"$E2E_TMP/pystitch-dump.txt" 2>"$E2E_TMP/pystitch-dump.err"
pystitch_status=$?
[ "$(cat "$E2E_TMP/record.status")" = 0 ] || e2e_record_failed "$E2E_TMP/record.err"
if [ $pystitch_status -ne 0 ]; then
	e2e_show "$E2E_TMP/pystitch-dump.err"
	e2e_fail "perf record -o - | pystitch dump -i - failed (exit status $pystitch_status)"
fi
e2e_perf_dump "$stream"
status=0
e2e_compare "$e2e_name" 100 || status=1
e2e_compare_no_hex "$stream" "$e2e_name (the saved stream)" || status=1
exit $status
