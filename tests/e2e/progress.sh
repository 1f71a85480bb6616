#!/bin/sh
# progress: the progress line of long runs. In a pseudo-terminal (made by
# script(1)), with the one-second delay set to 0 by the test knob
# PYSTITCH_PROGRESS_DELAY_MS, `pystitch script` and `collapse` draw a
# progress line on stderr (bar, percentage, bytes of total, samples per
# second, time left) and erase it at the end; stdout stays byte-identical
# to a run without a terminal; -q, a stderr that is not a terminal, and
# script writing to the same terminal show none.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
command -v script >/dev/null 2>&1 || e2e_skip "script(1) from util-linux is not installed"
e2e_record "$E2E_TMP/fp.data" -F 4999 -g -- "$E2E_PROGRAMS/loop" 1
data=$E2E_TMP/fp.data
"$PYSTITCH" script -i "$data" >"$E2E_TMP/plain.txt" 2>"$E2E_TMP/plain.err" || e2e_fail "pystitch script failed"
[ -s "$E2E_TMP/plain.err" ] && e2e_fail "pystitch script wrote on stderr without a terminal: $(head -n 1 "$E2E_TMP/plain.err")"
samples=$(grep -c '^[^[:space:]]' "$E2E_TMP/plain.txt")
[ "$samples" -ge 1000 ] || e2e_fail "only $samples samples recorded"

# in_tty LOG COMMAND: COMMAND in a pseudo-terminal, what it put on the
# terminal (its stderr here) in LOG
in_tty() {
	log=$1
	shift
	PYSTITCH_PROGRESS_DELAY_MS=0 script -qec "$*" /dev/null >"$log" 2>&1 ||
		e2e_fail "in a terminal, '$*' failed: $(tr '\r' '\n' <"$log" | tail -n 2)"
}

in_tty "$E2E_TMP/tty.log" "'$PYSTITCH' script -i '$data' >'$E2E_TMP/tty.txt'"
cmp -s "$E2E_TMP/plain.txt" "$E2E_TMP/tty.txt" || e2e_fail "stdout differs when stderr is a terminal"
# a line such as "\r[######......]  25%  0.5 MB of 2.0 MB  41000 samples/s  0:01 left\033[K"
LC_ALL=C grep -a -q -E '\[[#.]{24}\] +[0-9]+%  [0-9.]+ MB of [0-9.]+ MB  [0-9]+ samples/s  [0-9]+:[0-9][0-9] left' "$E2E_TMP/tty.log" ||
	e2e_fail "no progress line on the terminal: $(head -c 300 "$E2E_TMP/tty.log" | od -c | head -n 5)"
# it ends erased: carriage return and erase-line are the last bytes
tail -c 4 "$E2E_TMP/tty.log" | od -An -c | tr -d ' \n' | grep -q -F '\r033[K' ||
	e2e_fail "the progress line is not erased at the end: $(tail -c 40 "$E2E_TMP/tty.log" | od -c | head -n 3)"
e2e_say "script: progress line drawn and erased, stdout identical ($samples samples)"

in_tty "$E2E_TMP/collapse.log" "'$PYSTITCH' collapse -i '$data' >'$E2E_TMP/collapse.txt'"
LC_ALL=C grep -a -q 'samples/s' "$E2E_TMP/collapse.log" || e2e_fail "collapse drew no progress line"
"$PYSTITCH" collapse -i "$data" | cmp -s - "$E2E_TMP/collapse.txt" || e2e_fail "collapse output differs in a terminal"

for quiet in "script -q" "script --quiet" "collapse -q"; do
	in_tty "$E2E_TMP/quiet.log" "'$PYSTITCH' $quiet -i '$data' >/dev/null"
	[ -s "$E2E_TMP/quiet.log" ] && e2e_fail "$quiet still wrote on the terminal: $(head -c 100 "$E2E_TMP/quiet.log" | od -c | head -n 2)"
done
# output to the terminal itself: no line between the samples
in_tty "$E2E_TMP/same.log" "'$PYSTITCH' script -i '$data'"
LC_ALL=C grep -a -q 'samples/s' "$E2E_TMP/same.log" && e2e_fail "a progress line was drawn among script's output on the same terminal"
# stderr not a terminal: nothing
in_tty "$E2E_TMP/notty.log" "'$PYSTITCH' script -i '$data' >/dev/null 2>'$E2E_TMP/notty.err'"
[ -s "$E2E_TMP/notty.err" ] && e2e_fail "progress went to a stderr that is not a terminal"
e2e_say "PASS: progress line in a terminal only, erased at the end, none with -q or when output shares the terminal"
exit 0
