#!/bin/sh
# python_module: Python call chains on CPython 3.8-3.11 through pystitch's
# own extension module (python/: perf-map trampolines like 3.12's -X perf).
# For each interpreter, builds the module with python/Makefile into the
# work directory, from that interpreter's headers, and installs it into a
# user site directory of its own (PYTHONUSERBASE), .pth included. Then:
#   - module behaviour (pymodule_check.py): enable/disable/enable keeps
#     results right, every map line parses, dead code objects give their
#     trampolines back, os.fork() gives the child a map of its own that
#     holds the parent's lines;
#   - `python -m pystitch_perf SCRIPT ARGS` runs SCRIPT as __main__ with
#     its argv and exit status, enabled; PYSTITCH_PERF=1 enables the module
#     at startup through the .pth, unset or 0 does not;
#   - tests/programs/pychains.py run with PYSTITCH_PERF=1 under `perf
#     record --call-graph dwarf,16384 -k CLOCK_MONOTONIC` (as
#     python_chains.sh does for -X perf): every line of the map it leaves
#     parses, all of one size; pychains_check.py holds `pystitch script`
#     to at least 99% of the samples in the steady-state window carrying
#     exactly the chain the interpreter reported, in the default (merged)
#     mode, with --python=all and with --python=only. Before 3.11 the
#     module names frames by co_name, which is what pychains.py records.
# On a CPython 3.12+, if one is found, checks that the module writes its
# side file of line tables beside CPython's own trampolines (enable() turns
# them on; PYSTITCH_PERF=1 does so at startup).
#
# Interpreters: the newest 3.8.N to 3.11.N under `pyenv root` (else
# $PYENV_ROOT or ~/.pyenv); /usr/bin/python3.8 to 3.11 when their headers
# are installed (Debian: python3-dev); the newest 3.12.N under pyenv; plus
# the space-separated paths in PS_E2E_MODULE_PYTHONS.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

module_src=$e2e_dir/../../python
workload=$e2e_dir/../programs/pychains.py
fork_workload=$e2e_dir/../programs/pyfork.py
behaviour=$e2e_dir/pymodule_check.py
seconds=${PS_E2E_PYCHAINS_SECONDS:-2}
min_samples=500
MAKE=${MAKE:-make}

trap e2e_python_cleanup EXIT

# has_headers PYTHON: whether PYTHON's Python.h is installed
has_headers() {
	"$1" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null
}

pythons=
for minor in 8 9 10 11; do
	if found=$(e2e_newest_python "$minor"); then
		pythons="$pythons $found"
	else
		e2e_say "$e2e_name: no CPython 3.$minor under \$(pyenv root)/versions (or ~/.pyenv/versions)"
	fi
	system=/usr/bin/python3.$minor
	if [ -x "$system" ]; then
		if has_headers "$system"; then
			pythons="$pythons $system"
		else
			e2e_say "$e2e_name: $system has no headers (Debian: apt-get install python3-dev); not tested"
		fi
	fi
done
pythons="$pythons ${PS_E2E_MODULE_PYTHONS:-}"
[ -n "$(printf '%s' "$pythons" | tr -d ' ')" ] ||
	e2e_skip "no CPython 3.8-3.11 found under \$(pyenv root)/versions, ~/.pyenv/versions or /usr/bin (set PS_E2E_MODULE_PYTHONS)"
newer=$(e2e_newest_python 12) || newer=

failed=0
summary=
number=0

# install_module PYTHON: builds the module for PYTHON into the work directory with
# python/Makefile (without the make flags of `make check`, which are not
# for an extension module) and copies it into a user site directory of its
# own; sets version, userbase and usersite.
install_module() {
	number=$((number + 1))
	version=$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])') ||
		e2e_fail "$1 does not run"
	pm_build=$E2E_TMP/build-$number
	env MAKEFLAGS= MAKELEVEL= MFLAGS= "$MAKE" -s -f "$module_src/Makefile" PYTHON="$1" \
		BUILDDIR="$pm_build" >"$E2E_TMP/build-$number.log" 2>&1 || {
		e2e_show "$E2E_TMP/build-$number.log" 30
		e2e_fail "python/Makefile cannot build the module for $1"
	}
	userbase=$E2E_TMP/userbase-$number
	usersite=$(env -u PYTHONNOUSERSITE PYTHONUSERBASE="$userbase" "$1" -c \
		'import site, sys; print(site.getusersitepackages()); sys.exit(not site.ENABLE_USER_SITE)') ||
		e2e_fail "$1 has no user site directory (does it run with -s or another uid?)"
	mkdir -p "$usersite" || e2e_fail "cannot create $usersite"
	cp -R "$pm_build/$version/." "$usersite/" || e2e_fail "cannot copy the module into $usersite"
}

# run_python PYTHON ARGS...: PYTHON with the module's user site, PYSTITCH_PERF unset
run_python() {
	pm_python=$1
	shift
	env -u PYSTITCH_PERF -u PYTHONNOUSERSITE PYTHONUSERBASE="$userbase" "$pm_python" "$@"
}

# startup_state PYSTITCH_PERF_VALUE: what is_enabled() says at startup
startup_state() {
	env -u PYTHONNOUSERSITE PYSTITCH_PERF="$1" PYTHONUSERBASE="$userbase" "$python" -c 'import os, _pystitch_perf as m
print(m.is_enabled())
for p in ("/tmp/perf-%d.map", "/tmp/perf-%d.pylines"):
    os.path.exists(p % os.getpid()) and os.unlink(p % os.getpid())'
}

for python in $pythons; do
	"$python" -c 'import sys; sys.exit(not (3, 8) <= sys.version_info[:2] < (3, 12))' ||
		e2e_fail "$python is not a CPython 3.8-3.11"
	install_module "$python"
	name="python$version ($python)"
	e2e_say "$e2e_name: $name"

	# behaviour
	pm_line=$(run_python "$python" "$behaviour" 2>"$E2E_TMP/behaviour-$number.err") || {
		e2e_show "$E2E_TMP/behaviour-$number.err" 30
		e2e_fail "$name: module behaviour: $pm_line"
	}
	e2e_say "$pm_line"
	summary="$summary
$pm_line"

	# python -m pystitch_perf SCRIPT ARGS
	cat >"$E2E_TMP/argv.py" <<'EOF'
import os, sys, pystitch_perf
print(repr([os.path.basename(sys.argv[0])] + sys.argv[1:]), __name__, pystitch_perf.is_enabled())
os.unlink("/tmp/perf-%d.map" % os.getpid())
os.unlink("/tmp/perf-%d.pylines" % os.getpid())
sys.exit(3)
EOF
	pm_out=$(cd "$E2E_TMP" && run_python "$python" -m pystitch_perf argv.py one --two 2>&1)
	pm_status=$?
	if [ "$pm_status" != 3 ] || [ "$pm_out" != "['argv.py', 'one', '--two'] __main__ True" ]; then
		e2e_fail "$name: python -m pystitch_perf argv.py one --two printed '$pm_out', status $pm_status"
	fi

	# PYSTITCH_PERF through the .pth
	[ "$(startup_state 1)" = True ] || e2e_fail "$name: PYSTITCH_PERF=1 does not enable the module at startup"
	[ "$(startup_state 0)" = False ] || e2e_fail "$name: PYSTITCH_PERF=0 enables the module"
	[ "$(startup_state '')" = False ] || e2e_fail "$name: PYSTITCH_PERF= enables the module"

	# chains
	tag=$version-$number
	E2E_PY_DATA=$E2E_TMP/$tag.data
	expected=$E2E_TMP/$tag.expected
	# perf runs the interpreter itself (not through env), as a user would
	(
		PYSTITCH_PERF=1
		PYTHONUSERBASE=$userbase
		export PYSTITCH_PERF PYTHONUSERBASE
		unset PYTHONNOUSERSITE
		e2e_record "$E2E_PY_DATA" -k CLOCK_MONOTONIC -F 999 --call-graph dwarf,16384 -- \
			"$python" "$workload" "$seconds" "$expected"
	) || exit $?
	pm_pid=$(sed -n 's/^threads \([0-9]*\).*/\1/p' "$expected" 2>/dev/null)
	[ -n "$pm_pid" ] || pm_pid=$(e2e_python_pid "$E2E_PY_DATA")
	e2e_python_forget "$pm_pid"
	pm_map=$E2E_TMP/perf-$pm_pid.map # kept beside the capture (e2e_keep_maps)
	[ -s "$expected" ] || e2e_fail "$name: the workload wrote no expected chains"
	[ -s "$pm_map" ] || e2e_fail "$name: the module wrote no $pm_map"
	pm_bad=$(grep -c -v -E '^[0-9a-f]+ [0-9a-f]+ py::.*:.*$' "$pm_map")
	[ "$pm_bad" = 0 ] || {
		grep -v -E '^[0-9a-f]+ [0-9a-f]+ py::.*:.*$' "$pm_map" | head -n 3 >&2
		e2e_fail "$name: $pm_bad lines of $pm_map do not parse"
	}
	[ "$(cut -d ' ' -f 2 "$pm_map" | sort -u | wc -l)" = 1 ] ||
		e2e_fail "$name: $pm_map has entries of several sizes"
	for mode in merged all only; do
		output=pystitch-$tag-$mode.txt
		if [ $mode = merged ]; then
			e2e_pystitch_script "$output" -i "$E2E_TMP/$tag.data"
		else
			e2e_pystitch_script "$output" --python=$mode -i "$E2E_TMP/$tag.data"
		fi
		if [ $mode = only ]; then
			e2e_chains "$name pystitch_perf $mode" "$expected" "$output" --only
		else
			e2e_chains "$name pystitch_perf $mode" "$expected" "$output"
		fi
	done
	e2e_run "$PYSTITCH" info -P -i "$E2E_TMP/$tag.data" >"$E2E_TMP/info-$tag.txt" 2>&1 ||
		e2e_fail "$name: pystitch info failed"
	grep -q 'trampoline template: decoded, from .*_pystitch_perf' "$E2E_TMP/info-$tag.txt" || {
		e2e_show "$E2E_TMP/info-$tag.txt" 8
		e2e_fail "$name: pystitch info does not name the module as the template's source"
	}

	# fork: parent and child each name their own later trampolines, and
	# each process's samples carry its own function, never the other's
	pm_fork_data=$E2E_TMP/fork-$tag.data
	E2E_PY_DATA=$pm_fork_data
	(
		PYSTITCH_PERF=1
		PYTHONUSERBASE=$userbase
		export PYSTITCH_PERF PYTHONUSERBASE
		unset PYTHONNOUSERSITE
		e2e_record "$E2E_PY_DATA" -F 999 --call-graph dwarf,16384 -- \
			"$python" "$fork_workload" 0.5
	) || exit $?
	pm_pid=$(e2e_python_pid "$E2E_PY_DATA")
	pm_child=$(cat "$E2E_TMP/record.out") # the workload prints it
	e2e_python_forget "$pm_pid"
	e2e_python_forget "$pm_child"
	# native mode names as perf does, from the map named after the
	# mapping's process: the child's own arena must be its own mapping
	for pm_mode in only native; do
		e2e_pystitch_script "fork-$tag-$pm_mode.txt" --python=$pm_mode -F pid,ip,sym \
			-i "$pm_fork_data"
		# shellcheck disable=SC2016 # an awk program
		pm_counts=$($AWK -v parent="$pm_pid" -v child="$pm_child" '
			!/^\t/ && NF { pid = $1 + 0; next }
			/py::in_parent:/ { if (pid == parent) pp++; else if (pid == child) cp++ }
			/py::in_child:/ { if (pid == child) cc++; else if (pid == parent) pc++ }
			END { printf "%d %d %d %d\n", pp, cc, cp, pc }' "$E2E_TMP/fork-$tag-$pm_mode.txt")
		# shellcheck disable=SC2086 # the two counts, split on purpose
		set -- $pm_counts
		e2e_say "$name fork ($pm_mode): parent samples in in_parent $1, child samples in in_child $2, crossed names $3 + $4"
		if [ "$1" -lt 100 ] || [ "$2" -lt 100 ] || [ "$3" != 0 ] || [ "$4" != 0 ]; then
			failed=1
			e2e_say "FAIL: $name: after fork, each process's frames must carry its own names ($pm_mode)"
		fi
	done
	[ "${PS_E2E_KEEP:-}" = 1 ] || rm -f "$E2E_TMP/$tag.data" "$E2E_TMP"/*-"$tag"-*.txt \
		"$pm_fork_data"
done

if [ -n "$newer" ]; then
	python=$newer
	install_module "$python"
	pm_line=$(run_python "$python" "$behaviour" 2>"$E2E_TMP/behaviour-$number.err") || {
		e2e_show "$E2E_TMP/behaviour-$number.err" 30
		e2e_fail "python$version ($python): module behaviour: $pm_line"
	}
	e2e_say "$pm_line"
	# PYSTITCH_PERF=1: CPython's own trampolines on, and the side file
	pm_out=$(run_python env PYSTITCH_PERF=1 "$python" -c 'import os, sys
print(sys.is_stack_trampoline_active(), os.path.exists("/tmp/perf-%d.pylines" % os.getpid()))
for p in ("/tmp/perf-%d.map", "/tmp/perf-%d.pylines"):
    os.path.exists(p % os.getpid()) and os.unlink(p % os.getpid())' 2>&1)
	if [ "$pm_out" != "True True" ]; then
		e2e_fail "python$version: PYSTITCH_PERF=1 printed '$pm_out' (trampolines on, side file written)"
	fi
fi

e2e_say "$e2e_name: figures (chains: correct/samples in the window; unwound: root-most frame _start or clone3):$summary"
exit $failed
