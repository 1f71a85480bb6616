#!/bin/sh
# script_whole_machine: `perf record -a -g` of the whole machine for about
# a second, then `pystitch script --python=native` against `perf script`
# (the Python modes print Python processes as Python stacks): every sample of
# the idle task (`swapper`: pid 0 has no COMM record, perf names it) and of
# the kernel threads must be identical, and at least 98% of all samples (the
# rest are other users' processes, which this test does not control: a
# JIT's perf map rewritten or gone by the time perf script reads it, a
# binary rebuilt or deleted since it was recorded). When the machine was
# never idle during the capture there are no swapper samples to compare:
# tests/e2e/script_kernel.sh covers them on a synthetic capture.
. "$(dirname "$0")/lib.sh"
e2e_setup
E2E_NO_STACK_CHECK="a whole machine's capture: other users' processes change under it"
e2e_record "$E2E_TMP/all.data" -a -g -F 999 -- sleep 1
# --python=native: perf's text, in every process (the other modes print
# other users' Python processes as Python stacks, as they should)
E2E_PERF_OUT=perf-all.txt
E2E_PYSTITCH_OUT=pystitch-all.txt
e2e_perf_script "$E2E_PERF_OUT" -i "$E2E_TMP/all.data"
e2e_pystitch_script "$E2E_PYSTITCH_OUT" --python=native -i "$E2E_TMP/all.data"
e2e_compare_script "-a -g" "$E2E_PERF_OUT" "$E2E_PYSTITCH_OUT" -v min_identical=0 \
	-v min_samples=100 -v by_comm=1 >"$E2E_TMP/compare.txt"
status=$?
cat "$E2E_TMP/compare.txt"
[ $status = 0 ] || e2e_fail "the comparison failed"
# shellcheck disable=SC2016 # an awk program
"$AWK" -v want=98 '
	# "LABEL: N samples, P% identical" and "LABEL: COMM: N samples, P% identical"
	/ samples, .*% identical/ {
		pct = $0
		sub(/% identical.*/, "", pct)
		sub(/.* /, "", pct)
		n = split($0, parts, ": ")
		if (n == 2 && pct + 0 < want) {
			print "FAIL: only " pct "% of the samples identical (want " want "%)"
			bad = 1
		}
		if (n >= 3 && (parts[n - 1] == "swapper" || parts[n - 1] ~ /^(kworker|ksoftirqd|rcu_|migration)/) &&
		    pct + 0 < 100) {
			print "FAIL: " parts[n - 1] ": " pct "% identical (want 100%)"
			bad = 1
		}
	}
	END { exit bad }' "$E2E_TMP/compare.txt" || exit 1
swapper=$("$AWK" '/^swapper /' "$E2E_TMP/$E2E_PERF_OUT" | wc -l)
e2e_say "$e2e_name: $swapper samples of the idle task (swapper)"
exit 0
