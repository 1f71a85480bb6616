#!/bin/sh
# collapse: `pystitch collapse` (folded stacks for flame graphs) against
# `pystitch script` on the same capture, folded independently by
# fold_script.awk: every line must be the same (same stacks, same counts,
# the same sort order as `LC_ALL=C sort`), for each --per and --weight;
# the counts add up to the number of samples, and with --weight period to
# the sum of the periods `pystitch script -F period` prints. The default
# weight is the period, as stackcollapse-perf.pl's. Also the filters,
# --no-inline, --annotate (the marks of stackcollapse-perf.pl --all), -o,
# stdin and bad option values. Captures:
# a shell running tests/programs/deep and tests/programs/inlining under
# --call-graph dwarf (three process names, inlined frames, stacks cut by
# the stack copy), and tests/programs/pychains.py on the newest CPython
# 3.12 under pyenv with -X perf, where the lines must carry Python frames.
# shellcheck disable=SC2016 # awk programs in single quotes
. "$(dirname "$0")/lib.sh"
e2e_setup
trap e2e_python_cleanup EXIT

fold=$e2e_dir/fold_script.awk
failed=0

# collapse OUTPUT ARGS...: `pystitch collapse ARGS` into $E2E_TMP/OUTPUT.
collapse() {
	co_out=$1
	shift
	e2e_run "$PYSTITCH" collapse --buildid-dir "$E2E_TMP/buildid-cache" "$@" \
		>"$E2E_TMP/$co_out" 2>"$E2E_TMP/$co_out.err" || {
		co_status=$?
		e2e_show "$E2E_TMP/$co_out.err"
		e2e_fail "pystitch collapse $* failed (exit status $co_status)"
	}
}

# expect_same LABEL EXPECTED OUTPUT: the two files in $E2E_TMP are equal.
expect_same() {
	if cmp -s "$E2E_TMP/$2" "$E2E_TMP/$3"; then
		e2e_say "$e2e_name: $1: $(wc -l <"$E2E_TMP/$3") lines identical"
	else
		e2e_say "$e2e_name: $1: collapse differs from the folded script output (< expected, > collapse):"
		diff "$E2E_TMP/$2" "$E2E_TMP/$3" | cut -c 1-200 | head -n 10 | sed 's/^/    /'
		failed=1
	fi
}

# check_folds LABEL DATA [SCRIPT_AND_COLLAPSE_ARGS...]: collapse against
# the folded script output for every --per and --weight, and the totals.
check_folds() {
	cf_label=$1
	cf_data=$2
	shift 2
	e2e_pystitch_script "script-$cf_label.txt" -F comm,pid,tid,period,ip,sym -i "$cf_data" "$@"
	e2e_pystitch_script "period-$cf_label.txt" -F period -i "$cf_data" "$@"
	cf_samples=$(grep -c . "$E2E_TMP/period-$cf_label.txt")
	cf_period=$("$AWK" '{ sum += $1 } END { printf "%.0f\n", sum }' "$E2E_TMP/period-$cf_label.txt")
	[ "$cf_samples" -ge 100 ] || e2e_fail "$cf_label: only $cf_samples samples"
	for cf_per in comm pid tid none; do
		for cf_weight in samples period; do
			cf_tag=$cf_label-$cf_per-$cf_weight
			"$AWK" -v per="$cf_per" -v weight="$cf_weight" -f "$fold" \
				"$E2E_TMP/script-$cf_label.txt" | LC_ALL=C sort >"$E2E_TMP/expected-$cf_tag.txt"
			collapse "collapse-$cf_tag.txt" --per "$cf_per" --weight "$cf_weight" -i "$cf_data" "$@"
			expect_same "$cf_label --per $cf_per --weight $cf_weight" \
				"expected-$cf_tag.txt" "collapse-$cf_tag.txt"
			case $cf_weight in
			samples) cf_want=$cf_samples ;;
			*) cf_want=$cf_period ;;
			esac
			cf_total=$("$AWK" '{ sum += $NF } END { printf "%.0f\n", sum }' \
				"$E2E_TMP/collapse-$cf_tag.txt")
			[ "$cf_total" = "$cf_want" ] || {
				e2e_say "$e2e_name: $cf_label --per $cf_per --weight $cf_weight: total $cf_total, script has $cf_want"
				failed=1
			}
		done
	done
	e2e_say "$e2e_name: $cf_label: $cf_samples samples, period $cf_period"
}

# ---- native capture ---------------------------------------------------
data=$E2E_TMP/native.data
# the shell spins a while itself first, so that it has samples of its own
# (forking and exec'ing alone can take under a millisecond)
e2e_record "$data" -F 999 --call-graph dwarf -- /bin/sh -c \
	"i=0; while [ \$i -lt 40000 ]; do i=\$((i + 1)); done; $(e2e_program_sequence 0.3 deep inlining)"
check_folds native "$data"

# the default is --per comm --weight period (stackcollapse-perf.pl's)
collapse default.txt -i "$data"
expect_same "default options" collapse-native-comm-period.txt default.txt

# -o: the same lines in a file (replaced only once complete), - is stdout
collapse o-stdout.txt -o - -i "$data"
expect_same "-o -" default.txt o-stdout.txt
echo old >"$E2E_TMP/o-file.txt"
collapse o-none.txt -o "$E2E_TMP/o-file.txt" -i "$data"
[ -s "$E2E_TMP/o-none.txt" ] && e2e_fail "collapse -o FILE also wrote to stdout"
expect_same "-o FILE" default.txt o-file.txt
for program in deep inlining sh; do
	grep -q "^$program;" "$E2E_TMP/default.txt" || e2e_fail "no stack of $program in the folded output"
done

# stdin
e2e_run "$PYSTITCH" collapse --buildid-dir "$E2E_TMP/buildid-cache" -i - <"$data" \
	>"$E2E_TMP/stdin.txt" 2>"$E2E_TMP/stdin.err" || e2e_fail "collapse -i - failed"
expect_same "-i - (stdin)" default.txt stdin.txt

# filters: the lines of the unfiltered output with that prefix
collapse comm.txt --comm deep -i "$data"
grep "^deep;" "$E2E_TMP/default.txt" >"$E2E_TMP/comm-expected.txt"
expect_same "--comm deep" comm-expected.txt comm.txt
pid=$(sed -n 's/^deep-\([0-9]*\);.*/\1/p' "$E2E_TMP/collapse-native-pid-samples.txt" | head -n 1)
[ -n "$pid" ] || e2e_fail "no deep-PID stack in --per pid output"
collapse pid.txt --per pid --pid "$pid" -i "$data"
# (the forked shell was named sh before it ran deep)
grep "^[^;]*-$pid;" "$E2E_TMP/collapse-native-pid-period.txt" >"$E2E_TMP/pid-expected.txt"
expect_same "--pid $pid" pid-expected.txt pid.txt
collapse tid.txt --per tid --tid "$pid" -i "$data"
grep "^[^;]*-$pid/$pid;" "$E2E_TMP/collapse-native-tid-period.txt" >"$E2E_TMP/tid-expected.txt"
expect_same "--tid $pid" tid-expected.txt tid.txt

# inlined frames: present by default, gone with --no-inline (as in script)
grep -q 'inlined' "$E2E_TMP/script-native.txt" || e2e_fail "the capture has no inlined frames"
e2e_pystitch_script script-noinline.txt -F comm,pid,tid,period,ip,sym --no-inline -i "$data"
"$AWK" -f "$fold" "$E2E_TMP/script-noinline.txt" | LC_ALL=C sort >"$E2E_TMP/noinline-expected.txt"
collapse noinline.txt --no-inline -i "$data"
expect_same "--no-inline" noinline-expected.txt noinline.txt
cmp -s "$E2E_TMP/noinline.txt" "$E2E_TMP/default.txt" &&
	e2e_fail "--no-inline changed nothing"

# --annotate: stackcollapse-perf.pl --all's marks, from the DSO script
# prints: "_[k]" on kernel frames, none on inlined ones
e2e_pystitch_script script-dso.txt -F comm,pid,tid,period,ip,sym,dso -i "$data"
"$AWK" -v dso=1 -v annotate=1 -f "$fold" "$E2E_TMP/script-dso.txt" |
	LC_ALL=C sort >"$E2E_TMP/annotate-expected.txt"
collapse annotate.txt --annotate -i "$data"
expect_same "--annotate" annotate-expected.txt annotate.txt
! grep -q '_\[i\]' "$E2E_TMP/annotate.txt" || e2e_fail "--annotate marked inlined frames"
if grep -q '^	 *ffffffff[89a-f]' "$E2E_TMP/script-native.txt"; then
	grep -q '_\[k\]' "$E2E_TMP/annotate.txt" || e2e_fail "--annotate: kernel frames but no _[k]"
	! grep -q '_\[k\]' "$E2E_TMP/default.txt" || e2e_fail "_[k] without --annotate"
fi

# bad values
for bad in "--per process" "--weight cycles" "--python nope" "--pid x"; do
	# shellcheck disable=SC2086 # option and value split on purpose
	e2e_run "$PYSTITCH" collapse $bad -i "$data" >"$E2E_TMP/bad.txt" 2>"$E2E_TMP/bad.err"
	status=$?
	if [ $status != 1 ] || ! grep -q 'bad value' "$E2E_TMP/bad.err" || [ -s "$E2E_TMP/bad.txt" ]; then
		e2e_show "$E2E_TMP/bad.err"
		e2e_fail "collapse $bad: exit status $status (1 and a message expected)"
	fi
done
"$PYSTITCH" collapse --help | grep -q -- '--weight' || e2e_fail "collapse --help does not list --weight"
[ "${PS_E2E_KEEP:-}" = 1 ] || rm -f "$data" "$E2E_TMP"/*native*.txt "$E2E_TMP"/script-dso.txt

# ---- Python capture -----------------------------------------------------
python=$(e2e_newest_python 12) || {
	[ $failed = 0 ] || exit 1
	e2e_skip "no CPython 3.12 under \$(pyenv root)/versions (or ~/.pyenv/versions): Python frames in folded stacks not tested"
}
e2e_say "$e2e_name: python: $python"
E2E_PY_DATA=$E2E_TMP/python.data
e2e_record "$E2E_PY_DATA" -F 999 --call-graph dwarf,16384 -- \
	"$python" -X perf "$e2e_dir/../programs/pychains.py" 1 "$E2E_TMP/python.expected"
py_pid=$(sed -n 's/^threads \([0-9]*\).*/\1/p' "$E2E_TMP/python.expected" 2>/dev/null)
[ -n "$py_pid" ] || py_pid=$(e2e_python_pid "$E2E_PY_DATA")
e2e_python_forget "$py_pid"
check_folds python "$E2E_TMP/python.data"
py_lines=$(grep -c 'py::' "$E2E_TMP/collapse-python-comm-samples.txt")
[ "$py_lines" -gt 0 ] || e2e_fail "python: no py:: frame in the folded stacks"
for function in stage_a stage_b stage_c leaf_loop worker_outer worker_leaf; do
	grep -q "py::[^;]*$function:[^;]*pychains.py" "$E2E_TMP/collapse-python-comm-samples.txt" ||
		e2e_fail "python: no py::...$function frame in the folded stacks"
done
e2e_say "$e2e_name: python: $py_lines of $(wc -l <"$E2E_TMP/collapse-python-comm-samples.txt") stacks with Python frames"
# --annotate marks Python frames (from the perf map) "_[j]", as
# stackcollapse-perf.pl --all does on script's output
e2e_pystitch_script script-python-dso.txt -F comm,pid,tid,period,ip,sym,dso -i "$E2E_TMP/python.data"
"$AWK" -v dso=1 -v annotate=1 -f "$fold" "$E2E_TMP/script-python-dso.txt" |
	LC_ALL=C sort >"$E2E_TMP/python-annotate-expected.txt"
collapse python-annotate.txt --annotate -i "$E2E_TMP/python.data"
expect_same "python --annotate" python-annotate-expected.txt python-annotate.txt
grep -q 'py::[^;]*_\[j\]' "$E2E_TMP/python-annotate.txt" || e2e_fail "python: --annotate: no _[j] Python frame"
check_folds python-only "$E2E_TMP/python.data" --python only
exit $failed
