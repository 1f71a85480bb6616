#!/bin/sh
# python_late: CPython's perf trampolines turned on and off while the
# program runs, recorded by attaching to it. tests/programs/pylate.py is
# started without -X perf and waits; `perf record -p PID` attaches (started
# with its events off, `-D -1`, and turned on through its --control FIFO,
# whose "ack" tells the test it is recording), then the workload runs three
# phases: before sys.activate_stack_trampoline("perf"), while active (its
# <module> and main() were already running and have no trampoline), and
# after sys.deactivate_stack_trampoline(). Python code no trampoline names
# must show as [python: unnamed] frames, never named and never as the eval
# loop's own frames, in the merged and only modes: in each phase at least
# 99% of the samples carry exactly the chain the workload wrote for the
# function running (pychains_check.py), no merged stack holds
# _PyEval_EvalFrameDefault, and --python=all holds no marker. Native mode
# prints what perf script prints.
#
# Interpreters: the newest 3.12.N and 3.13.N under `pyenv root`, plus the
# paths in PS_E2E_PYTHONS.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

workload=$e2e_dir/../programs/pylate.py
seconds=${PS_E2E_PYLATE_SECONDS:-0.5}
min_samples=250

# the workload and the helper that starts it, should the test end first
late_pids=
# shellcheck disable=SC2317 # called by the trap
late_cleanup() {
	for lc_pid in $late_pids; do
		kill "$lc_pid" 2>/dev/null
	done
	e2e_python_cleanup
}
trap late_cleanup EXIT

e2e_find_pythons
command -v mkfifo >/dev/null 2>&1 || e2e_skip "no mkfifo(1)"

failed=0
summary=
count=0

for python in $pythons; do
	version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])') ||
		e2e_fail "$python does not run"
	"$python" -c 'import sys; sys.exit(not hasattr(sys, "activate_stack_trampoline"))' ||
		e2e_fail "$python (CPython $version) has no sys.activate_stack_trampoline"
	e2e_say "$e2e_name: python$version: $python"
	count=$((count + 1))
	tag=$version-$count
	expected=$E2E_TMP/$tag.expected
	go=$E2E_TMP/$tag.go
	mkfifo "$E2E_TMP/$tag.ctl" "$E2E_TMP/$tag.ack"
	"$python" "$workload" "$seconds" "$expected" "$go" &
	pid=$!
	# once perf says it records, the workload may start
	(echo enable >"$E2E_TMP/$tag.ctl" && read -r _ <"$E2E_TMP/$tag.ack" && : >"$go") &
	helper=$!
	late_pids="$pid $helper"
	data=$E2E_TMP/$tag.data
	E2E_PY_DATA=$data
	e2e_record "$data" -D -1 --control "fifo:$E2E_TMP/$tag.ctl,$E2E_TMP/$tag.ack" \
		-k CLOCK_MONOTONIC -F 999 --call-graph dwarf,16384 -p "$pid"
	wait "$pid" || e2e_fail "python$version: the workload failed"
	wait "$helper"
	late_pids=
	e2e_python_forget "$pid"
	[ -s "$E2E_TMP/perf-$pid.map" ] ||
		e2e_fail "python$version: no perf map written after sys.activate_stack_trampoline"

	e2e_perf_script "perf-$tag.txt" -i "$data"
	e2e_pystitch_script "pystitch-$tag-native.txt" --python=native -i "$data"
	e2e_compare_script "python$version native" "perf-$tag.txt" "pystitch-$tag-native.txt" \
		-v min_identical=99.5 -v min_samples="$min_samples" || failed=1
	for mode in merged only all; do
		e2e_pystitch_script "pystitch-$tag-$mode.txt" --python=$mode -i "$data"
	done
	for phase in before active after; do
		e2e_chains "python$version $phase merged" "$expected.$phase" "pystitch-$tag-merged.txt"
		e2e_chains "python$version $phase only" "$expected.$phase" "pystitch-$tag-only.txt" --only
	done
	! grep -q ' _PyEval_EvalFrameDefault' "$E2E_TMP/pystitch-$tag-merged.txt" || {
		grep -m 3 -B 3 ' _PyEval_EvalFrameDefault' "$E2E_TMP/pystitch-$tag-merged.txt" >&2
		e2e_fail "python$version: merged: an eval-loop frame left in a stack"
	}
	! grep -q 'python: unnamed' "$E2E_TMP/pystitch-$tag-all.txt" ||
		e2e_fail "python$version: --python=all prints a [python: unnamed] marker"
	grep -q ' _PyEval_EvalFrameDefault' "$E2E_TMP/pystitch-$tag-all.txt" ||
		e2e_fail "python$version: --python=all prints no eval-loop frame"
	[ "${PS_E2E_KEEP:-}" = 1 ] || rm -f "$data" "$E2E_TMP"/*-"$tag"*.txt
done

e2e_say "$e2e_name: figures (chains: correct/samples in each phase's window):$summary"
exit $failed
