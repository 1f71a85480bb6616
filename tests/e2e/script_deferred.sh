#!/bin/sh
# script_deferred: Linux 6.19+ can defer a sample's user callchain
# (`perf record --call-graph fp,defer`) to a PERF_RECORD_CALLCHAIN_DEFERRED
# record written when the thread returns to user space, and perf script
# 6.19+ merges the two and delivers the sample then. This kernel and perf
# 6.1 cannot record that, so the test records `-g` call chains of a
# multi-threaded program and rewrites the capture into the deferred form
# (defer_callchains.py: user parts moved into deferred records, released
# halfway to each thread's next sample, so other threads' samples often
# go first). The expected text is perf script's own output on the
# original capture, its sample blocks in the order perf 6.19 delivers
# them (which the rewrite reports); pystitch script on the rewritten
# capture must equal it byte for byte.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
command -v python3 >/dev/null 2>&1 || e2e_skip "python3 is not installed"
e2e_record "$E2E_TMP/fp.data" -F 999 -g -- "$E2E_PROGRAMS/threads" 0.3 4
python3 "$e2e_dir/defer_callchains.py" "$E2E_TMP/fp.data" "$E2E_TMP/defer.data" \
	"$E2E_TMP/order.txt" >"$E2E_TMP/defer.out" || e2e_fail "defer_callchains.py failed"
e2e_say "$e2e_name: $(cat "$E2E_TMP/defer.out")"
e2e_perf_script perf.txt -i "$E2E_TMP/fp.data"
# perf's blocks (one per sample, each ending in a blank line) in the
# delivery order
# shellcheck disable=SC2016 # an awk program
"$AWK" -v order="$E2E_TMP/order.txt" 'BEGIN {
		while ((getline line <order) > 0)
			want[nr_want++] = line
		RS = ""
	}
	{ block[NR - 1] = $0 }
	END {
		for (k = 0; k < nr_want; k++) {
			if (!(want[k] in block)) { print "no sample " want[k] > "/dev/stderr"; exit 1 }
			printf "%s\n\n", block[want[k]]
		}
		if (nr_want != NR) { print nr_want " of " NR " samples in the order" > "/dev/stderr"; exit 1 }
	}' "$E2E_TMP/perf.txt" >"$E2E_TMP/expected.txt" || e2e_fail "cannot reorder perf's output"
# shellcheck disable=SC2016
moved=$("$AWK" '$1 != NR - 1 { n++ } END { print n + 0 }' "$E2E_TMP/order.txt")
deferred=$(cut -d' ' -f1 "$E2E_TMP/defer.out")
[ "$deferred" -ge 500 ] || e2e_fail "only $deferred samples had a user part to defer"
[ "$moved" -ge 10 ] || e2e_fail "only $moved samples are delivered out of time order: the test would not see the waiting"
e2e_pystitch_script pystitch.txt -i "$E2E_TMP/defer.data"
if ! cmp -s "$E2E_TMP/expected.txt" "$E2E_TMP/pystitch.txt"; then
	e2e_say "FAIL: $e2e_name: pystitch script on the deferred capture differs from perf's text:" >&2
	diff "$E2E_TMP/expected.txt" "$E2E_TMP/pystitch.txt" | head -20 >&2
	exit 1
fi
# the workers of -j read the capture with their own feeds: the same
# samples wait and go out in the same order
e2e_pystitch_script pystitch-j3.txt -j 3 -i "$E2E_TMP/defer.data"
cmp -s "$E2E_TMP/pystitch.txt" "$E2E_TMP/pystitch-j3.txt" ||
	e2e_fail "pystitch script -j 3 on the deferred capture differs from -j 1"
e2e_say "$e2e_name: $deferred deferred samples, $moved delivered after a later one, identical to perf's text"
