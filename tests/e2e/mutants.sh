#!/bin/sh
# Mutation test of real captures (issue 18): records one capture of each
# kind the tests record (DWARF, -g, pipe mode, -z compressed, CPython 3.12
# -X perf with its perf map), makes PS_MUTANTS (default 200) mutants of
# each with a fixed seed (tests/e2e/mutate.py: byte flips, truncations,
# spliced records, mutated perf map lines) and runs every command on every
# mutant (script in each --python mode, collapse, flamegraph -o FILE,
# pprof -o FILE, info -I -P, dump; inline frames in the default script only, as
# they cost most of a run and come from the unmutated debug files), on all
# cores. Each run must exit 0 or 2, print
# at most one line on stderr (-q: the error), no sanitizer report, within
# PS_MUTANTS_TIMEOUT seconds (default 60) and under a bound on its maximum
# resident set (GNU time's %M): 192 MiB, 512 MiB in a build with ASan.
#   PS_MUTANTS_SEED  the seed (default 18)
#   PS_MUTANTS_JOBS  runs at once (default: nproc)
. "$(dirname "$0")/lib.sh"

# ---- one mutant: every command (run by xargs, see below) -------------------
if [ "${1:-}" = --one ]; then
	dir=$2
	kind=$3
	# inline frames (addr2line on the real debug files, most of a run's
	# time) in the default command only
	set -- "script --python=merged" "script --python=all --no-inline" \
		"script --python=native --no-inline" "script --python=only --no-inline" \
		"collapse --no-inline" "flamegraph --no-inline -o $dir/out.svg" \
		"pprof --no-inline -o $dir/out.pb.gz" "info -I -P" dump
	for command in "$@"; do
		case $command in
		info*) symbols= ;;
		*) symbols="--kallsyms $MUTANTS_KALLSYMS --buildid-dir $MUTANTS_BUILDID" ;;
		esac
		# shellcheck disable=SC2086 # the command and options split into words
		"$MUTANTS_TIME" -f %M -o "$dir/rss" timeout "$MUTANTS_TIMEOUT" \
			"$PYSTITCH" $command -q -i "$dir/perf.data" $symbols >/dev/null 2>"$dir/err"
		status=$?
		rss=$(tail -n 1 "$dir/rss")
		lines=$(wc -l <"$dir/err")
		sanitizer=$(grep -c -E 'Sanitizer|runtime error:' "$dir/err")
		verdict=ok
		if [ "$status" != 0 ] && [ "$status" != 2 ]; then
			verdict="exit status $status"
		elif [ "$sanitizer" != 0 ]; then
			verdict="sanitizer report"
		elif [ "$lines" -gt 1 ]; then
			verdict="$lines lines on stderr"
		elif [ "$rss" -gt "$MUTANTS_RSS_KB" ]; then
			verdict="max RSS $rss KiB"
		fi
		name=$(printf '%s' "$command" | sed 's/ --no-inline//; s/ -o .*//')
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$dir" "$name" "$status" \
			"$rss" "$verdict"
		if [ "$verdict" != ok ]; then
			cp "$dir/err" "$dir/failed-$(printf '%s' "$name" | tr ' =' '__').err"
		fi
	done
	rm -f "$dir/out.svg" "$dir/out.pb.gz" "$dir/err" "$dir/rss"
	exit 0
fi

e2e_setup
E2E_NO_STACK_CHECK="mutants.sh checks its own runs"
count=${PS_MUTANTS:-200}
seed=${PS_MUTANTS_SEED:-18}
jobs=${PS_MUTANTS_JOBS:-$(nproc)}
MUTANTS_TIME=$(command -v time 2>/dev/null || true)
case $MUTANTS_TIME in
/*) ;;
*) MUTANTS_TIME=/usr/bin/time ;;
esac
"$MUTANTS_TIME" -f %M -o /dev/null true 2>/dev/null ||
	e2e_skip "GNU time is not installed (Debian: apt-get install time)"
command -v python3 >/dev/null 2>&1 || e2e_skip "python3 is not installed"
python=$(e2e_newest_python 12) || e2e_skip "no CPython 3.12 under pyenv"
# $PYSTITCH may be libtool's wrapper script: ask the program it runs
real=$(dirname "$PYSTITCH")/.libs/$(basename "$PYSTITCH")
[ -f "$real" ] || real=$PYSTITCH
if nm -D "$real" 2>/dev/null | grep -q __asan_init || ldd "$real" 2>/dev/null | grep -q libasan; then
	MUTANTS_RSS_KB=524288
	build="ASan"
else
	MUTANTS_RSS_KB=196608
	build="plain"
fi
MUTANTS_TIMEOUT=${PS_MUTANTS_TIMEOUT:-60}
MUTANTS_BUILDID=$E2E_TMP/buildid-cache
MUTANTS_KALLSYMS=$E2E_TMP/kallsyms
export PYSTITCH MUTANTS_TIME MUTANTS_RSS_KB MUTANTS_TIMEOUT MUTANTS_BUILDID MUTANTS_KALLSYMS

# ---- the captures ------------------------------------------------------
cd "$E2E_TMP" || e2e_fail "cannot enter $E2E_TMP"
e2e_record "$E2E_TMP/dwarf.data" -F 199 --call-graph dwarf,4096 -- "$E2E_PROGRAMS/loop" 0.1
e2e_record "$E2E_TMP/fp.data" -F 499 -g -- "$E2E_PROGRAMS/inlining" 0.1
e2e_record - -F 499 -g -- "$E2E_PROGRAMS/loop" 0.1
e2e_record "$E2E_TMP/compressed.data" -z -F 499 -g -- "$E2E_PROGRAMS/loop" 0.1
mkdir -p "$E2E_TMP/python"
py_data=$E2E_TMP/python/perf.data
E2E_PY_DATA=$py_data
trap e2e_python_cleanup EXIT
e2e_record "$py_data" -F 199 --call-graph dwarf,4096 -- \
	"$python" -X perf "$e2e_dir/../programs/pywork.py" 0.3
pid=$(e2e_python_pid "$py_data")
[ -n "$pid" ] || e2e_fail "no sample of the Python process"
e2e_python_forget "$pid"
# e2e_record keeps the map beside the capture
map=$E2E_TMP/python/perf-$pid.map
[ -f "$map" ] || e2e_fail "CPython 3.12 -X perf wrote no perf-$pid.map"
# kernel symbols: those the captures' kernel frames resolve to, so that
# every run does not read all of /proc/kallsyms
# shellcheck disable=SC2016 # an awk program
for data in dwarf.data fp.data pipe.data compressed.data python/perf.data; do
	"$PYSTITCH" script -q --kallsyms /proc/kallsyms -F ip,sym -i "$data" 2>/dev/null
done | "$AWK" '$1 ~ /^ffffffff/ { want[$2] = 1 }
	END { while ((getline line < "/proc/kallsyms") > 0) { split(line, f, " ")
		if (f[3] == "_text" || (f[3] in want)) print line } }' >"$MUTANTS_KALLSYMS"

# ---- mutants -----------------------------------------------------------
for kind in dwarf fp pipe compressed python; do
	case $kind in
	python) set -- "$py_data" "$map" ;;
	*) set -- "$E2E_TMP/$kind.data" ;;
	esac
	python3 "$e2e_dir/mutate.py" "$1" "$E2E_TMP/mutants/$kind" "$count" "$seed" ${2:+"$2"} \
		>"$E2E_TMP/mutants-$kind.txt" || e2e_fail "mutate.py failed on $1"
done

# ---- every command on every mutant ---------------------------------------
start=$(date +%s)
for kind in dwarf fp pipe compressed python; do
	for dir in "$E2E_TMP/mutants/$kind"/*; do
		printf '%s %s\n' "$dir" "$kind"
	done
done | xargs -P "$jobs" -n 2 sh "$e2e_dir/mutants.sh" --one >"$E2E_TMP/results.tsv"
seconds=$(($(date +%s) - start))

runs=$(wc -l <"$E2E_TMP/results.tsv")
expected=$((5 * count * 9))
worst=$(sort -t "$(printf '\t')" -k5,5n "$E2E_TMP/results.tsv" | tail -n 1)
# shellcheck disable=SC2016 # an awk program
e2e_say "$e2e_name: $runs runs ($build build, $jobs at once) in ${seconds}s; exit status:" \
	"$(cut -f4 "$E2E_TMP/results.tsv" | sort | uniq -c | "$AWK" '{ printf " %s x%s", $2, $1 }')"
e2e_say "$e2e_name: worst max RSS $(printf '%s' "$worst" | cut -f5) KiB (bound $MUTANTS_RSS_KB):" \
	"$(printf '%s' "$worst" | cut -f1,3 | tr '\t' ' ')"
for kind in dwarf fp pipe compressed python; do
	e2e_say "$e2e_name: $kind: $(grep -c "^$kind	" "$E2E_TMP/results.tsv") runs," \
		"$(grep "^$kind	" "$E2E_TMP/results.tsv" | cut -f4 | grep -c '^2$') exit 2"
done
[ "$runs" = "$expected" ] || e2e_fail "$runs runs instead of $expected"
# shellcheck disable=SC2016 # an awk program
failed=$("$AWK" -F '\t' '$6 != "ok"' "$E2E_TMP/results.tsv")
if [ -n "$failed" ]; then
	printf '%s\n' "$failed" | head -n 20 >&2
	first=$(printf '%s\n' "$failed" | head -n 1 | cut -f2)
	e2e_say "the first failing mutant ($(grep -F "$first " "$E2E_TMP"/mutants-*.txt | cut -d ' ' -f 2-)):" >&2
	for f in "$first"/failed-*.err; do
		e2e_say "$f:" >&2
		e2e_show "$f" 20
	done
	PS_E2E_KEEP=1
	e2e_fail "$(printf '%s\n' "$failed" | wc -l) of $runs runs failed (work directory kept)"
fi
e2e_say "PASS: $e2e_name"
