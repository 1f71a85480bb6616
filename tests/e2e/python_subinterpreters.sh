#!/bin/sh
# python_subinterpreters: Python code run in a sub-interpreter
# (tests/programs/pysubinterp.py, CPython 3.12+), under `perf record
# --call-graph dwarf,16384` with -X perf. CPython turns the perf
# trampolines on in the main interpreter only, so:
#  - run as it is, the sub-interpreter's functions get no names: no
#    sample may name one (nothing invented), and the samples taken while
#    it runs still carry the main interpreter's chain down to main();
#  - with the sub-interpreter calling sys.activate_stack_trampoline("perf")
#    itself, at least 99% of the samples in its sub_leaf() carry
#    sub_leaf, sub_work and the main interpreter's run_in_subinterpreter
#    and main, one chain across both interpreters.
# In both, at least 99% of the samples in main_leaf() carry main_work and
# main. Interpreters: the newest 3.12.N and 3.13.N under `pyenv root`,
# plus the paths in PS_E2E_PYTHONS.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

workload=$e2e_dir/../programs/pysubinterp.py
seconds=${PS_E2E_PYCHAINS_SECONDS:-2}

trap e2e_python_cleanup EXIT

e2e_find_pythons

failed=0
summary=
for python in $pythons; do
	version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])') ||
		e2e_fail "$python does not run"
	for how in plain activate; do
		data=$E2E_TMP/sub-$version-$how.data
		e2e_record_python "$data" -F 999 --call-graph dwarf,16384 -- \
			"$python" -X perf "$workload" "$seconds" "$how"
		output=pystitch-$version-$how.txt
		e2e_pystitch_script "$output" -i "$data"
		line=$(awk -v label="python$version $how" -v how="$how" 'BEGIN { RS = "" }
			/py::main_leaf:/ { m++; if ($0 ~ /py::main_work:/ && $0 ~ /py::main:/) mr++ }
			/py::sub_/ {
				named++
				if ($0 ~ /py::sub_leaf:/) {
					s++
					if ($0 ~ /py::sub_work:/ && $0 ~ /py::run_in_subinterpreter:/ &&
					    $0 ~ /py::main:/) sr++
					else if (!shown++) print "wrong:\n" $0 > "/dev/stderr"
				}
			}
			/py::run_in_subinterpreter:/ { inside++ }
			END {
				printf "%s: main_leaf %d/%d right; %d samples under run_in_subinterpreter, %d naming a sub-interpreter function",
				       label, mr, m, inside, named
				if (how == "activate")
					printf ", sub_leaf %d/%d right", sr, s
				ok = m >= 200 && mr * 100 >= 99 * m && inside >= 200
				if (how == "activate")
					ok = ok && s >= 200 && sr * 100 >= 99 * s
				else
					ok = ok && named == 0
				exit !ok
			}' "$E2E_TMP/$output" 2>"$E2E_TMP/$output.check") || {
			failed=1
			line="$line; FAIL"
		}
		e2e_say "$line"
		e2e_show "$E2E_TMP/$output.check" 40
		summary="$summary
$line"
	done
done
e2e_say "$e2e_name: figures:$summary"
exit $failed
