#!/bin/sh
# python_fp_chains: CPython built with frame pointers (Fedora's and Ubuntu
# 24.04's -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer), recorded
# the way production records, with `perf record -g`: the frame-pointer
# call chains walk through the -X perf trampolines, so the Python chain
# comes from the recorded callchain alone.
#  - tests/programs/pychains.py under -g: at least 99% of the samples carry
#    exactly the right chain in the merged, all and only modes (as
#    python_chains.sh checks DWARF captures), not counting, up to 5% of
#    them, the samples whose recorded walk broke in libc before reaching
#    any Python frame (perf script shows no Python frame in them: no chain
#    is in the capture; the merged mode marks them cut, and the figure line
#    says how many), every merged stack of the
#    workload ends where a process or thread starts or is marked
#    [truncated] (a walk that stopped in libc, built without frame
#    pointers, without reading garbage), and --python=native prints what
#    perf script prints;
#  - tests/programs/pysqlite.py (Python called back from libsqlite3, which
#    Debian builds without frame pointers): under -g the chain breaks in
#    libsqlite3, and every sample in callback() must either hold the whole
#    chain or end with the [truncated] marker, none short and unmarked;
#    under --call-graph dwarf at least 99% of them hold the whole chain.
# Interpreters: the space-separated paths in PS_E2E_FP_PYTHONS (CPython
# 3.12+ built with frame pointers; README.md says how to build one). None
# is installed here or in CI by default: without it the test says SKIP.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

workload=$e2e_dir/../programs/pychains.py
sqlite_workload=$e2e_dir/../programs/pysqlite.py
seconds=${PS_E2E_PYCHAINS_SECONDS:-2}
min_samples=500

trap e2e_python_cleanup EXIT

[ -n "$(printf '%s' "${PS_E2E_FP_PYTHONS:-}" | tr -d ' ')" ] ||
	e2e_skip_optional "no CPython built with frame pointers given (set PS_E2E_FP_PYTHONS to such interpreters; README.md says how to build one)"

failed=0
summary=

# note LINE: printed now and in the summary
note() {
	e2e_say "$1"
	summary="$summary
$1"
}

# record NAME ARGS...: records into $E2E_TMP/NAME.data, then makes the
# maps the test's own; sets data.
record() {
	rc_name=$1
	shift
	data=$E2E_TMP/$rc_name.data
	e2e_record_python "$data" -F 999 "$@"
}

# callback_chains LABEL OUTPUT MIN_WHOLE: the samples of $E2E_TMP/OUTPUT
# in callback() hold the whole chain (query_loop() and main() too) or end
# with the [truncated] marker; at least MIN_WHOLE% whole. Sets cb_line.
callback_chains() {
	cb_line=$(awk -v label="$1" -v min="$3" -v need=200 'BEGIN { RS = "" }
		/py::callback:/ {
			n++
			if ($0 ~ /py::query_loop:/ && $0 ~ /py::main:/) whole++
			else if ($0 ~ /\[truncated\] \(\[unknown\]\)$/) cut++
			else { short++; if (!shown++) print "short and unmarked:\n" $0 > "/dev/stderr" }
		}
		END {
			printf "%s: %d samples in callback(): %d whole, %d marked cut, %d short and unmarked",
			       label, n, whole, cut, short
			exit !(n >= need && short == 0 && whole * 100 >= min * n)
		}' "$E2E_TMP/$2" 2>"$E2E_TMP/$2.check")
}

for python in $PS_E2E_FP_PYTHONS; do
	version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])') ||
		e2e_fail "$python does not run"
	"$python" -c 'import sys; sys.exit(sys.version_info < (3, 12))' ||
		e2e_fail "$python is CPython $version; this test needs 3.12+"
	"$python" -c 'import sys, sysconfig
sys.exit("-fno-omit-frame-pointer" not in (sysconfig.get_config_var("CFLAGS") or ""))' ||
		e2e_fail "$python was not built with -fno-omit-frame-pointer"
	e2e_say "$e2e_name: python$version: $python"
	tag=$(printf '%s' "$python" | tr -c 'A-Za-z0-9_.-' '_')

	# pychains under -g
	expected=$E2E_TMP/$tag.expected
	record "$tag-g" -g -- "$python" -X perf "$workload" "$seconds" "$expected"
	[ -s "$expected" ] || e2e_fail "python$version: the workload wrote no expected chains"
	e2e_perf_script "perf-$tag.txt" -i "$data"
	e2e_pystitch_script "pystitch-$tag-native.txt" --python=native -i "$data"
	e2e_compare_script "python$version -g native" "perf-$tag.txt" "pystitch-$tag-native.txt" \
		-v min_identical=99.5 -v min_samples="$min_samples" || failed=1
	for mode in merged all only; do
		output=pystitch-$tag-$mode.txt
		e2e_pystitch_script "$output" --python=$mode -i "$data"
		only=
		[ $mode = only ] && only=--only
		# a chain that stopped without reading garbage (in libc, built
		# without frame pointers) is marked cut too, in the merged mode:
		# every stack ends where a process or thread starts, or is marked
		ends=
		[ $mode = merged ] && ends=--ends
		# samples whose walk broke in libc before any Python frame
		# (perf script shows none; the merged mode marks them cut) hold
		# no chain at all: counted apart, at most 5% of them
		# shellcheck disable=SC2086 # --only, --ends or nothing
		e2e_chains "python$version -g $mode" "$expected" "$output" $only $ends \
			--cut-apart "$E2E_TMP/perf-$tag.txt"
	done

	# Python called back from libsqlite3
	if ! "$python" -c 'import sqlite3' 2>/dev/null; then
		e2e_say "************************************************************"
		e2e_say "SKIP (part): $e2e_name: python$version has no sqlite3 module: pysqlite.py not run"
		e2e_say "************************************************************"
		continue
	fi
	for how in g dwarf; do
		case $how in
		g) record "$tag-sqlite-g" -g -- "$python" -X perf "$sqlite_workload" "$seconds"; min=0 ;;
		*) record "$tag-sqlite-dwarf" --call-graph dwarf,16384 -- \
			"$python" -X perf "$sqlite_workload" "$seconds"; min=99 ;;
		esac
		e2e_pystitch_script "pystitch-$tag-sqlite-$how.txt" -i "$data"
		if callback_chains "python$version sqlite --call-graph $how" \
			"pystitch-$tag-sqlite-$how.txt" "$min"; then
			note "$cb_line"
		else
			note "$cb_line; FAIL"
			e2e_show "$E2E_TMP/pystitch-$tag-sqlite-$how.txt.check" 40
			failed=1
		fi
	done
done

e2e_say "$e2e_name: figures:$summary"
exit $failed
