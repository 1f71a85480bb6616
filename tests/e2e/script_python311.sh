#!/bin/sh
# script_python311: a CPython 3.11 workload (JSON, regular expressions,
# sorting, recursion; tests/programs/pywork.py) recorded with
# --call-graph dwarf, without any Python support: `pystitch script
# --python=all` must print the native stacks as `perf script` does (at
# least 99.5% of the samples identical). The default, merged, mode prints
# each activation of the eval loop, which no trampoline names here, as one
# [python: unnamed] frame, and unwinds the process as --libdw-unwind does:
# every sample whose --python=all --libdw-unwind stack holds
# _PyEval_EvalFrameDefault holds the marker instead, and the same frames
# as in all mode otherwise, apart from the CPython call machinery between
# markers. The interpreter is pyenv's 3.11 (`pyenv root`, else ~/.pyenv),
# or PS_E2E_PYTHON311 when set.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

python=${PS_E2E_PYTHON311:-}
[ -n "$python" ] || python=$(e2e_newest_python 11) ||
	e2e_skip "no CPython 3.11 found under \$(pyenv root)/versions/3.11.* or ~/.pyenv/versions/3.11.* (set PS_E2E_PYTHON311)"
"$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' ||
	e2e_fail "$python is not a working CPython 3.11"
e2e_say "$e2e_name: using $python"

E2E_MIN_SAMPLES=300
e2e_record "$E2E_TMP/python.data" -F 999 --call-graph dwarf -- \
	"$python" "$e2e_dir/../programs/pywork.py" 1.0
e2e_perf_script perf-python.txt -i "$E2E_TMP/python.data"
E2E_PERF_OUT=perf-python.txt
e2e_pystitch_script pystitch-python-all.txt --python=all -i "$E2E_TMP/python.data"
e2e_compare_script "python3.11 dwarf --python=all" perf-python.txt pystitch-python-all.txt \
	-v min_identical=99.5 -v min_samples=300
status=$?
# merged: the eval loop's activations are markers, nothing else invented
# (the merged mode unwinds a CPython process as --libdw-unwind does: its
# stacks are not perf's text)
e2e_pystitch_script pystitch-python-all-libdw.txt --python=all --libdw-unwind \
	-i "$E2E_TMP/python.data"
e2e_pystitch_script pystitch-python-merged.txt -i "$E2E_TMP/python.data"
# shellcheck disable=SC2016 # an awk program
"$AWK" '
	FNR == 1 { file++; n = 0 }
	/^[^\t]/ { n++; next }
	/^\t/ {
		if (file == 1 && / _PyEval_EvalFrameDefault\+/) eval[n] = 1
		if (file == 2 && / _PyEval_EvalFrameDefault/) bad++
		if (file == 2 && /\t +0 \[python: unnamed\] \(\[unknown\]\)$/) marked[n] = 1
	}
	END {
		for (s in eval) { total++; if (s in marked) ok++ }
		for (s in marked) if (!(s in eval)) stray++
		printf "python3.11 merged: %d of %d samples with eval frames marked [python: unnamed], %d eval frames left, %d stray markers\n", ok, total, bad, stray
		exit !(total >= 300 && ok == total && !bad && !stray)
	}' "$E2E_TMP/pystitch-python-all-libdw.txt" "$E2E_TMP/pystitch-python-merged.txt" || {
	e2e_say "FAIL: $e2e_name: merged mode does not mark exactly the eval loop's activations" >&2
	status=1
}
# the same capture with --libdw-unwind, after normalising exactly the two
# cut-stack quirks (see compare_script.awk)
e2e_pystitch_script pystitch-python-libdw.txt --python=all --libdw-unwind -i "$E2E_TMP/python.data"
e2e_compare_script "python3.11 dwarf --libdw-unwind" "$E2E_PERF_OUT" pystitch-python-libdw.txt \
	-v libdw_quirks=1 -v min_identical=99.5 -v min_samples=300 || status=1
exit $status
