#!/usr/bin/env bash
# compare.sh: times `perf script` against `pystitch script` on one capture.
#
# Records a capture (or takes one with -i), checks once that both tools
# print the same text, then runs them alternately with their output sent
# to /dev/null and prints, side by side, the median wall time, CPU time,
# samples per second and peak RSS of each, and the ratio perf/pystitch.
# Needs bash, perf, awk and GNU date; python is only the default workload.
# See bench/README.md for how to run it and read the table.
set -u

usage() {
	cat <<'EOF'
usage: bench/compare.sh [options] [-- OPTIONS FOR BOTH TOOLS]

  -i, --input FILE     capture to use (default: record one, see --workload)
  -w, --workload KIND  what to record without -i:
                         python  a CPython 3.11 workload (default)
                         perf    the same workload on CPython 3.12 run with
                                 -X perf (trampolines and a perf map)
                         c       bench/cworkload: two threads through
                                 inlined chains into libm and libc
  -g, --call-graph M   how to record: dwarf (default) or fp (perf record -g)
  -s, --samples N      samples to record, roughly (default 20000, at 999 Hz)
  -n, --runs N         timed runs of each tool (default 5)
      --no-inline      time both tools with --no-inline
      --modes LIST     comma-separated modes to time: default (pystitch's
                       defaults: Python frames merged), native (pystitch
                       --python=native), no-inline (both with --no-inline)
                       (default: default; --no-inline means no-inline).
                       The check compares perf script with pystitch
                       --python=native, which must print the same text.
      --pystitch PATH  pystitch binary (default: $PYSTITCH, then ./pystitch,
                       then the build trees next to this script, then PATH)
      --baseline PATH  another pystitch binary to time alongside (say, a
                       build from before a change): one more column
      --perf PATH      perf binary (default: $PERF, then perf from PATH)
      --python PATH    interpreter for the workload (default: the newest
                       3.11 (python) or 3.12 (perf) under
                       $(pyenv root)/versions or ~/.pyenv/versions)
      --no-verify      skip the check that both outputs are identical
  -k, --keep DIR       keep the capture and both outputs in DIR
  -h, --help           this text

Arguments after -- go to both `perf script` and `pystitch script`
(for example -- -F comm,tid,time,ip,sym,dso).
EOF
}

die() {
	printf 'compare.sh: %s\n' "$*" >&2
	exit 1
}

say() {
	printf '%s\n' "$*" >&2
}

# ---- options ----------------------------------------------------------
input=
workload=python
call_graph=dwarf
samples=20000
runs=5
modes=default
pystitch=${PYSTITCH:-}
baseline=
perf=${PERF:-}
python=
verify=1
keep=
extra=()

need_arg() {
	# shellcheck disable=SC2015 # the second test cannot fail after the first passed
	[ $# -ge 2 ] && [ -n "$2" ] || die "option $1 needs a value (see --help)"
}

while [ $# -gt 0 ]; do
	case $1 in
	-i | --input) need_arg "$@"; input=$2; shift 2 ;;
	-w | --workload) need_arg "$@"; workload=$2; shift 2 ;;
	-g | --call-graph) need_arg "$@"; call_graph=$2; shift 2 ;;
	-s | --samples) need_arg "$@"; samples=$2; shift 2 ;;
	-n | --runs) need_arg "$@"; runs=$2; shift 2 ;;
	--no-inline) modes=no-inline; shift ;;
	--modes) need_arg "$@"; modes=$2; shift 2 ;;
	--pystitch) need_arg "$@"; pystitch=$2; shift 2 ;;
	--baseline) need_arg "$@"; baseline=$2; shift 2 ;;
	--perf) need_arg "$@"; perf=$2; shift 2 ;;
	--python) need_arg "$@"; python=$2; shift 2 ;;
	--no-verify) verify=0; shift ;;
	-k | --keep) need_arg "$@"; keep=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; extra=("$@"); break ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done

case $workload in python | perf | c) ;; *) die "--workload must be python, perf or c, not '$workload'" ;; esac
case $call_graph in dwarf | fp) ;; *) die "--call-graph must be dwarf or fp, not '$call_graph'" ;; esac
case $samples in '' | *[!0-9]*) die "--samples needs a number, not '$samples'" ;; esac
case $runs in '' | *[!0-9]* | 0) die "--runs needs a positive number, not '$runs'" ;; esac
for m in ${modes//,/ }; do
	case $m in default | native | no-inline) ;; *) die "unknown mode '$m' in --modes (default, native, no-inline)" ;; esac
done

here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
top=$(dirname -- "$here")

# ---- tools --------------------------------------------------------------
if [ -z "$perf" ]; then
	perf=$(command -v perf) ||
		die "perf is not installed (Debian/Ubuntu: apt-get install linux-perf); it is what pystitch is compared with"
fi
[ -x "$perf" ] || die "perf ($perf) is not installed or not executable"
"$perf" version >/dev/null 2>&1 || die "\`$perf version\` fails: $("$perf" version 2>&1 | head -n 1)"

if [ -z "$pystitch" ]; then
	for candidate in ./pystitch "$top/pystitch" "$top"/build/*/pystitch; do
		if [ -x "$candidate" ] && [ -f "$candidate" ]; then
			pystitch=$candidate
			break
		fi
	done
	[ -n "$pystitch" ] || pystitch=$(command -v pystitch) ||
		die "no pystitch binary found: build it, run from the build directory, or pass --pystitch PATH"
fi
[ -x "$pystitch" ] || die "pystitch ($pystitch) is not executable"
case $pystitch in */*) pystitch=$(CDPATH='' cd -- "$(dirname -- "$pystitch")" && pwd)/$(basename -- "$pystitch") ;; esac
if [ -n "$baseline" ]; then
	# shellcheck disable=SC2015 # two tests, then die
	[ -x "$baseline" ] && [ -f "$baseline" ] || die "baseline ($baseline) is not an executable file"
fi

# Peak RSS: GNU time where it is installed, else the VmHWM a poller reads
# from /proc while the tool runs (a little less exact near the end).
# PS_BENCH_NO_GNU_TIME=1 forces the second way.
gnu_time=
if [ -z "${PS_BENCH_NO_GNU_TIME:-}" ] && [ -x /usr/bin/time ] &&
	/usr/bin/time -f %M -o /dev/null true 2>/dev/null; then
	gnu_time=/usr/bin/time
fi

# ---- work directory -----------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-bench.XXXXXX") || die "cannot create a temporary directory"
# the perf map of a -w perf recording, which both tools read from /tmp
perf_map=
cleanup() {
	if [ -n "$keep" ]; then
		mkdir -p "$keep" && for f in "$work"/perf.data "$work"/*.txt $perf_map; do
			[ -e "$f" ] && mv -f "$f" "$keep"/
		done
		say "kept the capture and outputs in $keep"
	fi
	[ -z "$perf_map" ] || rm -f "$perf_map"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' HUP INT TERM

# ---- the workload -------------------------------------------------------
record() {
	local seconds cg=()
	# cpu-clock at 999 Hz of a single-threaded workload: ~999 samples a CPU second
	seconds=$(awk -v n="$samples" 'BEGIN { printf "%.2f", n / 999 }')
	if [ "$call_graph" = dwarf ]; then cg=(--call-graph dwarf); else cg=(-g); fi
	local cmd=()
	if [ "$workload" != c ]; then
		local minor=11 xopt=()
		if [ "$workload" = perf ]; then
			minor=12
			xopt=(-X perf)
		fi
		[ -n "$python" ] || python=$(find_python $minor) ||
			die "no CPython 3.$minor under \$(pyenv root)/versions or ~/.pyenv/versions (install one, pass --python PATH, or use -i FILE)"
		[ -x "$python" ] || die "python ($python) is not executable"
		cmd=("$python" "${xopt[@]}" "$here/pyworkload.py" --seconds "$seconds")
	else
		# two threads of bench/cworkload: each runs half the CPU time
		local cwork threads=2
		cwork=$(dirname -- "$pystitch")/bench/cworkload
		if [ ! -x "$cwork" ] && [ -f "$(dirname -- "$pystitch")/Makefile" ]; then
			make -s -C "$(dirname -- "$pystitch")" bench/cworkload >/dev/null 2>&1
		fi
		[ -x "$cwork" ] || die "no bench/cworkload next to $pystitch (run \`make check\` or \`make bench/cworkload\` in the build directory)"
		cmd=("$cwork" "$(awk -v s="$seconds" -v t="$threads" 'BEGIN { printf "%.2f", s / t }')" "$threads")
	fi
	say "recording ~$samples samples (${seconds}s of CPU) of the $workload workload with perf record -F 999 ${cg[*]} ..."
	if ! "$perf" record -F 999 "${cg[@]}" -o "$work/perf.data" -- "${cmd[@]}" \
		>"$work/record.out" 2>"$work/record.err"; then
		tail -n 15 "$work/record.err" | sed 's/^/    /' >&2
		if grep -q -i -E 'permission|not permitted|paranoid' "$work/record.err"; then
			die "perf record is not permitted here (run as root or lower kernel.perf_event_paranoid), or pass -i FILE"
		fi
		die "perf record failed"
	fi
	grep -i -E 'lost|warning' "$work/record.err" | sed 's/^/    /' >&2
	input=$work/perf.data
	if [ "$workload" = perf ]; then
		perf_map=/tmp/perf-$("$perf" script -i "$input" -F pid 2>/dev/null | awk '{ print $1; exit }').map
	fi
}

if [ -n "$input" ]; then
	[ -r "$input" ] || die "cannot read $input"
	case $input in /*) ;; *) input=$PWD/$input ;; esac
else
	record
fi

# ---- measuring ----------------------------------------------------------
now_ns() {
	date +%s%N
}

# CPU time (user + system, microseconds) of the children this shell has
# waited for: the `times` builtin, run in this shell (not a subshell).
children_cpu_us() {
	times >"$work/times"
	awk 'NR == 2 {
		t = 0
		for (i = 1; i <= 2; i++) { split($i, p, "m"); t += p[1] * 60 + p[2] }
		printf "%d\n", t * 1e6
	}' "$work/times"
}

# measure NAME ARGS...: runs one tool with output to /dev/null and appends
# "WALL_US CPU_US PEAK_RSS_KB" to $work/NAME.times.
measure() {
	local name=$1 start end rss=0 cpu=0 pid status before key value user sys
	shift
	if [ -n "$gnu_time" ]; then
		start=$(now_ns)
		"$gnu_time" -f '%U %S %M' -o "$work/usage" "$@" >/dev/null 2>"$work/$name.err"
		status=$?
		end=$(now_ns)
		read -r user sys rss <<<"$(tail -n 1 "$work/usage")"
		cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%d", (u + s) * 1e6 }')
	else
		children_cpu_us >"$work/cpu-before"
		before=$(cat "$work/cpu-before")
		start=$(now_ns)
		"$@" >/dev/null 2>"$work/$name.err" &
		pid=$!
		# VmHWM is the peak so far; the last read before the exit is
		# close to the final one (the sleeps add a little CPU time)
		while kill -0 "$pid" 2>/dev/null; do
			{ while read -r key value _; do
				[ "$key" = VmHWM: ] && rss=$value
			done <"/proc/$pid/status"; } 2>/dev/null
			sleep 0.05
		done
		wait "$pid"
		status=$?
		end=$(now_ns)
		children_cpu_us >"$work/cpu-after"
		cpu=$(($(cat "$work/cpu-after") - before))
	fi
	if [ "$status" -ne 0 ]; then
		tail -n 10 "$work/$name.err" | sed 's/^/    /' >&2
		die "$name failed (exit status $status): $*"
	fi
	echo "$(((end - start) / 1000)) $cpu $rss" >>"$work/$name.times"
}

# median of column $2 of file $1 (even counts: mean of the middle two)
median() {
	awk -v c="$2" '{ print $c }' "$1" | sort -n |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# verify MODE_ARGS...: both outputs once, byte for byte, then per sample
verify_outputs() {
	local perf_txt=$work/perf-script$suffix.txt ps_txt=$work/pystitch-script$suffix.txt
	"$perf" script -i "$input" "$@" >"$perf_txt" 2>"$work/perf.err" || {
		tail -n 10 "$work/perf.err" | sed 's/^/    /' >&2
		die "perf script failed on $input"
	}
	"$pystitch" script -i "$input" --python=native "$@" >"$ps_txt" 2>"$work/pystitch.err" || {
		tail -n 10 "$work/pystitch.err" | sed 's/^/    /' >&2
		die "pystitch script failed on $input"
	}
	# a sample starts at a line that is neither empty nor a stack frame
	nr_samples=$(awk '$0 != "" && !/^\t/ { n++ } END { print n + 0 }' "$perf_txt")
	if cmp -s "$perf_txt" "$ps_txt"; then
		identical="100.00% of $nr_samples samples identical (outputs byte-identical)"
		return
	fi
	# shellcheck disable=SC2016 # an awk program
	local flat='$0 == "" { next } !/^\t/ { if (NR > 1) printf "\n"; printf "%s", $0; next } { printf "\037%s", $0 } END { printf "\n" }'
	awk "$flat" "$perf_txt" >"$work/perf.flat"
	awk "$flat" "$ps_txt" >"$work/pystitch.flat"
	identical=$(awk -v other="$work/pystitch.flat" '
		{ total++; if ((getline line < other) > 0 && line == $0) same++ }
		END {
			extra = 0
			while ((getline line < other) > 0) extra++
			printf "%.2f%% of %d samples identical", total ? 100 * same / total : 0, total
			if (extra) printf " (pystitch printed %d more)", extra
		}' "$work/perf.flat")
	identical="$identical; outputs DIFFER (first difference: $(cmp "$perf_txt" "$ps_txt" 2>&1 | head -n 1))"
	rm -f "$work/perf.flat" "$work/pystitch.flat"
}

count_samples() {
	"$perf" script -i "$input" -F time "$@" 2>/dev/null | awk '$0 != "" && !/^\t/ { n++ } END { print n + 0 }'
}

size=$(wc -c <"$input" | tr -d ' ')
say "capture: $input ($((size / 1048576)) MB)"
say "perf:     $perf ($("$perf" version 2>/dev/null))"
say "pystitch: $pystitch"
[ -z "$baseline" ] || say "baseline: $baseline"
[ -n "$gnu_time" ] || say "note: /usr/bin/time (GNU time) not found; peak RSS is polled from /proc"

# row LABEL FORMAT COLUMN SCALE: one line of the table, a value per tool
# (the median of COLUMN of its times file, divided by SCALE), then the
# ratios perf/pystitch and, with --baseline, baseline/pystitch.
row() {
	local label=$1 format=$2 column=$3 scale=$4 tool values=()
	for tool in perf pystitch ${baseline:+baseline}; do
		values+=("$(median "$work/$tool.times" "$column")")
	done
	awk -v label="$label" -v format="$format" -v scale="$scale" -v rate="${5:-}" -v n="$nr_samples" \
		-v p="${values[0]}" -v s="${values[1]}" -v b="${values[2]:-}" '
		function show(v) { return rate ? (v > 0 ? n / (v / 1e6) : 0) : v / scale }
		BEGIN {
			printf "%-14s " format " " format, label, show(p), show(s)
			if (b != "")
				printf " " format, show(b)
			if (!rate) {
				printf " %14.2f", (s > 0 ? p / s : 0)
				if (b != "")
					printf " %14.2f", (s > 0 ? b / s : 0)
			}
			printf "\n"
		}'
}

for mode in ${modes//,/ }; do
	args=()
	ps_args=()
	suffix=
	case $mode in
	default) ;;
	native) ps_args=(--python=native) suffix=-native ;;
	no-inline) args=(--no-inline) suffix=-no-inline ;;
	*) die "unknown mode '$mode' (default, native, no-inline)" ;;
	esac
	args+=("${extra[@]}")
	rm -f "$work/perf.times" "$work/pystitch.times" "$work/baseline.times"

	# the check run also warms the page cache and perf's build-id cache
	if [ "$verify" = 1 ]; then
		say "checking that both outputs are identical ($mode) ..."
		verify_outputs "${args[@]}"
	else
		nr_samples=$(count_samples "${args[@]}")
		identical="not checked (--no-verify)"
	fi
	say "timing $runs runs of each ($mode) ..."
	for ((i = 1; i <= runs; i++)); do
		measure perf "$perf" script -i "$input" "${args[@]}"
		measure pystitch "$pystitch" script -i "$input" "${ps_args[@]}" "${args[@]}"
		[ -z "$baseline" ] || measure baseline "$baseline" script -i "$input" "${ps_args[@]}" "${args[@]}"
	done

	printf '\nmode: %s, %d samples, median of %d runs each, output to /dev/null\n' \
		"$mode" "$nr_samples" "$runs"
	if [ -n "$baseline" ]; then
		printf '%-14s %14s %14s %14s %14s %14s\n' "" "perf script" "pystitch" "baseline" \
			"perf/pystitch" "base/pystitch"
	else
		printf '%-14s %14s %14s %14s\n' "" "perf script" "pystitch" "perf/pystitch"
	fi
	row "wall (s)" "%14.3f" 1 1e6
	row "CPU (s)" "%14.3f" 2 1e6
	row "samples/s" "%14.0f" 1 1 rate
	if [ "$(median "$work/perf.times" 3)" != 0 ]; then
		row "peak RSS (MB)" "%14.1f" 3 1024
	else
		printf '%-14s %14s %14s\n' "peak RSS (MB)" "n/a" "n/a"
	fi
	awk -v p="$(median "$work/perf.times" 1)" -v s="$(median "$work/pystitch.times" 1)" 'BEGIN {
		if (p > 0 && s > 0)
			printf "pystitch takes %.0f%% of perf'"'"'s wall time (%s)\n", 100 * s / p, p >= s ? "faster" : "slower"
	}'
	printf 'outputs: %s\n' "$identical"
	# every run, for a look at the spread
	for tool in perf pystitch ${baseline:+baseline}; do
		printf '%s' "$tool runs (wall s):"
		awk '{ printf " %.3f", $1 / 1e6 }' "$work/$tool.times"
		printf '\n'
	done
done
