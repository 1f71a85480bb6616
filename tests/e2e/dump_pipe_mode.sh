#!/bin/sh
# dump_pipe_mode: `perf record -o -` writes the pipe format (attrs, features
# and event names as records): `pystitch dump` of the saved stream must be
# `perf report -D`'s text, byte for byte ("0@pipe", "-1 -1 " before the
# first ATTR is known).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
e2e_record - -F 999 -- "$E2E_PROGRAMS/loop" 0.3
e2e_compare_dump "$E2E_RECORDED" "$e2e_name" 100
grep -q '^-1 -1 0 \[0x[0-9a-f]*\]: PERF_RECORD_ATTR$' "$E2E_TMP/perf-dump.txt" ||
	e2e_fail "perf printed no \"-1 -1 0 [...]: PERF_RECORD_ATTR\" line (the test no longer checks it)"
