#!/usr/bin/env bash
# record_chains.sh: the Python chain figure of `pystitch record` per
# interpreter. Runs tests/programs/pychains.py (two threads, chains at
# known depths, the chains the interpreter itself reported) under
# `pystitch record -o FILE.txt -- PYTHON ...` with no other flag, for every
# CPython 3.8-3.13 under pyenv's versions, Debian's /usr/bin/python3.11
# and each --python given (a 3.14, a free-threaded or frame-pointer
# build), and prints per interpreter the samples in the workload's window
# and the share carrying exactly the reported root-to-leaf chain
# (tests/e2e/pychains_check.py), with the stack-copy size record chose.
#   usage: bench/record_chains.sh [-s SECONDS] [--python PATH]...
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

seconds=3
pythons=()
while [ $# -gt 0 ]; do
	case $1 in
	-s | --seconds) seconds=$2; shift 2 ;;
	--python) pythons+=("$2"); shift 2 ;;
	-h | --help)
		sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) echo "record_chains.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
for minor in 8 9 10 11 12 13; do
	p=$(find_python "$minor") && pythons=("$p" "${pythons[@]}")
done
[ -x /usr/bin/python3.11 ] && pythons+=(/usr/bin/python3.11)
[ ${#pythons[@]} -gt 0 ] || { echo "record_chains.sh: no CPython found (give --python)" >&2; exit 1; }
pystitch=${PYSTITCH:-$top/build/release/pystitch}
[ -x "$pystitch" ] || { echo "record_chains.sh: build pystitch first ($pystitch)" >&2; exit 1; }
checker=$(command -v python3) || { echo "record_chains.sh: python3 needed for the checker" >&2; exit 1; }

work=$(mktemp -d)
# pystitch_perf is built for 3.8-3.11 into this cache, as on a first run
export XDG_CACHE_HOME=$work/cache
trap 'rm -rf "$work"' EXIT

printf '%-44s %-10s %s\n' "interpreter" "stack copy" "chains: right/samples in the window"
for python in "${pythons[@]}"; do
	rm -f "$work/out.txt" "$work/expected"
	if ! "$pystitch" record -v -o "$work/out.txt" -- "$python" "$top/tests/programs/pychains.py" \
		"$seconds" "$work/expected" 2>"$work/record.err" >/dev/null; then
		printf '%-44s record failed: %s\n' "$python" "$(tail -1 "$work/record.err")"
		continue
	fi
	size=$(sed -n 's/.*--call-graph dwarf,\([0-9]*\).*/\1/p' "$work/record.err" | head -1)
	figure=$("$checker" "$top/tests/e2e/pychains_check.py" --min 0 "$work/expected" \
		"$work/out.txt" 2>/dev/null)
	printf '%-44s %-10s %s\n' "$python" "${size:-?}" "$figure"
done
