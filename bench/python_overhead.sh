#!/usr/bin/env bash
# python_overhead.sh: what Python frames in perf profiles cost the profiled
# program. Times one CPU-bound Python workload (calls and recursion,
# dicts, strings, sorting with a key function, regular expressions, json,
# methods and generators) run plain and with perf-map trampolines:
#   - CPython 3.8-3.11 with pystitch's module (python/, built here with
#     python/Makefile into a temporary directory), run as
#     `python -m pystitch_perf`, without its side file of line tables
#     (PYSTITCH_PERF_LINES=0) and with it (the default);
#   - CPython 3.12+ with its own `-X perf`, alone and with the module
#     writing the side file beside it (`python -X perf -m pystitch_perf`).
# The last column of a run with the side file is its cost in points over
# the same trampolines without it (CPU, the least of the runs).
# No perf record: this is the cost of the trampolines alone. Runs the
# variants alternately and prints, side by side, the median wall and CPU
# (user + system) seconds of each and the slowdown against the plain run of
# the same interpreter; also the least CPU time of each, which is what a
# machine shared with other jobs distorts least. Needs bash, make and a C
# compiler.
set -u

usage() {
	cat <<'EOF'
usage: bench/python_overhead.sh [options]

  -n, --runs N          timed runs of each variant (default 5)
  -i, --iterations N    rounds of the workload per run (default 500,
                        about 2.5 s on a recent x86-64 core)
      --python PATH     a CPython 3.8-3.11 to time with the module; may be
                        given several times (default: the newest 3.8.N,
                        3.9.N, 3.10.N and 3.11.N under $(pyenv root)/versions
                        or ~/.pyenv/versions)
      --python312 PATH  the CPython 3.12+ to time with -X perf, alone and with
                        the module's side file (default: the newest 3.12.N
                        there; "none" to leave it out)
  -h, --help            this text
EOF
}

die() {
	printf 'python_overhead.sh: %s\n' "$*" >&2
	exit 1
}

need_arg() {
	[ $# -ge 2 ] || die "$1 needs an argument"
}

runs=5
iterations=500
pythons=()
python312=
while [ $# -gt 0 ]; do
	case $1 in
	-n | --runs) need_arg "$@"; runs=$2; shift 2 ;;
	-i | --iterations) need_arg "$@"; iterations=$2; shift 2 ;;
	--python) need_arg "$@"; pythons+=("$2"); shift 2 ;;
	--python312) need_arg "$@"; python312=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive number"
[[ $iterations =~ ^[1-9][0-9]*$ ]] || die "--iterations must be a positive number"

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
module_src=$here/../python
[ -f "$module_src/Makefile" ] || die "no python/Makefile next to bench/ ($module_src)"

if [ ${#pythons[@]} -eq 0 ]; then
	for minor in 8 9 10 11; do
		found=$(find_python "$minor") && pythons+=("$found")
	done
	[ ${#pythons[@]} -gt 0 ] ||
		die "no CPython 3.8-3.11 under \$(pyenv root)/versions or ~/.pyenv/versions (use --python PATH)"
fi
if [ -z "$python312" ]; then
	python312=$(find_python 12) || python312=none
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/python_overhead.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf "$work"' EXIT
trap 'exit 130' HUP INT TERM

# timed COMMAND...: runs COMMAND and prints "WALL CPU" in seconds
timed() {
	local TIMEFORMAT='%R %U %S' times
	times=$({ time "$@" >/dev/null 2>"$work/run.err"; } 2>&1) || {
		cat "$work/run.err" >&2
		die "failed: $*"
	}
	awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<<"$times"
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# variants: label, interpreter, then the arguments before the workload
labels=()
declare -A command_of
for python in "${pythons[@]}"; do
	[ -x "$python" ] || die "$python is not executable"
	version=$("$python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])') || die "$python does not run"
	short=${version%.*}
	"$python" -c 'import sys; sys.exit(not (3, 8) <= sys.version_info[:2] < (3, 12))' ||
		die "$python is CPython $version; the module is for 3.8-3.11"
	printf 'building the module for %s ...\n' "$python" >&2
	env MAKEFLAGS= MAKELEVEL= make -s -f "$module_src/Makefile" PYTHON="$python" \
		BUILDDIR="$work/build" >"$work/build.log" 2>&1 || {
		cat "$work/build.log" >&2
		die "python/Makefile cannot build the module for $python"
	}
	labels+=("$version plain" "$version pystitch_perf" "$version +lines")
	command_of["$version plain"]="$python"
	command_of["$version pystitch_perf"]="env PYSTITCH_PERF_LINES=0 PYTHONPATH=$work/build/$short $python -m pystitch_perf"
	command_of["$version +lines"]="env PYTHONPATH=$work/build/$short $python -m pystitch_perf"
done
if [ "$python312" != none ]; then
	[ -x "$python312" ] || die "$python312 is not executable"
	version=$("$python312" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])') || die "$python312 does not run"
	"$python312" -X perf -c 'import sys; sys.exit(not sys.is_stack_trampoline_active())' ||
		die "$python312 (CPython $version) has no -X perf"
	short=${version%.*}
	printf 'building the module for %s ...\n' "$python312" >&2
	env MAKEFLAGS= MAKELEVEL= make -s -f "$module_src/Makefile" PYTHON="$python312" \
		BUILDDIR="$work/build" >"$work/build.log" 2>&1 || {
		cat "$work/build.log" >&2
		die "python/Makefile cannot build the module for $python312"
	}
	labels+=("$version plain" "$version -X perf" "$version +lines")
	command_of["$version plain"]="$python312"
	command_of["$version -X perf"]="$python312 -X perf"
	command_of["$version +lines"]="env PYTHONPATH=$work/build/$short $python312 -X perf -m pystitch_perf"
fi

printf 'workload: %s rounds; %s runs of each variant, alternating ...\n' "$iterations" "$runs" >&2
for ((run = 1; run <= runs; run++)); do
	for label in "${labels[@]}"; do
		# shellcheck disable=SC2086 # the command is split into words on purpose
		timed ${command_of[$label]} "$here/pyworkload.py" --rounds "$iterations" --remove-perf-map >>"$work/times-${label// /_}"
	done
done

minimum() {
	sort -n | head -n 1
}

# slowdown A B: A against B in percent
slowdown() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", 100 * (a - b) / b }'
}

printf '\nCPU-bound Python workload, %s rounds, %s runs of each variant (seconds; CPU = user + system)\n' \
	"$iterations" "$runs"
printf '%-26s %8s %8s %8s %9s %9s %9s %9s\n' variant "wall" "CPU" "min CPU" "wall +%" "CPU +%" \
	"min CPU +%" "lines +pt"
printf '%-26s %8s %8s %8s\n' "" median median ""
for label in "${labels[@]}"; do
	file=$work/times-${label// /_}
	wall=$(cut -d ' ' -f 1 "$file" | median)
	cpu=$(cut -d ' ' -f 2 "$file" | median)
	cpu_min=$(cut -d ' ' -f 2 "$file" | minimum)
	if [[ $label == *plain ]]; then
		base_wall=$wall
		base_cpu=$cpu
		base_cpu_min=$cpu_min
		printf '%-26s %8s %8s %8s\n' "$label" "$wall" "$cpu" "$cpu_min"
	elif [[ $label == *+lines ]]; then
		# points over the trampolines alone (the row above)
		points=$(awk -v a="$cpu_min" -v b="$tramp_cpu_min" -v p="$base_cpu_min" \
			'BEGIN { printf "%+.1f", 100 * (a - b) / p }')
		printf '%-26s %8s %8s %8s %9s %9s %9s %9s\n' "$label" "$wall" "$cpu" "$cpu_min" \
			"$(slowdown "$wall" "$base_wall")" "$(slowdown "$cpu" "$base_cpu")" \
			"$(slowdown "$cpu_min" "$base_cpu_min")" "$points"
	else
		tramp_cpu_min=$cpu_min
		printf '%-26s %8s %8s %8s %9s %9s %9s\n' "$label" "$wall" "$cpu" "$cpu_min" \
			"$(slowdown "$wall" "$base_wall")" "$(slowdown "$cpu" "$base_cpu")" \
			"$(slowdown "$cpu_min" "$base_cpu_min")"
	fi
done
printf '\nruns (CPU s):\n'
for label in "${labels[@]}"; do
	printf '  %-24s %s\n' "$label" "$(cut -d ' ' -f 2 "$work/times-${label// /_}" | tr '\n' ' ')"
done
