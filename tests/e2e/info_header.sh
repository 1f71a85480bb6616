#!/bin/sh
# info_header: `pystitch info` must agree with `perf report --header-only` on
# hostname, os release, arch, nrcpus, cmdline and the event names, for a file
# capture and for a pipe capture (whose features arrive as records); and
# `pystitch info -I` the CPU topology's sibling lines of `perf report
# --header-only -I`, with no "use -I" hint left.
. "$(dirname "$0")/lib.sh"
e2e_setup
status=0
e2e_record "$E2E_TMP/perf.data" -F 999 -e cpu-clock -e task-clock -- "$E2E_PROGRAMS/loop" 0.1
e2e_compare_info "$E2E_TMP/perf.data" "$e2e_name (file)" || status=1
"$PYSTITCH" info -I -i "$E2E_TMP/perf.data" >"$E2E_TMP/info-I.txt" 2>"$E2E_TMP/info-I.err" ||
	e2e_fail "pystitch info -I failed: $(cat "$E2E_TMP/info-I.err")"
if grep -q 'use -I to display' "$E2E_TMP/info-I.txt"; then
	e2e_say "FAIL: $e2e_name: info -I still prints a 'use -I' hint" >&2
	status=1
fi
"$PERF" report --header-only -I -i "$E2E_TMP/perf.data" 2>/dev/null |
	grep -E '^# sibling (sockets|threads) :' >"$E2E_TMP/perf-siblings.txt"
grep -E '^# sibling (sockets|threads) :' "$E2E_TMP/info-I.txt" >"$E2E_TMP/siblings.txt"
if [ -s "$E2E_TMP/perf-siblings.txt" ] && ! cmp -s "$E2E_TMP/perf-siblings.txt" "$E2E_TMP/siblings.txt"; then
	e2e_say "FAIL: $e2e_name: info -I's sibling lines differ from perf report -I's:" >&2
	diff "$E2E_TMP/perf-siblings.txt" "$E2E_TMP/siblings.txt" >&2
	status=1
fi
e2e_record - -F 999 -- "$E2E_PROGRAMS/loop" 0.1
e2e_compare_info "$E2E_RECORDED" "$e2e_name (pipe)" || status=1
exit $status
