#!/bin/sh
# python_chains: Python call chains stitched into native stacks. Runs
# tests/programs/pychains.py (two threads, nested calls, callbacks from C
# builtins, a generator, methods) under `perf record --call-graph
# dwarf,16384 -k CLOCK_MONOTONIC` with `-X perf`, and on 3.13+ also with
# `-X perf_jit` (jitdump read directly, no `perf inject`). The 16 KiB stack
# copy reaches _start: with 8 KiB, about 1% of the samples (sorted()
# calling the key function) lose the frames below Py_RunMain and print as
# [truncated], which the chain check counts as wrong. The workload writes the chain
# of Python frames of each of its functions as the interpreter sees it;
# pychains_check.py holds `pystitch script` to them: at least 99% of the
# samples inside the steady-state window must carry exactly one of those
# chains, in the default (merged) mode, with --python=all and with
# --python=only. `pystitch script --python=native` must print what
# `perf script` prints (99.5% of the samples identical, as in the other
# DWARF tests: a rare startup sample in ld.so's _dl_runtime_resolve, whose
# CFA is based on rbx, is unwound further by perf). Moved away from its map,
# the capture gets one warning naming where the map was looked for, and
# --perf-map-dir finds it again. Also prints the share of samples unwound
# down to _start/clone3.
#
# Interpreters: the newest 3.12.N and 3.13.N under `pyenv root` (else
# $PYENV_ROOT or ~/.pyenv), plus the space-separated paths in
# PS_E2E_PYTHONS (each must be a CPython 3.12+ with perf support).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

workload=$e2e_dir/../programs/pychains.py
seconds=${PS_E2E_PYCHAINS_SECONDS:-2}
min_samples=500

trap e2e_python_cleanup EXIT

e2e_find_pythons

failed=0
summary=
jit_tested=

# run_capture MODE: records the workload with -X MODE and checks it.
run_capture() {
	pc_mode=$1
	pc_tag=$version-$pc_mode
	pc_name="python$version -X $pc_mode"
	E2E_PY_DATA=$E2E_TMP/$pc_tag.data
	pc_expected=$E2E_TMP/$pc_tag.expected
	e2e_record "$E2E_PY_DATA" -k CLOCK_MONOTONIC -F 999 --call-graph dwarf,16384 -- \
		"$python" -X "$pc_mode" "$workload" "$seconds" "$pc_expected"
	pc_pid=$(sed -n 's/^threads \([0-9]*\).*/\1/p' "$pc_expected" 2>/dev/null)
	[ -n "$pc_pid" ] || pc_pid=$(e2e_python_pid "$E2E_PY_DATA")
	e2e_python_forget "$pc_pid"
	# (kept beside the capture as it was recorded: e2e_keep_maps)
	case $pc_mode in
	perf) pc_map=$E2E_TMP/perf-$pc_pid.map ;;
	*) pc_map=$E2E_TMP/jit-$pc_pid.dump ;;
	esac
	[ -s "$pc_expected" ] || e2e_fail "$pc_name: the workload wrote no expected chains"
	[ -s "$pc_map" ] || e2e_fail "$pc_name: CPython wrote no $pc_map"

	# native: as perf script, which reads /tmp/perf-PID.map for names (the
	# copy e2e_perf shows it there)
	e2e_perf_script "perf-$pc_tag.txt" -i "$E2E_TMP/$pc_tag.data"
	e2e_pystitch_script "pystitch-$pc_tag-native.txt" --python=native -i "$E2E_TMP/$pc_tag.data"
	e2e_compare_script "$pc_name native" "perf-$pc_tag.txt" "pystitch-$pc_tag-native.txt" \
		-v min_identical=99.5 -v min_samples="$min_samples" || failed=1

	# the Python modes find the map next to the capture
	for pc_python_mode in merged all only; do
		pc_output=pystitch-$pc_tag-$pc_python_mode.txt
		if [ $pc_python_mode = merged ]; then
			# the default
			e2e_pystitch_script "$pc_output" -i "$E2E_TMP/$pc_tag.data"
		else
			e2e_pystitch_script "$pc_output" --python=$pc_python_mode -i "$E2E_TMP/$pc_tag.data"
		fi
		if [ $pc_python_mode = only ]; then
			e2e_chains "$pc_name $pc_python_mode" "$pc_expected" "$pc_output" --only
		else
			e2e_chains "$pc_name $pc_python_mode" "$pc_expected" "$pc_output"
		fi
	done
	# moved without its map: one warning naming where it looked, native
	# frames as before; then the map found again through --perf-map-dir
	mkdir -p "$E2E_TMP/moved"
	mv "$E2E_TMP/$pc_tag.data" "$E2E_TMP/moved/"
	e2e_pystitch_script "pystitch-$pc_tag-nomap.txt" -i "$E2E_TMP/moved/$pc_tag.data"
	pc_where="no perf-$pc_pid.map or jit-$pc_pid.dump in $E2E_TMP/moved, /tmp"
	[ "$(grep -c "warning: $pc_where" "$E2E_TMP/pystitch-$pc_tag-nomap.txt.err")" = 1 ] || {
		e2e_show "$E2E_TMP/pystitch-$pc_tag-nomap.txt.err"
		e2e_fail "$pc_name: no single warning '$pc_where' without the map"
	}
	# every sample, none with a Python frame
	grep -v '^	' "$E2E_TMP/pystitch-$pc_tag-native.txt" >"$E2E_TMP/native-headers-$pc_tag.txt"
	grep -v '^	' "$E2E_TMP/pystitch-$pc_tag-nomap.txt" | cmp -s - "$E2E_TMP/native-headers-$pc_tag.txt" ||
		e2e_fail "$pc_name: without the map, other samples than in native mode"
	! grep -q ' py::' "$E2E_TMP/pystitch-$pc_tag-nomap.txt" ||
		e2e_fail "$pc_name: Python frames named without a perf map or jitdump"
	e2e_pystitch_script "pystitch-$pc_tag-mapdir.txt" --perf-map-dir "$E2E_TMP" \
		-i "$E2E_TMP/moved/$pc_tag.data"
	cmp -s "$E2E_TMP/pystitch-$pc_tag-merged.txt" "$E2E_TMP/pystitch-$pc_tag-mapdir.txt" ||
		e2e_fail "$pc_name: --perf-map-dir gives other stacks than the map next to the capture"
	[ "${PS_E2E_KEEP:-}" = 1 ] || rm -f "$E2E_TMP/moved/$pc_tag.data" "$E2E_TMP"/*-"$pc_tag"*.txt
}

for python in $pythons; do
	version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])') ||
		e2e_fail "$python does not run"
	"$python" -c 'import sys; sys.exit(sys.version_info < (3, 12))' ||
		e2e_fail "$python is CPython $version; this test needs 3.12+"
	# (the check's own perf map goes at once)
	"$python" -X perf -c 'import os, sys
active = sys.is_stack_trampoline_active()
os.path.exists("/tmp/perf-%d.map" % os.getpid()) and os.unlink("/tmp/perf-%d.map" % os.getpid())
sys.exit(not active)' ||
		e2e_fail "$python (CPython $version) has no perf trampoline support (-X perf)"
	e2e_say "$e2e_name: python$version: $python"
	run_capture perf
	if "$python" -c 'import sys; sys.exit(sys.version_info < (3, 13))'; then
		run_capture perf_jit
		jit_tested=1
	fi
done

e2e_say "$e2e_name: figures (chains: correct/samples in the window; unwound: root-most frame _start or clone3):$summary"
[ $failed = 0 ] && [ -z "$jit_tested" ] &&
	e2e_skip "no CPython 3.13+ found: -X perf_jit (jitdump) was not tested (set PS_E2E_PYTHONS)"
exit $failed
