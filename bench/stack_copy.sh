#!/usr/bin/env bash
# stack_copy.sh: how much of a Python stack each stack-copy size keeps.
# Records bench/pyworkload.py (recursion, generators, callbacks from C)
# and tests/programs/pychains.py (threads, shallow chains) with
# `perf record --call-graph dwarf,SIZE` under each CPython 3.12+ found, and
# prints per interpreter and size: the samples, the share of Python
# stacks that `pystitch script` marks [truncated] (the copy ended before
# the stack's root), the capture's bytes per sample and the samples perf
# lost. `pystitch record` chooses its default size from these figures
# (man/pystitch.1, "pystitch record").
#   usage: bench/stack_copy.sh [-s SECONDS] [--python PATH]... [SIZE...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

seconds=3
pythons=()
sizes=()
while [ $# -gt 0 ]; do
	case $1 in
	-s | --seconds) seconds=$2; shift 2 ;;
	--python) pythons+=("$2"); shift 2 ;;
	-h | --help)
		sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) sizes+=("$1"); shift ;;
	esac
done
[ ${#sizes[@]} -gt 0 ] || sizes=(8192 16384 32768 65528)
if [ ${#pythons[@]} -eq 0 ]; then
	for minor in 12 13 14; do
		p=$(find_python "$minor") && pythons+=("$p")
	done
fi
[ ${#pythons[@]} -gt 0 ] || { echo "stack_copy.sh: no CPython 3.12+ found (give --python)" >&2; exit 1; }
pystitch=${PYSTITCH:-$top/build/release/pystitch}
[ -x "$pystitch" ] || { echo "stack_copy.sh: build pystitch first ($pystitch)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# one capture: "samples cut bytes_per_sample lost"
measure() {
	local python=$1 size=$2 workload=$3 data=$work/perf.data pids
	shift 3
	perf record -q -F 999 --call-graph "dwarf,$size" -o "$data" -- \
		"$python" -X perf "$workload" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; return 1; }
	"$pystitch" -q -i "$data" --perf-map-dir /tmp >"$work/out.txt"
	pids=$("$pystitch" -q -i "$data" -F pid --python native | sort -u)
	awk -v bytes="$(stat -c %s "$data")" -v lost="$(perf report -i "$data" --stats 2>/dev/null |
		awk '/LOST_SAMPLES events:/ {print $3; exit}')" '
		/^[^\t]/ { samples++ }
		/\[truncated\]/ { cut++ }
		END { printf "%d %d %d %d\n", samples, cut, samples ? bytes / samples : 0, lost + 0 }' "$work/out.txt"
	for pid in $pids; do rm -f "/tmp/perf-$pid.map"; done
}

printf '%-44s %6s | %-28s | %-28s\n' "interpreter" "size" "pyworkload: samples cut B/smp" "pychains: samples cut B/smp"
for python in "${pythons[@]}"; do
	for size in "${sizes[@]}"; do
		read -r s1 c1 b1 l1 < <(measure "$python" "$size" "$here/pyworkload.py" --seconds "$seconds")
		read -r s2 c2 b2 l2 < <(measure "$python" "$size" "$top/tests/programs/pychains.py" "$seconds" "$work/chains.txt")
		printf '%-44s %6s | %6d %5.1f%% %6d lost %-3d | %6d %5.1f%% %6d lost %-3d\n' "$python" "$size" \
			"$s1" "$(awk -v c="$c1" -v s="$s1" 'BEGIN { print s ? 100 * c / s : 0 }')" "$b1" "$l1" \
			"$s2" "$(awk -v c="$c2" -v s="$s2" 'BEGIN { print s ? 100 * c / s : 0 }')" "$b2" "$l2"
	done
done
