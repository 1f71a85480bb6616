#!/bin/sh
# python_embedded: CPython embedded in a C program (Py_InitializeFromConfig
# with PyConfig.perf_profiling, then PyRun_SimpleFile, as uWSGI and Blender
# host it): tests/programs/pyembed.c, built here against each interpreter,
# runs tests/programs/pychains.py under `perf record --call-graph
# dwarf,16384`; at least 99% of the samples must carry exactly the chain
# the interpreter reported, in the merged and only modes, with the host's
# own frames (main) below the Python ones.
# Interpreters: the newest 3.12.N and 3.13.N under `pyenv root` (else
# $PYENV_ROOT or ~/.pyenv), plus the paths in PS_E2E_PYTHONS; each needs
# its python3-config and headers (pyenv's builds have them).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

host_src=$e2e_dir/../programs/pyembed.c
workload=$e2e_dir/../programs/pychains.py
seconds=${PS_E2E_PYCHAINS_SECONDS:-2}
min_samples=500

trap e2e_python_cleanup EXIT

e2e_find_pythons

failed=0
summary=
tested=
for python in $pythons; do
	version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])') ||
		e2e_fail "$python does not run"
	config=$(dirname "$python")/python$version-config
	[ -x "$config" ] || config=$(dirname "$python")/python3-config
	if [ ! -x "$config" ]; then
		e2e_say "$e2e_name: $python has no python3-config: not tested"
		continue
	fi
	host=$E2E_TMP/pyembed-$version
	# shellcheck disable=SC2046 # the flags split into words
	cc -O2 -g -o "$host" "$host_src" $("$config" --cflags) $("$config" --ldflags --embed) \
		-Wl,-rpath,"$("$config" --prefix)/lib" 2>"$E2E_TMP/cc-$version.err" || {
		e2e_show "$E2E_TMP/cc-$version.err"
		e2e_fail "cannot build pyembed.c against $python"
	}
	expected=$E2E_TMP/$version.expected
	data=$E2E_TMP/embedded-$version.data
	e2e_record_python "$data" -F 999 --call-graph dwarf,16384 -- "$host" "$workload" "$seconds" "$expected"
	[ -s "$expected" ] || e2e_fail "embedded $version: the workload wrote no expected chains"
	for mode in merged only; do
		output=pystitch-$version-$mode.txt
		e2e_pystitch_script "$output" --python=$mode -i "$data"
		only=
		[ $mode = only ] && only=--only
		# shellcheck disable=SC2086 # --only or nothing
		e2e_chains "embedded python$version $mode" "$expected" "$output" $only
	done
	# the host's main() is below the Python frames
	grep -q "main+0x[0-9a-f]* ($host)" "$E2E_TMP/pystitch-$version-merged.txt" ||
		e2e_fail "embedded $version: no stack reaches the host's main()"
	tested=1
done
[ -n "$tested" ] ||
	e2e_skip "no CPython 3.12+ with python3-config found under \$(pyenv root)/versions (set PS_E2E_PYTHONS)"
e2e_say "$e2e_name: figures:$summary"
exit $failed
