#!/usr/bin/env bash
# speed.sh: pystitch's speed and memory against perf script, on captures it
# records itself, as ratios of wall time (pystitch / perf script):
#
#   python  CPython 3.12 -X perf running bench/pyworkload.py, recorded with
#           perf record -F 999 --call-graph dwarf (about --samples samples);
#           pystitch script with its defaults (Python frames merged)
#   c       bench/cworkload (four threads, heavily inlined call chains into
#           libm and libc), same recording and about as many samples;
#           inlined frames printed (both tools' default)
#   big     with --big: the C workload recorded with 64 KB stack copies
#           until the file is about --big-mb MB; only peak memory matters
#
# For each capture: perf script and pystitch script --jobs J for every J of
# --jobs, --runs times each, alternately, output to /dev/null; the table
# shows the median wall time, CPU time and peak RSS of each, and the ratio
# of wall times. Checks, before timing: pystitch --python=native prints
# exactly what perf script prints, and every --jobs J prints exactly what
# --jobs 1 prints (a "DIFFERS" line otherwise, and exit status 1).
#
#   usage: bench/speed.sh [-n RUNS] [--samples N] [--jobs LIST] [--big]
#                         [--big-mb MB] [--only python|c|big] [--pystitch PATH]
#                         [--perf PATH] [--python PATH] [-k DIR]
set -uo pipefail

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }
die() {
	printf 'speed.sh: %s\n' "$*" >&2
	exit 1
}
say() { printf '%s\n' "$*" >&2; }

runs=3 samples=22000 jobs_list=1,2 big=0 big_mb=2048 only='' keep=''
pystitch=${PYSTITCH:-} perf=${PERF:-} python=
while [ $# -gt 0 ]; do
	case $1 in
	-n | --runs) runs=${2:?}; shift 2 ;;
	--samples) samples=${2:?}; shift 2 ;;
	--jobs) jobs_list=${2:?}; shift 2 ;;
	--big) big=1; shift ;;
	--big-mb) big_mb=${2:?}; big=1; shift 2 ;;
	--only) only=${2:?}; shift 2 ;;
	--pystitch) pystitch=${2:?}; shift 2 ;;
	--perf) perf=${2:?}; shift 2 ;;
	--python) python=${2:?}; shift 2 ;;
	-k | --keep) keep=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
case $runs in '' | *[!0-9]* | 0) die "--runs needs a positive number" ;; esac
case $samples in '' | *[!0-9]*) die "--samples needs a number" ;; esac
case $only in '' | python | c) ;; big) big=1 ;; *) die "--only takes python, c or big" ;; esac
for j in ${jobs_list//,/ }; do
	case $j in '' | *[!0-9]* | 0) die "--jobs takes a list of positive numbers" ;; esac
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
[ -x /usr/bin/time ] || die "needs GNU time (/usr/bin/time, Debian package time)"

work=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-speed.XXXXXX") || die "cannot create a temporary directory"
perf_maps=()
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	if [ -n "$keep" ]; then
		mkdir -p "$keep" && mv -f "$work"/*.data "${perf_maps[@]}" "$keep"/ 2>/dev/null
		say "kept the captures in $keep"
	else
		rm -f "${perf_maps[@]}"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' HUP INT TERM
failed=0

# record FILE PERF_RECORD_ARGS... -- COMMAND...
record() {
	local file=$1
	shift
	say "recording $(basename "$file"): perf record $*"
	"$perf" record -o "$file" "$@" >"$work/record.out" 2>"$work/record.err" || {
		tail -n 10 "$work/record.err" >&2
		die "perf record failed"
	}
}

cworkload() {
	local prog=$builddir/bench/cworkload
	[ -x "$prog" ] || make -s -C "$builddir" bench/cworkload >/dev/null 2>&1
	[ -x "$prog" ] || die "no $prog (run \`make\` in the build directory)"
	printf '%s\n' "$prog"
}

# measure NAME COMMAND...: "wall_s cpu_s rss_kb" appended to NAME.times
measure() {
	local name=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$work/usage" "$@" >/dev/null 2>"$work/$name.err" || {
		tail -n 5 "$work/$name.err" >&2
		die "$name failed: $*"
	}
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$work/usage" >>"$work/$name.times"
}

median() {
	awk -v c="$2" '{ print $c }' "$1" | sort -n |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# check LABEL A B: byte-identical or a DIFFERS line
check() {
	if cmp -s "$2" "$3"; then
		printf '  %-52s identical\n' "$1"
	else
		printf '  %-52s DIFFERS (%s)\n' "$1" "$(cmp "$2" "$3" 2>&1 | head -n 1)"
		failed=1
	fi
}

# bench LABEL FILE TARGETS: checks, then the timing table. TARGETS:
# "J=RATIO ..." the issue's ratio for --jobs J.
bench() {
	local label=$1 data=$2 targets=$3 j n
	n=$("$perf" script -i "$data" -F time 2>/dev/null | grep -c .)
	printf '\n%s: %s, %d MB, %d samples\n' "$label" "$(basename "$data")" \
		$(($(wc -c <"$data") / 1048576)) "$n"
	"$perf" script -i "$data" >"$work/perf.txt" 2>/dev/null
	"$pystitch" script -q --python=native -i "$data" >"$work/native.txt"
	check "pystitch --python=native = perf script" "$work/perf.txt" "$work/native.txt"
	"$pystitch" script -q -j 1 -i "$data" >"$work/j1.txt"
	for j in ${jobs_list//,/ }; do
		[ "$j" = 1 ] && continue
		"$pystitch" script -q -j "$j" -i "$data" >"$work/j$j.txt"
		check "pystitch --jobs $j = --jobs 1" "$work/j1.txt" "$work/j$j.txt"
	done
	rm -f "$work"/*.txt "$work"/*.times
	for ((i = 1; i <= runs; i++)); do
		measure perf "$perf" script -i "$data"
		for j in ${jobs_list//,/ }; do
			measure "j$j" "$pystitch" script -q -j "$j" -i "$data"
		done
	done
	local p
	p=$(median "$work/perf.times" 1)
	printf '  %-22s %9s %9s %10s %8s %8s\n' "" "wall s" "CPU s" "peak MB" "ratio" "target"
	printf '  %-22s %9.2f %9.2f %10.0f\n' "perf script" "$p" "$(median "$work/perf.times" 2)" \
		"$(awk -v k="$(median "$work/perf.times" 3)" 'BEGIN { print k / 1024 }')"
	for j in ${jobs_list//,/ }; do
		local w target
		w=$(median "$work/j$j.times" 1)
		# shellcheck disable=SC2086 # a list of J=TARGET words
		target=$(printf '%s\n' $targets | sed -n "s/^$j=//p")
		printf '  %-22s %9.2f %9.2f %10.0f %8.3f %8s\n' "pystitch --jobs $j" "$w" \
			"$(median "$work/j$j.times" 2)" \
			"$(awk -v k="$(median "$work/j$j.times" 3)" 'BEGIN { print k / 1024 }')" \
			"$(awk -v w="$w" -v p="$p" 'BEGIN { print (p > 0 ? w / p : 0) }')" "${target:--}"
	done
	printf '  (median of %d runs, output to /dev/null; ratio = pystitch wall / perf script wall)\n' "$runs"
}

seconds=$(awk -v n="$samples" 'BEGIN { printf "%.1f", n / 999 * 1.05 }')
say "pystitch: $pystitch"
say "perf:     $perf ($("$perf" version 2>/dev/null))"

if [ -z "$only" ] || [ "$only" = python ]; then
	[ -n "$python" ] || python=$(find_python 12) ||
		die "no CPython 3.12 under \$(pyenv root)/versions (pass --python PATH)"
	record "$work/python.data" -F 999 --call-graph dwarf -- \
		"$python" -X perf "$here/pyworkload.py" --seconds "$seconds"
	pid=$("$perf" script -i "$work/python.data" -F pid 2>/dev/null | awk '{ print $1; exit }')
	perf_maps+=("/tmp/perf-$pid.map")
	bench "CPython 3.12 -X perf, DWARF, Python frames merged" "$work/python.data" "1=0.15 2=0.10"
fi
if [ -z "$only" ] || [ "$only" = c ]; then
	cprog=$(cworkload)
	# four threads share the CPU seconds (each spins for its own share)
	record "$work/c.data" -F 999 --call-graph dwarf -- "$cprog" \
		"$(awk -v s="$seconds" 'BEGIN { printf "%.2f", s / 4 }')" 4
	bench "C, DWARF, threads and inlined frames" "$work/c.data" "1=0.30"
fi
if [ "$big" = 1 ]; then
	cprog=$(cworkload)
	# 64 KB stack copies: about 64 KB a sample, shared by two threads
	big_seconds=$(awk -v mb="$big_mb" 'BEGIN { printf "%.1f", mb * 1048576 / 66000 / 999 / 2 }')
	avail=$(df -Pk "$work" | awk 'NR == 2 { print int($4 / 1024) }')
	[ "$avail" -gt $((big_mb * 2)) ] || die "--big needs $((big_mb * 2)) MB free in $work ($avail MB)"
	record "$work/big.data" -F 999 --call-graph dwarf,65528 -- "$cprog" "$big_seconds" 2
	printf '\nmemory: %s, %d MB\n' "big.data" $(($(wc -c <"$work/big.data") / 1048576))
	printf '  %-22s %9s %10s\n' "" "wall s" "peak MB"
	rm -f "$work"/*.times
	measure perf "$perf" script -i "$work/big.data"
	for j in ${jobs_list//,/ }; do
		measure "j$j" "$pystitch" script -q -j "$j" -i "$work/big.data"
	done
	for tool in perf ${jobs_list//,/ }; do
		name=$tool label="pystitch --jobs $tool"
		[ "$tool" = perf ] && label="perf script" || name=j$tool
		printf '  %-22s %9.2f %10.0f\n' "$label" "$(median "$work/$name.times" 1)" \
			"$(awk -v k="$(median "$work/$name.times" 3)" 'BEGIN { print k / 1024 }')"
	done
	rm -f "$work/big.data"
fi
exit $failed
