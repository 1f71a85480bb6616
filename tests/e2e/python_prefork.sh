#!/bin/sh
# python_prefork: Python workers of a parent that imported and ran their
# code first, started as servers start them (tests/programs/pyprefork.py):
# os.fork() (gunicorn's pre-forking), and multiprocessing's fork,
# forkserver and spawn start methods, all at once under one
# `perf record --call-graph dwarf,16384 -k CLOCK_MONOTONIC` of
# `python3 -X perf`. A forked worker's frames come from two perf maps: the
# frames it was forked in, and the code the parent ran first, have the
# parent's trampolines, named in the parent's map; what it calls from then
# on gets trampolines of its own, in its own map. The spawned workers (and
# the fork server's) start without perf support (multiprocessing does not
# pass -X perf on) and turn it on with sys.activate_stack_trampoline, so
# the frames already running then print as [python: unnamed]. On 3.13+ the
# parent also keeps its map across fork
# (PyUnstable_PerfTrampoline_SetPersistAfterFork: each forked child
# starts with a copy of it, PyUnstable_CopyPerfMapFile) and the children
# turn their trampolines on again in os.register_at_fork. For each worker,
# at least 99% of its samples must carry exactly the chain the worker
# wrote for the function running (pychains_check.py), in the merged and
# only modes, and no file may be refused.
#
# Interpreters: the newest 3.12.N and 3.13.N under `pyenv root`, plus the
# paths in PS_E2E_PYTHONS.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

workload=$e2e_dir/../programs/pyprefork.py
seconds=${PS_E2E_PYPREFORK_SECONDS:-0.4}
min_samples=200

trap e2e_python_cleanup EXIT
e2e_find_pythons

failed=0
summary=
count=0

for python in $pythons; do
	version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])') ||
		e2e_fail "$python does not run"
	persist=
	"$python" -c 'import sys; sys.exit(sys.version_info < (3, 13))' && persist=persist
	count=$((count + 1))
	tag=$version${persist:+-persist}-$count
	e2e_say "$e2e_name: python$version${persist:+ (perf maps kept across fork)}: $python"
	workdir=$E2E_TMP/$tag
	mkdir "$workdir" || e2e_fail "cannot make $workdir"
	data=$workdir/prefork.data
	E2E_PY_DATA=$data
	e2e_record "$data" -k CLOCK_MONOTONIC -F 999 --call-graph dwarf,16384 -- \
		"$python" -X perf "$workload" "$seconds" "$workdir" $persist
	# every process's maps are the test's own now (e2e_keep_maps); the
	# parent's pid is the first sample's
	e2e_python_forget "$(e2e_python_pid "$data")"
	for mode in merged only; do
		e2e_pystitch_script "pystitch-$tag-$mode.txt" --python=$mode -i "$data"
		! grep -q 'refused\|both account' "$E2E_TMP/pystitch-$tag-$mode.txt.err" || {
			e2e_show "$E2E_TMP/pystitch-$tag-$mode.txt.err"
			e2e_fail "python$version: a perf map was refused"
		}
		for kind in fork mp-fork mp-forkserver mp-spawn; do
			[ -s "$workdir/$kind.expected" ] || e2e_fail "python$version: no chains from the $kind worker"
			if [ $mode = only ]; then
				e2e_chains "python$version${persist:+ persist} $kind $mode" "$workdir/$kind.expected" \
					"pystitch-$tag-$mode.txt" --only
			else
				e2e_chains "python$version${persist:+ persist} $kind $mode" "$workdir/$kind.expected" \
					"pystitch-$tag-$mode.txt"
			fi
		done
	done
	[ "${PS_E2E_KEEP:-}" = 1 ] || rm -f "$data" "$E2E_TMP"/pystitch-"$tag"-*.txt
done

e2e_say "$e2e_name: figures (chains: correct/samples in each worker's window):$summary"
exit $failed
