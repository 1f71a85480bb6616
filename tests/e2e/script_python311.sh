#!/bin/sh
# script_python311: a CPython 3.11 workload (JSON, regular expressions,
# sorting, recursion; tests/programs/pywork.py) recorded with
# --call-graph dwarf, without any Python support: `pystitch script` must
# print the native stacks as `perf script` does (at least 99.5% of the
# samples identical). The interpreter is pyenv's 3.11 (`pyenv root`, else
# ~/.pyenv), or PS_E2E_PYTHON311 when set.
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
e2e_script_diff "python3.11 dwarf" 99.5 "$E2E_TMP/python.data"
status=$?
# the same capture with --libdw-unwind, after normalising exactly the two
# cut-stack quirks (see compare_script.awk)
e2e_pystitch_script pystitch-python-libdw.txt --libdw-unwind -i "$E2E_TMP/python.data"
e2e_compare_script "python3.11 dwarf --libdw-unwind" "$E2E_PERF_OUT" pystitch-python-libdw.txt \
	-v libdw_quirks=1 -v min_identical=99.5 -v min_samples=300 || status=1
exit $status
