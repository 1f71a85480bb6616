#!/bin/sh
# flamegraph: `pystitch flamegraph` against `pystitch collapse` and
# `pystitch script` on one capture of tests/programs/pychains.py (newest
# CPython 3.12 under pyenv, -X perf, --call-graph dwarf). flamegraph_check.py
# reads the SVG back (well-formed XML, callees inside their callers, the
# search control and script present) and folds the stacks it draws; with
# --minwidth 0 they must be the lines of `pystitch collapse` exactly, for
# --per none and comm and --weight samples and period, and those of
# `pystitch script` folded by fold_script.awk, and the root must
# weigh as many samples (or as much period) as script prints. Python
# frames must be there, of class py and drawn green. Also --icicle, the
# default --minwidth (frames left out, no frame narrower, weights kept),
# byte-identical output from two runs, stdout, and the errors: bad values,
# an output file that cannot be made (no file left behind).
# shellcheck disable=SC2016 # awk programs in single quotes
. "$(dirname "$0")/lib.sh"
e2e_setup
trap e2e_python_cleanup EXIT

failed=0

python=$(e2e_newest_python 12) ||
	e2e_skip "no CPython 3.12 under \$(pyenv root)/versions (or ~/.pyenv/versions): flame graphs of Python programs not tested"
e2e_say "$e2e_name: python: $python"
check() {
	"$python" "$e2e_dir/flamegraph_check.py" "$@"
}

# run OUTPUT ARGS...: `pystitch ARGS` into $E2E_TMP/OUTPUT, which must succeed.
run() {
	run_out=$1
	shift
	e2e_run "$PYSTITCH" "$@" >"$E2E_TMP/$run_out" 2>"$E2E_TMP/$run_out.err" || {
		run_status=$?
		e2e_show "$E2E_TMP/$run_out.err"
		e2e_fail "pystitch $* failed (exit status $run_status)"
	}
}

# expect_same LABEL EXPECTED OUTPUT: the two files in $E2E_TMP are equal.
expect_same() {
	if cmp -s "$E2E_TMP/$2" "$E2E_TMP/$3"; then
		e2e_say "$e2e_name: $1: $(wc -l <"$E2E_TMP/$3") stacks identical"
	else
		e2e_say "$e2e_name: $1: the SVG's stacks differ from collapse's (< collapse, > SVG):"
		diff "$E2E_TMP/$2" "$E2E_TMP/$3" | cut -c 1-200 | head -n 10 | sed 's/^/    /'
		failed=1
	fi
}

data=$E2E_TMP/python.data
E2E_PY_DATA=$data
e2e_record "$data" -F 999 --call-graph dwarf,16384 -- \
	"$python" -X perf "$e2e_dir/../programs/pychains.py" 1 "$E2E_TMP/python.expected"
py_pid=$(sed -n 's/^threads \([0-9]*\).*/\1/p' "$E2E_TMP/python.expected" 2>/dev/null)
[ -n "$py_pid" ] || py_pid=$(e2e_python_pid "$E2E_PY_DATA")
e2e_python_forget "$py_pid"
cache="--buildid-dir $E2E_TMP/buildid-cache"

# what script says: the number of samples and their periods
# shellcheck disable=SC2086 # $cache is two words
run period.txt script $cache -F period -i "$data"
samples=$(grep -c . "$E2E_TMP/period.txt")
period=$("$AWK" '{ sum += $1 } END { printf "%.0f\n", sum }' "$E2E_TMP/period.txt")
[ "$samples" -ge 100 ] || e2e_fail "only $samples samples"
e2e_say "$e2e_name: $samples samples, period $period"

# every stack and its weight, for two --per and both --weight
for per in none comm; do
	for weight in samples period; do
		tag=$per-$weight
		# shellcheck disable=SC2086
		run "collapse-$tag.txt" collapse $cache --per "$per" --weight "$weight" -i "$data"
		LC_ALL=C sort "$E2E_TMP/collapse-$tag.txt" >"$E2E_TMP/expected-$tag.txt"
		# shellcheck disable=SC2086
		run "flame-$tag.log" flamegraph $cache --per "$per" --weight "$weight" --minwidth 0 \
			-i "$data" -o "$E2E_TMP/flame-$tag.svg"
		case $weight in
		samples) want=$samples ;;
		*) want=$period ;;
		esac
		check --total "$want" --python "$E2E_TMP/flame-$tag.svg" 2>"$E2E_TMP/check-$tag.err" |
			LC_ALL=C sort >"$E2E_TMP/svg-$tag.txt"
		if grep -v '^flamegraph_check: [0-9]* frames' "$E2E_TMP/check-$tag.err" >&2; then
			e2e_say "$e2e_name: --per $per --weight $weight: the SVG fails its checks"
			failed=1
		fi
		expect_same "--per $per --weight $weight" "expected-$tag.txt" "svg-$tag.txt"
	done
done
# and straight against script's samples, folded by fold_script.awk
# shellcheck disable=SC2086
run script.txt script $cache -F comm,pid,tid,period,ip,sym -i "$data"
"$AWK" -v per=none -v weight=samples -f "$e2e_dir/fold_script.awk" "$E2E_TMP/script.txt" |
	LC_ALL=C sort >"$E2E_TMP/script-folded.txt"
expect_same "script, folded (--per none)" script-folded.txt svg-none-samples.txt
for function in stage_a stage_b stage_c leaf_loop worker_outer worker_leaf; do
	grep -q "data-n=\"py::[^\"]*$function:[^\"]*pychains.py\"" "$E2E_TMP/flame-none-samples.svg" ||
		e2e_fail "no py::...$function frame in the SVG"
done

# defaults: --minwidth 0.1 (a short capture has no frame that narrow);
# the same capture gives the same bytes; -o - and no -o write to stdout
# shellcheck disable=SC2086
run default.log flamegraph $cache -i "$data" -o "$E2E_TMP/default.svg"
# shellcheck disable=SC2086
run default-again.svg flamegraph $cache -i "$data"
# shellcheck disable=SC2086
run default-dash.svg flamegraph $cache -i "$data" -o -
cmp -s "$E2E_TMP/default.svg" "$E2E_TMP/default-again.svg" ||
	e2e_fail "two runs on the same capture gave different SVGs"
cmp -s "$E2E_TMP/default.svg" "$E2E_TMP/default-dash.svg" || e2e_fail "-o - differs from -o FILE"
grep -q 'data-min-width="0.1"' "$E2E_TMP/default.svg" || e2e_fail "the default --minwidth is not 0.1"
check --total "$samples" --python --min-width 0.1 "$E2E_TMP/default.svg" \
	>"$E2E_TMP/svg-default.txt" 2>"$E2E_TMP/check-default.err"
grep -v '^flamegraph_check: [0-9]* frames' "$E2E_TMP/check-default.err" >&2 && failed=1

# --icicle, --title, --width, and a --minwidth that leaves out frames but
# not their weight
# shellcheck disable=SC2086
run icicle.log flamegraph $cache --icicle --title 'a <b> & "c"' --width 800 --minwidth 3 \
	-i "$data" -o "$E2E_TMP/icicle.svg"
check --icicle --total "$samples" --python --min-width 3 "$E2E_TMP/icicle.svg" \
	>/dev/null 2>"$E2E_TMP/check-icicle.err"
grep -v '^flamegraph_check: [0-9]* frames' "$E2E_TMP/check-icicle.err" >&2 && failed=1
all=$(grep -c '^<rect class' "$E2E_TMP/default.svg")
drawn=$(grep -c '^<rect class' "$E2E_TMP/icicle.svg")
[ "$drawn" -lt "$all" ] || e2e_fail "--minwidth 3 left out no frame ($drawn of $all drawn)"
e2e_say "$e2e_name: --width 800 --minwidth 3: $drawn of $all frames drawn"
grep -q '<text id="title"[^>]*>a &lt;b&gt; &amp; &quot;c&quot;</text>' "$E2E_TMP/icicle.svg" ||
	e2e_fail "--title is not in the SVG, escaped"
grep -q '<svg [^>]*width="800"' "$E2E_TMP/icicle.svg" || e2e_fail "--width 800 is not the SVG's width"

# errors: bad values, and an output that cannot be made leaves nothing behind
for bad in "--per process" "--weight cycles" "--minwidth -1" "--width 10" "--width x" "--python nope"; do
	# shellcheck disable=SC2086 # option and value split on purpose
	e2e_run "$PYSTITCH" flamegraph $bad -i "$data" -o "$E2E_TMP/bad.svg" 2>"$E2E_TMP/bad.err"
	status=$?
	if [ $status != 1 ] || ! grep -q 'bad value' "$E2E_TMP/bad.err" || [ -e "$E2E_TMP/bad.svg" ]; then
		e2e_show "$E2E_TMP/bad.err"
		e2e_fail "flamegraph $bad: exit status $status (1, a message and no file expected)"
	fi
done
e2e_run "$PYSTITCH" flamegraph -i "$data" -o "$E2E_TMP/no/such/dir/out.svg" 2>"$E2E_TMP/nodir.err"
status=$?
if [ $status != 1 ] || ! grep -q "cannot create $E2E_TMP/no/such/dir/out.svg" "$E2E_TMP/nodir.err"; then
	e2e_show "$E2E_TMP/nodir.err"
	e2e_fail "flamegraph -o into a missing directory: exit status $status (1 and a message naming the file expected)"
fi
e2e_run "$PYSTITCH" flamegraph -i "$E2E_TMP/missing.data" -o "$E2E_TMP/missing.svg" 2>"$E2E_TMP/missing.err"
status=$?
[ $status = 2 ] || [ $status = 1 ] || e2e_fail "flamegraph of a missing capture: exit status $status"
for left in "$E2E_TMP"/missing.svg*; do
	[ -e "$left" ] && e2e_fail "a failed flamegraph left $left behind"
done
# a terminal as standard output is refused, with one line (script(1)
# gives the command a terminal); a pipe is written
e2e_refuses_terminal 'flamegraph: not writing SVG to a terminal' "'$PYSTITCH' flamegraph -i '$data'"
"$PYSTITCH" flamegraph -q -i "$data" | grep -q '^<svg' || e2e_fail "flamegraph to a pipe wrote no SVG"
"$PYSTITCH" flamegraph --help | grep -q -- '--icicle' || e2e_fail "flamegraph --help does not list --icicle"
exit $failed
