#!/bin/sh
# python_free_threaded: `pystitch record` on a free-threaded CPython (3.13+
# built with --disable-gil), as a user runs it with no flag of their own.
#  - The program runs without the GIL: the start-up hook's pystitch_perf
#    module says it needs none (a module that does not turns the GIL on for
#    the whole program at its import, with a RuntimeWarning on stderr).
#  - tests/programs/pylines.py run in 4 threads: every Python frame of the
#    workload has its line, and the right one, as python_lines.sh asks of
#    one thread (at least 95% with a line, 99% of them right). On 3.14+
#    each thread but the first runs a copy of the bytecode of its own
#    (CPython's thread-local bytecode), which the module's side file lists
#    when the code objects are freed and at exit.
# Interpreters: the space-separated paths in PS_E2E_FT_PYTHONS (neither
# this machine's packages nor CI's have one: build CPython with
# ./configure --disable-gil; without one the test says SKIP loudly).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

workload=$e2e_dir/../programs/pylines.py
checker=$e2e_dir/pylines_check.py
checker_python=$(command -v python3) || e2e_skip "no python3 to run pylines_check.py"
[ -n "${PS_E2E_FT_PYTHONS:-}" ] ||
	e2e_skip_optional "no free-threaded CPython given (set PS_E2E_FT_PYTHONS to a python3.13t or newer)"
# the module is built into this cache, as on a user's first run
XDG_CACHE_HOME=$E2E_TMP/cache
export XDG_CACHE_HOME
failed=0
summary=

for python in $PS_E2E_FT_PYTHONS; do
	label=$("$python" -c 'import sys; print("python%d.%dt" % sys.version_info[:2])') ||
		e2e_fail "$python does not run"
	"$python" -c 'import sys, sysconfig
sys.exit(not sysconfig.get_config_var("Py_GIL_DISABLED"))' ||
		e2e_fail "$python is not a free-threaded build (Py_GIL_DISABLED)"

	# the GIL stays off under record
	e2e_run "$PYSTITCH" record -o "$E2E_TMP/gil.folded" -- "$python" -c \
		'import sys; print("gil", sys._is_gil_enabled())' >"$E2E_TMP/gil.out" 2>"$E2E_TMP/gil.err" || {
		e2e_show "$E2E_TMP/gil.err"
		e2e_fail "$label: pystitch record failed"
	}
	grep -qx 'gil False' "$E2E_TMP/gil.out" || {
		e2e_show "$E2E_TMP/gil.out"
		e2e_show "$E2E_TMP/gil.err"
		failed=1
		e2e_say "FAIL: $label: the program ran with the GIL under pystitch record"
	}
	if grep -q 'global interpreter lock' "$E2E_TMP/gil.err"; then
		e2e_show "$E2E_TMP/gil.err"
		failed=1
		e2e_say "FAIL: $label: a warning that the GIL was turned on"
	fi

	# the lines of frames in 4 threads
	out=$E2E_TMP/threads-$label
	e2e_run "$PYSTITCH" record -o "$out.pst" -- "$python" "$workload" 2 4 \
		>"$out.record.out" 2>"$out.record.err" || {
		e2e_show "$out.record.err"
		e2e_fail "$label: pystitch record of $workload in 4 threads failed"
	}
	e2e_run "$PYSTITCH" script -i "$out.pst" -F +srcline --python=only >"$out.txt" \
		2>"$out.err" || {
		e2e_show "$out.err"
		e2e_fail "$label: pystitch script of the archive failed"
	}
	line=$("$checker_python" "$checker" --label "$label, 4 threads" --min-lined 95 \
		--min-right 99 "$workload" "$out.txt") || failed=1
	e2e_say "$line"
	summary="$summary
$line"
done
e2e_say "$e2e_name: figures:$summary"
[ "$failed" = 0 ] || e2e_fail "see above"
exit 0
