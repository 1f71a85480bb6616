#!/usr/bin/env bash
# whole_machine.sh: pystitch against perf script on whole-machine captures
# of a busy machine (issue 19 item 3). For each duration (default 10 and
# 60 s) it records `perf record -a -F FREQ --call-graph dwarf -- sleep S`
# while the machine is kept busy by
#  - bench/busy_load.sh: CPython -X perf programs under perf record, one
#    after another, and short processes (/bin/true) as fast as they start;
#  - a compiler in a loop (gcc -O2 on bench/cworkload.c: cc1, as, collect2);
#  - one CPython 3.12 -X perf process (bench/pyworkload.py) for the whole
#    capture, whose perf map stays until both tools have read it;
# then prints the capture's samples and processes, and for each tool the
# wall time, CPU time (children included: perf's addr2line) and peak RSS,
# side by side:
#    perf script, perf script --no-inline,
#    pystitch --python=native and --python=merged, each with --jobs 1 and
#    the default jobs, and native --no-inline --jobs 1;
#    with --before PATH the same pystitch runs of another build.
# Each runs once, after a warm-up run of perf script --no-inline; their
# outputs then say what share of the samples pystitch --python=native
# prints as perf script does (with and without inline frames; other
# users' processes, a file rebuilt since it was recorded and perf maps
# removed meanwhile are counted as they come), and how many of the Python
# workload's samples carry Python frames in merged mode. perf script's
# default run can take minutes: it runs addr2line on cc1.
#
#   usage: bench/whole_machine.sh [--seconds "10 60"] [-F FREQ]
#                                 [--pystitch PATH] [--before PATH]
#                                 [--perf PATH] [--python PATH] [-k DIR]
set -uo pipefail

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; }
die() {
	printf 'whole_machine.sh: %s\n' "$*" >&2
	exit 1
}
say() { printf '%s\n' "$*" >&2; }

durations="10 60" freq=99 keep=''
pystitch=${PYSTITCH:-} before='' perf=${PERF:-} python=''
while [ $# -gt 0 ]; do
	case $1 in
	--seconds) durations=${2:?}; shift 2 ;;
	-F | --freq) freq=${2:?}; shift 2 ;;
	--pystitch) pystitch=${2:?}; shift 2 ;;
	--before) before=${2:?}; shift 2 ;;
	--perf) perf=${2:?}; shift 2 ;;
	--python) python=${2:?}; shift 2 ;;
	-k | --keep) keep=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
for s in $durations; do
	case $s in '' | *[!0-9]* | 0) die "--seconds takes positive numbers" ;; esac
done
case $freq in '' | *[!0-9]* | 0) die "-F needs a positive number" ;; esac

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
top=$(dirname -- "$here")
[ -n "$perf" ] || perf=$(command -v perf) || die "perf is not installed (apt-get install linux-perf)"
if [ -z "$pystitch" ]; then
	for candidate in ./pystitch "$top/pystitch"; do
		[ -x "$candidate" ] && [ -f "$candidate" ] && pystitch=$candidate && break
	done
	[ -n "$pystitch" ] || pystitch=$(command -v pystitch) ||
		die "no pystitch binary: run from the build directory or pass --pystitch PATH"
fi
pystitch=$(CDPATH='' cd -- "$(dirname -- "$pystitch")" && pwd)/$(basename -- "$pystitch")
if [ -n "$before" ]; then
	[ -x "$before" ] || die "--before: no program at $before"
	before=$(CDPATH='' cd -- "$(dirname -- "$before")" && pwd)/$(basename -- "$before")
fi
[ -n "$python" ] || python=$(find_python 12) || die "no CPython 3.12 under pyenv (pass --python PATH)"
command -v gcc >/dev/null || die "needs gcc (the compiler load)"
[ -x /usr/bin/time ] || die "needs GNU time (/usr/bin/time, Debian package time)"
[ "$(id -u)" = 0 ] || die "needs root (perf record -a, and busy_load.sh)"
compare_awk=$top/tests/e2e/compare_script.awk
[ -f "$compare_awk" ] || die "no $compare_awk"

work=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-whole-machine.XXXXXX") || die "cannot create a temporary directory"
load_pids=() py_pids=()
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local pid
	for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null; done
	wait 2>/dev/null
	for pid in "${py_pids[@]}"; do rm -f "/tmp/perf-$pid.map"; done
	if [ -n "$keep" ]; then
		mkdir -p "$keep" && mv -f "$work"/*.data "$work"/*.map "$keep"/ 2>/dev/null
		say "kept the captures and their perf maps in $keep"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' HUP INT TERM

# compile_loop SECONDS: gcc on the C workload, again and again
compile_loop() {
	local end=$(($(date +%s) + $1))
	while [ "$(date +%s)" -lt "$end" ]; do
		gcc -O2 -g -I"$top/tests/programs" -c "$here/cworkload.c" -o "$work/cworkload.o" 2>/dev/null
	done
}

# record SECONDS: the capture $work/wm$SECONDS.data of the busy machine
record() {
	local seconds=$1 data=$work/wm$1.data pid
	say "recording ${seconds} s of the whole machine (-F $freq, DWARF) with busy_load.sh, gcc and $python running"
	load_pids=()
	"$here/busy_load.sh" $((seconds + 4)) "$python" >"$work/busy.log" 2>&1 &
	load_pids+=($!)
	compile_loop $((seconds + 4)) &
	load_pids+=($!)
	"$python" -X perf "$here/pyworkload.py" --seconds $((seconds + 3)) >/dev/null 2>&1 &
	pid=$!
	load_pids+=("$pid")
	py_pids+=("$pid")
	sleep 1
	"$perf" record -q -a -F "$freq" --call-graph dwarf -o "$data" -- sleep "$seconds" \
		>"$work/record.out" 2>"$work/record.err" || {
		tail -n 5 "$work/record.err" >&2
		die "perf record failed"
	}
	wait "${load_pids[@]}" 2>/dev/null
	load_pids=()
	# the workload's map, where both tools look first
	cp "/tmp/perf-$pid.map" "$work/" 2>/dev/null || say "note: no /tmp/perf-$pid.map"
	say "  $(tail -n 1 "$work/busy.log")"
	printf '%s\n' "$pid" >"$work/wm$seconds.pypid"
}

# measure NAME COMMAND...: one run, its output into NAME.txt, and "wall
# cpu rss_mb" into NAME.usage
measure() {
	local name=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$work/usage" "$@" >"$work/$name.txt" 2>"$work/$name.err" || {
		tail -n 5 "$work/$name.err" >&2
		say "$name failed: $*"
		echo "- - -" >"$work/$name.usage"
		return
	}
	awk '{ printf "%s %.2f %.0f\n", $1, $2 + $3, $4 / 1024 }' "$work/usage" >"$work/$name.usage"
}

# identical PERF_RUN PYSTITCH_RUN: the share of samples printed the same
identical() {
	awk -v name=identical -v min_identical=0 -f "$compare_awk" \
		"$work/$1.txt" "$work/$2.txt" 2>/dev/null | head -n 1 | sed 's/^identical: //'
}

bench() {
	local seconds=$1 data=$work/wm$1.data pypid samples processes mb
	pypid=$(cat "$work/wm$seconds.pypid")
	mb=$(($(wc -c <"$data") / 1048576))
	samples=$("$perf" script -i "$data" -F time 2>/dev/null | grep -c .)
	# a process: a FORK that starts a new pid (its tid is its pid)
	# shellcheck disable=SC2016 # an awk program
	processes=$("$perf" script -i "$data" --show-task-events -F pid 2>/dev/null |
		awk 'match($0, /PERF_RECORD_FORK\([0-9]+:[0-9]+\)/) {
			split(substr($0, RSTART + 17, RLENGTH - 18), id, ":")
			if (id[1] == id[2]) n++ } END { print n + 0 }')
	printf '\n%s s of the whole machine: wm%s.data, %d MB, %d samples, %d processes started during it, -F %s\n' \
		"$seconds" "$seconds" "$mb" "$samples" "$processes" "$freq"
	# warm the page cache and perf's build-id cache
	"$perf" script -i "$data" --no-inline >/dev/null 2>&1

	local runs=("perf|perf script|$perf script -i $data"
		"perf-noinline|perf script --no-inline|$perf script -i $data --no-inline")
	local build label bin
	for build in after before; do
		bin=$pystitch
		label=pystitch
		if [ $build = before ]; then
			[ -n "$before" ] || continue
			bin=$before
			label="before"
		fi
		runs+=("$build-native-j1|$label native -j1|$bin script -i $data --python=native --jobs 1"
			"$build-native|$label native|$bin script -i $data --python=native"
			"$build-native-noinline-j1|$label native --no-inline -j1|$bin script -i $data --python=native --no-inline --jobs 1"
			"$build-merged-j1|$label merged -j1|$bin script -i $data --python=merged --jobs 1"
			"$build-merged|$label merged|$bin script -i $data --python=merged")
	done
	printf '  %-34s %9s %9s %9s\n' "" "wall s" "CPU s" "peak MB"
	local run name label cmd wall cpu rss
	for run in "${runs[@]}"; do
		name=${run%%|*}
		run=${run#*|}
		label=${run%%|*}
		cmd=${run#*|}
		# (in the capture's folder: pystitch finds the kept perf map there)
		# shellcheck disable=SC2086 # the command line splits into words
		(cd "$work" && measure "$name" $cmd)
		read -r wall cpu rss <"$work/$name.usage"
		printf '  %-34s %9s %9s %9s\n' "$label" "$wall" "$cpu" "$rss"
	done
	printf '  native = perf script:                  %s\n' "$(identical perf after-native)"
	printf '  native --no-inline = perf --no-inline: %s\n' "$(identical perf-noinline after-native-noinline-j1)"
	[ -z "$before" ] ||
		printf '  before: native = perf script:          %s\n' "$(identical perf before-native)"
	# shellcheck disable=SC2016 # an awk program
	printf '  merged: %s\n' "$(awk -v pid="$pypid" '
		/^[^\t]/ { inside = $2 == pid; if (inside) n++; counted = 0; next }
		inside && !counted && /py::/ { named++; counted = 1 }
		END { printf "%d samples of the Python workload (pid %s), %d with Python frames", n, pid, named }' \
		"$work/after-merged.txt")"
}

for s in $durations; do
	record "$s"
done
for s in $durations; do
	bench "$s"
done
