#!/bin/sh
# dump_compressed: `perf record -z` wraps records in zstd-compressed
# PERF_RECORD_COMPRESSED records. loop leaves random bytes on its stack, so
# DWARF stack copies compress badly, perf splits a flush over several
# COMPRESSED records and records straddle two of them. Checked in file and in
# pipe mode. perf prints each record unpacked from a COMPRESSED record with
# the offset of that record (of the second one for a record that straddles
# two) and does not dump the COMPRESSED records themselves: `pystitch dump`
# must print `perf report -D`'s text, byte for byte.
# Now and then (about one run in ten) perf 6.1 leaves the end of the zstd
# stream in its compressor: the capture then ends inside a record and has no
# EXIT record. perf report drops the incomplete tail silently; pystitch must
# too.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
status=0
full=0
for mode in file pipe; do
	if [ $mode = file ]; then
		e2e_record "$E2E_TMP/perf.data" -z -m 256 -F 999 --call-graph dwarf -- "$E2E_PROGRAMS/loop" 0.5
	else
		e2e_record - -z -m 256 -F 999 --call-graph dwarf -- "$E2E_PROGRAMS/loop" 0.5
	fi
	e2e_count_compressed "$E2E_RECORDED"
	e2e_perf_dump "$E2E_RECORDED"
	tail=
	grep -q '^ *EXIT events:' "$E2E_TMP/perf-dump.txt" ||
		tail=", no EXIT record: the stream ends inside a record"
	e2e_say "$e2e_name ($mode): $E2E_COMPRESSED COMPRESSED records, $E2E_COMPRESSED_FULL of them full$tail"
	[ "$E2E_COMPRESSED" -gt 0 ] || { e2e_say "no COMPRESSED record in the -z capture"; status=1; }
	full=$((full + E2E_COMPRESSED_FULL))
	e2e_pystitch_dump "$E2E_RECORDED"
	e2e_compare "$e2e_name ($mode)" 150 || status=1
	e2e_compare_no_hex "$E2E_RECORDED" "$e2e_name ($mode)" || status=1
done
if [ $full -eq 0 ]; then
	e2e_say "$e2e_name: no capture has a full COMPRESSED record, so no record straddled two of them"
	status=1
fi
exit $status
