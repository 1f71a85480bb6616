#!/usr/bin/env bash
# stages.sh: where pystitch's time goes, stage by stage, beside perf script,
# on four captures it records itself (or finds in -i DIR):
#
#   py1      CPython 3.12 -X perf, bench/pyworkload.py, one process
#   pymulti  the same with --processes 2 --threads 3: two processes of
#            three threads each (generators, nested calls)
#   c        bench/cworkload, four threads through inlined frames
#   wm       the whole machine (perf record -a -F 99) for --wm-seconds,
#            kept busy as bench/whole_machine.sh keeps it
#
# The first three: perf record -F 999 --call-graph dwarf, about --samples
# samples each. For each capture, --runs rounds, each running once, in
# turn: perf script, then pystitch script --jobs 1 stopped after each
# stage (PYSTITCH_BENCH_STAGE=read, unwind, name, merge: the session does
# every sample's work up to that stage and prints nothing), then the whole
# run with every --jobs value. Output to /dev/null; median wall time, CPU
# time (user + system, children included: perf's addr2line) and peak RSS.
#
# The stage table gives each stage's CPU time as the difference between
# the medians of the runs that stop after it and before it: reading and
# ordering the records (with the model kept in step), unwinding, naming
# (the frames of every stack, kernel ones included, and addr2line's
# inline chains; per unique address: the DSO addresses the run named),
# the Python merge, and formatting the text. The goals table gives
# pystitch's wall time, CPU time and peak RSS against perf script's, with
# the issue's goals (wall <= 0.05 and CPU <= 0.25 of perf's, peak memory
# at most perf's, --jobs 2 no slower than --jobs 1).
#
# Before timing it checks that every --jobs J prints what --jobs 1 prints.
# With --before PATH, another build (one with PYSTITCH_BENCH_STAGE: this
# script's commit or later) runs the same, alternating with this one, and
# must print the same.
#
# --jobs defaults to 1, 2, 4, ... and the machine's cores. A --before build
# older than PYSTITCH_BENCH_STAGE (it prints a stack where the stage run
# must print nothing) has its whole runs timed only.
#
#   usage: bench/stages.sh [-n RUNS] [--perf-runs N] [--samples N]
#                          [--wm-seconds S] [--jobs LIST] [--only LIST]
#                          [-i DIR] [-k DIR] [--pystitch PATH] [--before PATH]
#                          [--perf PATH] [--python PATH]
#   (-i DIR: the captures py1.data, pymulti.data, c.data and wm.data there,
#   with their perf maps beside them; --perf-runs: perf script's runs, at
#   most --runs, for a whole-machine capture whose perf script takes
#   minutes; --only: some of py1,pymulti,c,wm)
set -uo pipefail

usage() { sed -n '2,46p' "$0" | sed 's/^# \{0,1\}//'; }
die() {
	printf 'stages.sh: %s\n' "$*" >&2
	exit 1
}
say() { printf '%s\n' "$*" >&2; }

# --jobs 1, 2, 4, ... up to the machine's cores
cores=$(nproc 2>/dev/null || echo 2)
jobs_list=1
for ((j = 2; j < cores; j *= 2)); do jobs_list+=",$j"; done
[ "$cores" -gt 1 ] && jobs_list+=",$cores"
runs=5 perf_runs='' samples=22000 wm_seconds=10 only=py1,pymulti,c,wm
input='' keep='' pystitch=${PYSTITCH:-} before='' perf=${PERF:-} python=
while [ $# -gt 0 ]; do
	case $1 in
	-n | --runs) runs=${2:?}; shift 2 ;;
	--perf-runs) perf_runs=${2:?}; shift 2 ;;
	--samples) samples=${2:?}; shift 2 ;;
	--wm-seconds) wm_seconds=${2:?}; shift 2 ;;
	--jobs) jobs_list=${2:?}; shift 2 ;;
	--only) only=${2:?}; shift 2 ;;
	-i) input=${2:?}; shift 2 ;;
	-k | --keep) keep=${2:?}; shift 2 ;;
	--pystitch) pystitch=${2:?}; shift 2 ;;
	--before) before=${2:?}; shift 2 ;;
	--perf) perf=${2:?}; shift 2 ;;
	--python) python=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
for n in "$runs" "$samples" "$wm_seconds" ${perf_runs:+"$perf_runs"}; do
	case $n in '' | *[!0-9]* | 0) die "-n, --perf-runs, --samples and --wm-seconds take positive numbers" ;; esac
done
[ -n "$perf_runs" ] || perf_runs=$runs
[ "$perf_runs" -le "$runs" ] || perf_runs=$runs
for j in ${jobs_list//,/ }; do
	case $j in '' | *[!0-9]* | 0) die "--jobs takes a list of positive numbers" ;; esac
done
for c in ${only//,/ }; do
	case $c in py1 | pymulti | c | wm) ;; *) die "--only takes some of py1,pymulti,c,wm" ;; esac
done

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
builddir=$(dirname -- "$pystitch")
if [ -n "$before" ]; then
	[ -x "$before" ] || die "--before: no program at $before"
	before=$(CDPATH='' cd -- "$(dirname -- "$before")" && pwd)/$(basename -- "$before")
fi
command -v python3 >/dev/null || die "needs python3 (to time the runs)"
if [ -n "$input" ]; then
	input=$(CDPATH='' cd -- "$input" && pwd) || die "-i: no folder $input"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-stages.XXXXXX") || die "cannot create a temporary directory"
captures=$work
[ -z "$input" ] || captures=$input
tmp_maps=() load_pids=()
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local pid
	for pid in "${load_pids[@]}"; do kill "$pid" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "$keep" ] && [ -z "$input" ]; then
		mkdir -p "$keep" && mv -f "$work"/*.data "$work"/perf-*.map "$keep"/ 2>/dev/null
		say "kept the captures and their perf maps in $keep"
	fi
	rm -f "${tmp_maps[@]}"
	remove_pid_files
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' HUP INT TERM
failed=0

# The Python workloads append the pid of each of their processes to
# NAME.pids as it starts (pyworkload.py --pid-file). Their perf maps, line
# tables and jitdumps in /tmp are removed at the end, and only theirs:
# /tmp/perf-*.map belongs to every process of the machine.
# shellcheck disable=SC2317 # run by cleanup
remove_pid_files() {
	local pid
	cat "$work"/*.pids 2>/dev/null | while read -r pid; do
		case $pid in '' | *[!0-9]*) continue ;; esac
		rm -f "/tmp/perf-$pid.map" "/tmp/perf-$pid.pylines" "/tmp/jit-$pid.dump"
	done
}

# keep_maps NAME: copy the perf maps of the processes NAME's workload
# started beside the capture (where pystitch looks first); they stay in
# /tmp (where perf looks) until the end
keep_maps() {
	local pid
	[ -f "$work/$1.pids" ] || return 0
	while read -r pid; do
		case $pid in '' | *[!0-9]*) continue ;; esac
		[ -f "/tmp/perf-$pid.map" ] && cp -f "/tmp/perf-$pid.map" "$work/"
	done <"$work/$1.pids"
}

# record NAME PERF_RECORD_ARGS... -- COMMAND...
record() {
	local name=$1
	shift
	say "recording $name.data: perf record $*"
	"$perf" record -q -o "$work/$name.data" "$@" >"$work/record.out" 2>"$work/record.err" || {
		tail -n 10 "$work/record.err" >&2
		die "perf record failed"
	}
	keep_maps "$name"
}

record_wm() {
	local end
	command -v gcc >/dev/null || die "the whole-machine capture needs gcc (the compiler load)"
	[ "$(id -u)" = 0 ] || die "the whole-machine capture needs root (perf record -a)"
	say "recording wm.data: ${wm_seconds} s of the whole machine (-F 99, DWARF) with busy_load.sh, gcc and $python running"
	"$here/busy_load.sh" $((wm_seconds + 4)) "$python" >"$work/busy.log" 2>&1 &
	load_pids+=($!)
	end=$(($(date +%s) + wm_seconds + 4))
	while [ "$(date +%s)" -lt "$end" ]; do
		gcc -O2 -g -I"$top/tests/programs" -c "$here/cworkload.c" -o "$work/cworkload.o" 2>/dev/null
	done &
	load_pids+=($!)
	"$python" -X perf "$here/pyworkload.py" --seconds $((wm_seconds + 3)) \
		--pid-file "$work/wm.pids" >/dev/null 2>&1 &
	load_pids+=($!)
	sleep 1
	"$perf" record -q -a -F 99 --call-graph dwarf -o "$work/wm.data" -- sleep "$wm_seconds" \
		>"$work/record.out" 2>"$work/record.err" || {
		tail -n 5 "$work/record.err" >&2
		die "perf record failed"
	}
	wait "${load_pids[@]}" 2>/dev/null
	load_pids=()
	keep_maps wm
}

# measure NAME COMMAND...: "wall_s cpu_s rss_kb" appended to NAME.times
# (getrusage() of the children: microseconds, where GNU time rounds to
# hundredths)
measure() {
	local name=$1
	shift
	# RUSAGE_CHILDREN before the run is subtracted: a python3 started by
	# a wrapper (pyenv's shim is a shell script that runs pyenv before it
	# execs python) holds the wrapper's children's time already, 0.05 s
	# here, which every run would otherwise carry
	(cd "$captures" && python3 -c '
import resource, subprocess, sys, time
before = resource.getrusage(resource.RUSAGE_CHILDREN)
start = time.monotonic()
status = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"))
wall = time.monotonic() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = usage.ru_utime + usage.ru_stime - before.ru_utime - before.ru_stime
print("%.4f %.4f %d" % (wall, cpu, usage.ru_maxrss))
sys.exit(status)' "$work/$name.err" "$@" >>"$work/$name.times") || {
		tail -n 5 "$work/$name.err" >&2
		die "$name failed: $*"
	}
}

median() {
	awk -v c="$2" '{ print $c }' "$1" | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# stage_table PREFIX LABEL N UNIQUE: the stages of one build's runs
stage_table() {
	local prefix=$1 label=$2 n=$3 unique=$4 total prev=0 stage
	printf '  %-30s %9s %9s %12s %12s\n' "$label --jobs 1, stage" "CPU s" "share" "us/sample" "us/address"
	total=$(median "$work/${prefix}j1.times" 2)
	for stage in read unwind name merge j1; do
		local cpu part title
		cpu=$(median "$work/$prefix$stage.times" 2)
		part=$(awk -v a="$cpu" -v b="$prev" 'BEGIN { printf "%.3f", a - b }')
		case $stage in
		read) title="read and order records" ;;
		unwind) title="unwind (no naming)" ;;
		name) title="name frames" ;;
		merge) title="Python merge" ;;
		j1) title="format the text" ;;
		esac
		awk -v t="$title" -v p="$part" -v all="$total" -v n="$n" -v u="$unique" -v s="$stage" 'BEGIN {
			printf "  %-30s %9.3f %8.0f%% %12.2f %12s\n", t, p, (all > 0 ? 100 * p / all : 0),
				(n > 0 ? 1e6 * p / n : 0), ((s == "name" && u > 0) ? sprintf("%.1f", 1e6 * p / u) : "-") }'
		prev=$cpu
	done
	awk -v all="$total" -v n="$n" 'BEGIN { printf "  %-30s %9.3f %8s %12.2f\n", "total", all, "", (n > 0 ? 1e6 * all / n : 0) }'
}

# goal_rows PREFIX LABEL PERF_WALL PERF_CPU PERF_KB: one build's whole runs
goal_rows() {
	local prefix=$1 label=$2 pw=$3 pc=$4 pm=$5 j w w1 w2=''
	w1=$(median "$work/${prefix}j1.times" 1)
	for j in ${jobs_list//,/ }; do
		w=$(median "$work/$prefix""j$j.times" 1)
		[ "$j" = 2 ] && w2=$w
		awk -v l="$label --jobs $j" -v w="$w" -v c="$(median "$work/$prefix""j$j.times" 2)" \
			-v m="$(median "$work/$prefix""j$j.times" 3)" -v pw="$pw" -v pc="$pc" -v pm="$pm" 'BEGIN {
			printf "  %-22s %9.3f %9.3f %9.0f %9.3f %9.3f %9.2f\n", l, w, c, m / 1024,
				w / pw, c / pc, m / pm }'
	done
	[ -z "$w2" ] || printf '  %-22s --jobs 2 no slower than --jobs 1: %s\n' "$label" \
		"$(awk -v a="$w2" -v b="$w1" 'BEGIN { print (a + 0 <= b + 0) ? "yes" : "no" }')"
}

# bench NAME LABEL
bench() {
	local name=$1 label=$2 data=$captures/$1.data j n unique r stage prefix bin before_stages
	[ -f "$data" ] || die "no $data"
	n=$("$perf" script -i "$data" -F time 2>/dev/null | grep -c .)
	# the DSO addresses a run names (the symbols' debug line)
	unique=$(cd "$captures" && "$pystitch" script -vv -j 1 -i "$data" 2>&1 >"$work/j1.txt" |
		awk '/^pystitch: symbols: [0-9]+ unique addresses/ { n += $3 } END { print n + 0 }')
	printf '\n%s: %s, %d MB, %d samples, %d unique addresses named\n' "$label" \
		"$(basename "$data")" $(($(wc -c <"$data") / 1048576)) "$n" "$unique"
	for j in ${jobs_list//,/ }; do
		[ "$j" = 1 ] && continue
		(cd "$captures" && "$pystitch" script -q -j "$j" -i "$data" >"$work/j$j.txt")
		if cmp -s "$work/j1.txt" "$work/j$j.txt"; then
			printf '  %-40s identical\n' "pystitch --jobs $j = --jobs 1"
		else
			printf '  %-40s DIFFERS\n' "pystitch --jobs $j = --jobs 1"
			failed=1
		fi
	done
	if [ -n "$before" ]; then
		(cd "$captures" && "$before" script -q -j 1 -i "$data" >"$work/b.txt")
		if cmp -s "$work/j1.txt" "$work/b.txt"; then
			printf '  %-40s identical\n' "pystitch = before"
		else
			printf '  %-40s DIFFERS\n' "pystitch = before"
			failed=1
		fi
	fi
	before_stages=1
	if [ -n "$before" ] && [ -n "$(cd "$captures" &&
		env PYSTITCH_BENCH_STAGE=read "$before" script -q -j 1 -i "$data" 2>/dev/null | head -c 1)" ]; then
		before_stages=''
		printf '  %-40s %s\n' "before" "has no PYSTITCH_BENCH_STAGE: whole runs only"
	fi
	rm -f "$work"/*.txt "$work"/*.times
	# warm the page cache and perf's build-id cache
	(cd "$captures" && "$perf" script -i "$data" >/dev/null 2>&1)
	for ((r = 1; r <= runs; r++)); do
		[ "$r" -le "$perf_runs" ] && measure perf "$perf" script -i "$data"
		for prefix in "" b-; do
			bin=$pystitch
			if [ -n "$prefix" ]; then
				[ -n "$before" ] || continue
				bin=$before
			fi
			for stage in read unwind name merge; do
				[ -z "$prefix" ] || [ -n "$before_stages" ] || continue
				measure "$prefix$stage" env PYSTITCH_BENCH_STAGE=$stage "$bin" script -q -j 1 -i "$data"
			done
			for j in ${jobs_list//,/ }; do
				measure "$prefix""j$j" "$bin" script -q -j "$j" -i "$data"
			done
		done
	done
	stage_table "" pystitch "$n" "$unique"
	[ -z "$before" ] || [ -z "$before_stages" ] || stage_table b- before "$n" "$unique"
	printf '  %-22s %9s %9s %9s %9s %9s %9s\n' "" "wall s" "CPU s" "peak MB" "wall/perf" "CPU/perf" "MB/perf"
	local pw pc pm
	pw=$(median "$work/perf.times" 1)
	pc=$(median "$work/perf.times" 2)
	pm=$(median "$work/perf.times" 3)
	awk -v w="$pw" -v c="$pc" -v m="$pm" 'BEGIN { printf "  %-22s %9.3f %9.3f %9.0f\n", "perf script", w, c, m / 1024 }'
	goal_rows "" pystitch "$pw" "$pc" "$pm"
	[ -z "$before" ] || goal_rows b- before "$pw" "$pc" "$pm"
	printf '  goals: wall/perf <= 0.05, CPU/perf <= 0.25, MB/perf <= 1, --jobs 2 no slower than --jobs 1\n'
	printf '  (median of %d runs, perf script %d; all runs alternate; output to /dev/null)\n' "$runs" "$perf_runs"
}

say "pystitch: $pystitch"
say "perf:     $perf ($("$perf" version 2>/dev/null))"
wanted() { case ",$only," in *",$1,"*) return 0 ;; esac; return 1; }
if [ -z "$input" ]; then
	seconds=$(awk -v n="$samples" 'BEGIN { printf "%.1f", n / 999 * 1.05 }')
	if wanted py1 || wanted pymulti || wanted wm; then
		[ -n "$python" ] || python=$(find_python 12) ||
			die "no CPython 3.12 under \$(pyenv root)/versions (pass --python PATH)"
	fi
	wanted py1 && record py1 -F 999 --call-graph dwarf -- \
		"$python" -X perf "$here/pyworkload.py" --seconds "$seconds" --pid-file "$work/py1.pids"
	wanted pymulti && record pymulti -F 999 --call-graph dwarf -- \
		"$python" -X perf "$here/pyworkload.py" --processes 2 --threads 3 \
		--seconds "$(awk -v s="$seconds" 'BEGIN { printf "%.1f", s / 2 }')" --pid-file "$work/pymulti.pids"
	if wanted c; then
		cprog=$builddir/bench/cworkload
		[ -x "$cprog" ] || make -s -C "$builddir" bench/cworkload >/dev/null 2>&1
		[ -x "$cprog" ] || die "no $cprog (run \`make\` in the build directory)"
		record c -F 999 --call-graph dwarf -- "$cprog" \
			"$(awk -v s="$seconds" 'BEGIN { printf "%.2f", s / 4 }')" 4
	fi
	wanted wm && record_wm
else
	# perf finds perf maps in /tmp only: lend it the folder's
	for map in "$input"/perf-*.map; do
		[ -f "$map" ] || continue
		[ -e "/tmp/$(basename "$map")" ] && continue
		cp "$map" /tmp/ && tmp_maps+=("/tmp/$(basename "$map")")
	done
fi
wanted py1 && bench py1 "CPython 3.12 -X perf, one process, Python frames merged"
wanted pymulti && bench pymulti "CPython 3.12 -X perf, 2 processes x 3 threads, Python frames merged"
wanted c && bench c "C workload, 4 threads, inlined frames"
wanted wm && bench wm "whole machine, ${wm_seconds} s (-F 99), Python frames merged"
exit $failed
