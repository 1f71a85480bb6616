#!/bin/sh
# python_lines: the line of every Python frame (issue 15). For each
# interpreter, builds the pystitch_perf module (python/Makefile, the
# interpreter's own headers) into the work directory and records
# tests/programs/pylines.py under `perf record --call-graph dwarf,16384`,
# run as `python -m pystitch_perf` (3.8-3.11: the module's trampolines) or
# `python -X perf -m pystitch_perf` (3.12+: CPython's), which writes the
# side file perf-PID.pylines. Then pylines_check.py reads `pystitch script
# -F +srcline --python=only`: every caller frame must show the line of its
# call, every leaf a line of its hot loop. An interpreter whose eval loop
# has DWARF must give a line to at least 95% of the workload's Python
# frames and the right one to at least 99% of those; a stripped one
# (Debian's python3.11: the scan of registers and stack alone) the right
# one to at least 99% and a line to at least 80%. The figures are printed.
#
# On the first 3.12+ interpreter's capture, also: --jobs 2 prints the same
# lines; `collapse --lines` and `flamegraph --lines` name the workload's
# frames py::QUALNAME:FILE:LINE; the pprof profile's Python locations carry
# their lines, so that `go tool pprof -list` (when go is installed) shows
# per-line figures of a leaf; `info -P` reports the side file and the share
# of frames with a line; and an archive carries the side file: the same
# lines from the archive as from the capture.
#
# Interpreters: the newest 3.8.N to 3.13.N under `pyenv root` (else
# $PYENV_ROOT or ~/.pyenv); /usr/bin/python3.8 to 3.14 when their headers
# are installed (Debian: python3-dev); plus the space-separated paths in
# PS_E2E_LINES_PYTHONS (a CPython 3.14 built by hand, say: without one the
# test says so loudly and goes on with the others).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

module_src=$e2e_dir/../../python
workload=$e2e_dir/../programs/pylines.py
checker=$e2e_dir/pylines_check.py
seconds=${PS_E2E_LINES_SECONDS:-1}
MAKE=${MAKE:-make}
checker_python=$(command -v python3) || e2e_skip "no python3 to run pylines_check.py"

trap e2e_python_cleanup EXIT

# has_headers PYTHON: whether PYTHON's Python.h is installed
has_headers() {
	"$1" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null
}

pythons=
for minor in 8 9 10 11 12 13; do
	if found=$(e2e_newest_python "$minor"); then
		pythons="$pythons $found"
	else
		e2e_say "$e2e_name: no CPython 3.$minor under \$(pyenv root)/versions (or ~/.pyenv/versions)"
	fi
done
for minor in 8 9 10 11 12 13 14; do
	system=/usr/bin/python3.$minor
	[ -x "$system" ] || continue
	if has_headers "$system"; then
		pythons="$pythons $system"
	else
		e2e_say "$e2e_name: $system has no headers (Debian: apt-get install python3-dev); not tested"
	fi
done
pythons="$pythons ${PS_E2E_LINES_PYTHONS:-}"
[ -n "$(printf '%s' "$pythons" | tr -d ' ')" ] ||
	e2e_skip "no CPython 3.8+ found under \$(pyenv root)/versions, ~/.pyenv/versions or /usr/bin (set PS_E2E_LINES_PYTHONS)"
case " $(for p in $pythons; do "$p" -c 'import sys; print("%d.%d" % sys.version_info[:2])'; done | tr '\n' ' ') " in
*" 3.14 "*) ;;
*)
	e2e_say "************************************************************"
	e2e_say "SKIP (part): $e2e_name: no CPython 3.14 given: build one with -g and name it in"
	e2e_say "PS_E2E_LINES_PYTHONS (PS_E2E_LINES_PYTHONS=/opt/py314/bin/python3.14)"
	e2e_say "************************************************************"
	;;
esac

# has_dwarf PYTHON: whether the file holding PYTHON's eval loop (libpython,
# or the interpreter itself when linked statically) has DWARF
has_dwarf() {
	hd_file=$("$1" -c 'import os, sys, sysconfig
lib = sysconfig.get_config_var("INSTSONAME") or ""
path = os.path.join(sysconfig.get_config_var("LIBDIR") or "", lib)
print(path if sysconfig.get_config_var("Py_ENABLE_SHARED") and os.path.exists(path) else
      os.path.realpath(sys.executable))') || return 1
	readelf -S "$hd_file" 2>/dev/null | grep -q ' \.debug_info '
}

failed=0
number=0
summary=
extras_done=

for python in $pythons; do
	number=$((number + 1))
	version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])') ||
		e2e_fail "$python does not run"
	name="python$version ($python)"
	build=$E2E_TMP/build-$number
	env MAKEFLAGS= MAKELEVEL= MFLAGS= "$MAKE" -s -f "$module_src/Makefile" PYTHON="$python" \
		BUILDDIR="$build" >"$E2E_TMP/build-$number.log" 2>&1 || {
		e2e_show "$E2E_TMP/build-$number.log" 30
		e2e_fail "python/Makefile cannot build the module for $python"
	}
	if "$python" -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
		set -- -X perf -m pystitch_perf
	else
		set -- -m pystitch_perf
	fi
	data=$E2E_TMP/lines-$number.data
	E2E_PY_DATA=$data
	# the checks of every capture once, with the lines, on the first 3.12+
	if [ -z "$extras_done" ] && [ "$1" = -X ]; then
		E2E_CHECK_OPTS="-F +srcline"
		unset E2E_NO_STACK_CHECK
	else
		E2E_NO_STACK_CHECK="done on one interpreter's capture"
	fi
	export E2E_CHECK_OPTS E2E_NO_STACK_CHECK
	(
		PYTHONPATH=$build/$version
		export PYTHONPATH
		unset PYSTITCH_PERF PYSTITCH_PERF_LINES
		e2e_record "$data" -F 999 --call-graph dwarf,16384 -- "$python" "$@" "$workload" "$seconds"
	) || exit $?
	e2e_python_forget "$(e2e_python_pid "$data")"
	if has_dwarf "$python"; then
		limits="--min-lined 95 --min-right 99"
		kind=DWARF
	else
		limits="--min-lined 80 --min-right 99"
		kind="stripped, scan"
	fi
	e2e_pystitch_script "lines-$number.txt" -F +srcline --python=only -i "$data"
	# shellcheck disable=SC2086 # the limits are options
	if ! line=$("$checker_python" "$checker" "$workload" "$E2E_TMP/lines-$number.txt" $limits \
		--label "$name, $kind"); then
		failed=1
		e2e_say "FAIL: $line"
	else
		e2e_say "$line"
	fi
	summary="$summary
$(printf '%s\n' "$line" | head -n 1)"

	if [ -n "$extras_done" ] || [ "$1" != -X ]; then
		continue
	fi
	extras_done=1
	# --jobs: the workers unwind and inspect, the session merges
	e2e_pystitch_script "lines-jobs.txt" -F +srcline --python=only --jobs 2 -i "$data"
	cmp -s "$E2E_TMP/lines-$number.txt" "$E2E_TMP/lines-jobs.txt" ||
		e2e_fail "$name: --jobs 2 prints other lines"
	# folded stacks and flame graphs
	e2e_run "$PYSTITCH" collapse --lines -i "$data" >"$E2E_TMP/collapse.txt" 2>"$E2E_TMP/collapse.err" ||
		e2e_fail "$name: collapse --lines failed"
	grep -q 'py::several:[^;]*pylines\.py:4[0-9];py::leaf_square:[^;]*pylines\.py:2[56] ' \
		"$E2E_TMP/collapse.txt" || {
		grep pylines "$E2E_TMP/collapse.txt" | head -n 3
		e2e_fail "$name: collapse --lines does not name several and leaf_square with their lines"
	}
	e2e_run "$PYSTITCH" flamegraph --lines -i "$data" -o "$E2E_TMP/lines.svg" 2>"$E2E_TMP/svg.err" ||
		e2e_fail "$name: flamegraph --lines failed"
	grep -q 'py::leaf_xor:[^<]*pylines\.py:3[345]' "$E2E_TMP/lines.svg" ||
		e2e_fail "$name: the flame graph has no box of leaf_xor with its line"
	# pprof: the lines of Python locations
	e2e_run "$PYSTITCH" pprof -i "$data" -o "$E2E_TMP/lines.pb.gz" 2>"$E2E_TMP/pprof.err" ||
		e2e_fail "$name: pprof failed"
	if command -v go >/dev/null 2>&1; then
		HOME=$E2E_TMP GOCACHE=$E2E_TMP/gocache go tool pprof -list '^leaf_square$' \
			"$E2E_TMP/lines.pb.gz" >"$E2E_TMP/pprof-list.txt" 2>"$E2E_TMP/pprof-list.err" || {
			e2e_show "$E2E_TMP/pprof-list.err"
			e2e_fail "$name: go tool pprof -list failed"
		}
		# "   flat    cum   25: for i in range(n):  # hot": samples on the hot lines
		# shellcheck disable=SC2016 # an awk program
		pl_lines=$($AWK '$3 ~ /^2[56]:$/ && $1 ~ /[0-9]/ && $1 != "." { n++ } END { print n + 0 }' \
			"$E2E_TMP/pprof-list.txt")
		[ "$pl_lines" = 2 ] || {
			e2e_show "$E2E_TMP/pprof-list.txt" 20
			e2e_fail "$name: go tool pprof -list does not show samples on leaf_square's hot lines"
		}
		e2e_say "$name: go tool pprof -list leaf_square shows its hot lines' samples"
	else
		e2e_say "$name: no go: the pprof profile is not listed with go tool pprof"
	fi
	# info -P
	e2e_run "$PYSTITCH" info -P -i "$data" >"$E2E_TMP/info.txt" 2>&1 || e2e_fail "$name: info -P failed"
	grep -q '^#   lines: .*\.pylines, [0-9]* code objects; [0-9]* of [0-9]* Python frames ([0-9.]*%) have a line: [0-9]* from libpython.s DWARF' \
		"$E2E_TMP/info.txt" || {
		e2e_show "$E2E_TMP/info.txt" 20
		e2e_fail "$name: info -P does not report the lines"
	}
	# an archive carries the side file
	e2e_run "$PYSTITCH" archive --buildid-dir "$E2E_TMP/buildid-cache" -i "$data" -o "$E2E_TMP/lines.pst" \
		>"$E2E_TMP/archive.out" 2>&1 || {
		e2e_show "$E2E_TMP/archive.out"
		e2e_fail "$name: archive failed"
	}
	mkdir -p "$E2E_TMP/elsewhere"
	mv "$E2E_TMP"/perf-*.pylines "$E2E_TMP/elsewhere/" || e2e_fail "no side file beside the capture"
	e2e_pystitch_script "lines-archive.txt" -F +srcline --python=only -i "$E2E_TMP/lines.pst"
	cmp -s "$E2E_TMP/lines-$number.txt" "$E2E_TMP/lines-archive.txt" ||
		e2e_fail "$name: the archive's lines differ from the capture's"
	mv "$E2E_TMP"/elsewhere/perf-*.pylines "$E2E_TMP/"
	e2e_say "$name: --jobs 2, collapse and flamegraph --lines, pprof, info -P and the archive agree"
done
[ -n "$extras_done" ] || e2e_say "$e2e_name: no CPython 3.12+: the output checks did not run"
e2e_say "$e2e_name: figures:$summary"
exit $failed
