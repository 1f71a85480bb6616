#!/bin/sh
# python_cut_stacks: the ends of the stacks of a CPython process that ran
# its -X perf trampolines, at stacks cut by a small stack copy
# (`--call-graph dwarf,4096`). `--python=native` prints what perf script
# prints, Debian's perf's libunwind ends among them (a bogus
# ffffffffffffffff last frame, a lost last real frame); the Python modes,
# whose stacks perf never prints, unwind such a process as elfutils does:
# no bogus frame in a stack with Python frames, and those stacks exactly
# as `--libdw-unwind` prints them. Runs tests/programs/pychains.py on the
# newest 3.12.N under `pyenv root` (or the first of PS_E2E_PYTHONS).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

workload=$e2e_dir/../programs/pychains.py
seconds=${PS_E2E_PYCHAINS_SECONDS:-2}

trap e2e_python_cleanup EXIT

python=$(e2e_newest_python 12) || python=
# shellcheck disable=SC2086 # the list splits into words
[ -n "$python" ] || python=$(printf '%s\n' ${PS_E2E_PYTHONS:-} | sed -n 1p)
[ -n "$python" ] ||
	e2e_skip "no CPython 3.12+ found under \$(pyenv root)/versions (set PS_E2E_PYTHONS)"

data=$E2E_TMP/cut.data
e2e_record_python "$data" -F 999 --call-graph dwarf,4096 -- \
	"$python" -X perf "$workload" "$seconds" "$E2E_TMP/expected"

bogus=$(printf '\tffffffffffffffff [unknown] ([unknown])')
e2e_perf_script perf.txt -i "$data"
e2e_pystitch_script native.txt --python=native -i "$data"
e2e_compare_script "native" perf.txt native.txt -v min_identical=99.5 -v min_samples=500 ||
	e2e_fail "--python=native differs from perf script"
cut=$(grep -c -F -x "$bogus" "$E2E_TMP/native.txt")

failed=0
for mode in merged all only; do
	e2e_pystitch_script "$mode.txt" --python=$mode -i "$data"
	e2e_pystitch_script "$mode-libdw.txt" --python=$mode --libdw-unwind -i "$data"
	# the stacks with Python frames, one per line
	for f in "$mode" "$mode-libdw"; do
		awk 'BEGIN { RS = ""; ORS = "\n\n" } / py::/' "$E2E_TMP/$f.txt" >"$E2E_TMP/$f.python"
	done
	n=$(grep -c '^[^	]' "$E2E_TMP/$mode.python")
	bad=$(grep -c -F -x "$bogus" "$E2E_TMP/$mode.python")
	# the ends differ at cut stacks: there must be many
	truncated=$(grep -c '\[truncated\]' "$E2E_TMP/$mode.python")
	if [ "$n" -lt 500 ] || [ "$truncated" -lt 200 ] || [ "$bad" != 0 ] ||
		! cmp -s "$E2E_TMP/$mode.python" "$E2E_TMP/$mode-libdw.python"; then
		e2e_say "TEST: $e2e_name: $mode: $n stacks with Python frames, $truncated cut, $bad bogus last frames; first differences from --libdw-unwind:"
		diff "$E2E_TMP/$mode.python" "$E2E_TMP/$mode-libdw.python" | head -n 10
		failed=1
	else
		e2e_say "TEST: $e2e_name: $mode: $n stacks with Python frames, $truncated cut, as --libdw-unwind prints them (native: $cut bogus last frames)"
	fi
done
exit $failed
