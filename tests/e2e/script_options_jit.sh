#!/bin/sh
# script_options_jit: `-F +srcline` after perf-map (JIT) frames. perf
# never asks addr2line there and prints "  [JIT] tid PID[ADDR]" on the
# line after the frame; `pystitch script --python=native -F +srcline` must
# print what `perf script -F +srcline` prints on the same capture of
# tests/programs/pywork.py run with -X perf by the newest CPython 3.12
# (else 3.13) under `pyenv root`, recorded with --call-graph dwarf (a -g
# chain stops in the interpreter, before any trampoline): 99.5% of the
# samples identical, as in the other DWARF tests (python_chains.sh says
# why not all), and perf-map frames with their [JIT] line in both.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
trap e2e_python_cleanup EXIT

python=
for minor in 12 13; do
	python=$(e2e_newest_python "$minor") && break
done
[ -n "$python" ] || e2e_skip "no CPython 3.12 or 3.13 under \$(pyenv root)/versions"
failed=0

mode=dwarf
E2E_PY_DATA=$E2E_TMP/jit-$mode.data
e2e_record "$E2E_PY_DATA" -F 999 --call-graph dwarf,16384 -- \
	"$python" -X perf "$e2e_dir/../programs/pywork.py" 0.5
data=$E2E_PY_DATA
pid=$(e2e_python_pid "$data")
[ -n "$pid" ] || e2e_fail "no pid in the capture"
e2e_python_forget "$pid"
[ -s "$E2E_TMP/perf-$pid.map" ] || e2e_fail "CPython wrote no perf-$pid.map"
e2e_perf_script "perf-$mode.txt" -i "$data" -F +srcline
e2e_pystitch_script "pystitch-$mode.txt" -i "$data" --python=native -F +srcline
e2e_compare_script "--python=native -F +srcline" "perf-$mode.txt" "pystitch-$mode.txt" \
	-v min_identical=99.5 -v min_samples=200 || failed=1
jit=$(grep -c "^  \[JIT\] tid $pid\[" "$E2E_TMP/perf-$mode.txt")
ours=$(grep -c "^  \[JIT\] tid $pid\[" "$E2E_TMP/pystitch-$mode.txt")
e2e_say "TEST: $e2e_name: $jit [JIT] srclines from perf, $ours from pystitch"
[ "$jit" -gt 0 ] || e2e_fail "perf printed no [JIT] srcline: the capture has no perf-map frames"
[ "$ours" -gt 0 ] || failed=1
exit $failed
