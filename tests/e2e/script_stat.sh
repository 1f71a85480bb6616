#!/bin/sh
# script_stat: `perf stat record` captures (counts, no samples), to a file
# and to a pipe, in each aggregation mode perf stat records (global, -A,
# --per-core, --per-thread), once and at intervals (-I: the counts printed
# are deltas per round outside the global mode): `pystitch script` prints
# what `perf script` prints on the same file, byte for byte, the table of
# every event's counts at each round. Then a count of a CPU the capture's
# CPU map does not hold, and of a thread past its thread map: one line
# naming the file, the offset and what is wrong, and a failure, where perf
# also refuses the record; a count of an id no event has is the first
# event's, as perf takes it.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0
n=0

# stat_record FILE ARGS...: `perf stat record ARGS` of the loop program;
# FILE "-" records in pipe mode into $E2E_TMP/pipe.data
stat_record() {
	sr_file=$1
	sr_out=$E2E_TMP/stat.out
	[ "$sr_file" != - ] || sr_out=$E2E_TMP/pipe.data
	shift
	e2e_run "$PERF" stat record -o "$sr_file" "$@" -- "$E2E_PROGRAMS/loop" 0.3 \
		>"$sr_out" 2>"$E2E_TMP/stat.err" || {
		e2e_show "$E2E_TMP/stat.err"
		e2e_fail "perf stat record $* failed"
	}
}

# stat_check LABEL FILE: perf script and pystitch script on FILE, the
# same bytes, and some counts among them
stat_check() {
	n=$((n + 1))
	e2e_perf_script "perf-stat$n.txt" -i "$2"
	e2e_pystitch_script "pystitch-stat$n.txt" -i "$2"
	sc_lines=$(grep -c . "$E2E_TMP/perf-stat$n.txt")
	sc_rounds=$(grep -c '^CPU   THREAD' "$E2E_TMP/perf-stat$n.txt")
	if cmp -s "$E2E_TMP/perf-stat$n.txt" "$E2E_TMP/pystitch-stat$n.txt"; then
		e2e_say "$e2e_name: $1: $sc_lines lines, identical"
	else
		e2e_say "$e2e_name: $1: differs from perf script:"
		diff "$E2E_TMP/perf-stat$n.txt" "$E2E_TMP/pystitch-stat$n.txt" | head -n 10
		failed=1
	fi
	[ "$sc_rounds" = 1 ] || e2e_fail "$1: perf printed $sc_rounds table headers"
	[ "$sc_lines" -gt 2 ] || e2e_fail "$1: perf printed no counts"
}

stat_record "$E2E_TMP/task.data" -e task-clock,page-faults,context-switches
stat_check "one process" "$E2E_TMP/task.data"
stat_record "$E2E_TMP/intervals.data" -e task-clock,page-faults -I 100
stat_check "one process, -I 100" "$E2E_TMP/intervals.data"
stat_record "$E2E_TMP/all.data" -a -e cpu-clock,page-faults
stat_check "every CPU" "$E2E_TMP/all.data"
stat_record "$E2E_TMP/percpu.data" -a -A -e cpu-clock,page-faults -I 100
stat_check "every CPU, -A, -I 100" "$E2E_TMP/percpu.data"
stat_record "$E2E_TMP/core.data" -a --per-core -e cpu-clock -I 100
stat_check "every CPU, --per-core, -I 100" "$E2E_TMP/core.data"
# (--per-thread needs -p: a second loop, counted while the first runs)
"$E2E_PROGRAMS/loop" 1 &
loop_pid=$!
stat_record "$E2E_TMP/thread.data" -p "$loop_pid" --per-thread -e task-clock -I 100
wait "$loop_pid"
stat_check "--per-thread, -I 100" "$E2E_TMP/thread.data"
stat_record - -a -A -e cpu-clock
stat_check "pipe mode, every CPU, -A" "$E2E_TMP/pipe.data"
# (perf prints the interval rounds' deltas: the second round's counts of
# a CPU are not its first's again)
rounds=$(awk '$NF == "cpu-clock" && $1 == "0" { print $3 }' "$E2E_TMP/perf-stat4.txt" | sort -u | wc -l)
[ "$rounds" -gt 1 ] || e2e_fail "-A -I 100: CPU 0 has the same count in every round"

# ---- bad records ----------------------------------------------------------
# patch FILE FIELD_OFFSET BYTES: the first PERF_RECORD_STAT's field at
# FIELD_OFFSET (from the record's start) overwritten, into FILE.bad
patch() {
	p_at=$("$PYSTITCH" dump --no-hex -i "$1" | awk '$5 == "PERF_RECORD_STAT" { print $3; exit }')
	[ -n "$p_at" ] || e2e_fail "no PERF_RECORD_STAT in $1"
	cp "$1" "$1.bad"
	# shellcheck disable=SC2059 # the bytes, as printf escapes
	printf "$3" | dd of="$1.bad" bs=1 seek=$((p_at + $2)) conv=notrunc 2>/dev/null
	P_AT=$p_at
}
# refused LABEL FILE PATTERN: pystitch fails with one line naming the file,
# the offset and PATTERN; perf refuses the record too
refused() {
	if e2e_run "$PYSTITCH" script -i "$2" >"$E2E_TMP/bad.out" 2>"$E2E_TMP/bad.err"; then
		e2e_say "$e2e_name: $1: pystitch succeeded"
		failed=1
		return
	fi
	r_expect="$(basename "$2"): offset $P_AT: PERF_RECORD_STAT: $3"
	if [ "$(wc -l <"$E2E_TMP/bad.err")" = 1 ] && grep -q -F "$r_expect" "$E2E_TMP/bad.err"; then
		e2e_say "$e2e_name: $1: $(cat "$E2E_TMP/bad.err")"
	else
		e2e_say "$e2e_name: $1: not one line with '$r_expect':"
		e2e_show "$E2E_TMP/bad.err"
		failed=1
	fi
	"$PERF" script -i "$2" >"$E2E_TMP/bad-perf.out" 2>&1
	grep -q "failed to process type: 76" "$E2E_TMP/bad-perf.out" ||
		e2e_fail "$1: perf processed the record"
}
cd "$E2E_TMP" || e2e_fail "cannot enter $E2E_TMP"
# struct perf_record_stat: header (8), id (8), cpu (4), thread (4), ...
patch all.data 16 '\007\001\000\000'
refused "a CPU not in the map" all.data.bad "invalid CPU 263 for event cpu-clock"
patch all.data 20 '\011\000\000\000'
refused "a thread past the map" all.data.bad "no count for CPU 0 thread 9 of event cpu-clock"
# (an id no event has is the first event's, as perf takes it, when the
# events' records carry no ids)
patch all.data 8 '\377\377\377\377'
stat_check "an unknown id" all.data.bad
exit $failed
