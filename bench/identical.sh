#!/usr/bin/env bash
# identical.sh: do two pystitch builds print the same bytes? For changes
# that must not change output (restructuring, speed work): every command,
# in the modes that exercise different paths, on each capture given,
# compared byte for byte with cmp, exit statuses and stderr included.
#
#   bench/identical.sh [-j "1 2 3"] OLD_PYSTITCH NEW_PYSTITCH CAPTURE...
#
# Prints one line per run ("same" or "DIFFERS"), and for a difference the
# first lines of the diff; exits 1 when anything differs. Perf maps and
# jitdumps are found as pystitch finds them (beside the capture first), so
# keep them next to each capture; kernel symbols come from an empty file,
# so the machine's /proc/kallsyms changing between runs changes nothing.
set -uo pipefail
jobs_list="1 2 3"
if [ "${1:-}" = -j ]; then
	jobs_list=$2
	shift 2
fi
[ $# -ge 3 ] || {
	echo "usage: $0 [-j \"1 2 3\"] OLD_PYSTITCH NEW_PYSTITCH CAPTURE..." >&2
	exit 2
}
old=$1 new=$2
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-identical.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
: >"$work/kallsyms"
differs=0 runs=0

# run LABEL ARGS...: the same command with both builds
run() {
	local label=$1
	shift
	runs=$((runs + 1))
	for side in old new; do
		local bin=$old
		[ $side = new ] && bin=$new
		(cd "$work" && "$bin" "$@" >"$work/$side.out" 2>"$work/$side.err")
		echo $? >"$work/$side.status"
		# the program's own name differs between builds
		sed -i "s|^$bin: |pystitch: |; s|^$(basename "$bin"): |pystitch: |" "$work/$side.err"
	done
	if cmp -s "$work/old.out" "$work/new.out" && cmp -s "$work/old.err" "$work/new.err" &&
		cmp -s "$work/old.status" "$work/new.status"; then
		printf 'same     %s\n' "$label"
	else
		differs=$((differs + 1))
		printf 'DIFFERS  %s (exit %s, %s)\n' "$label" "$(cat "$work/old.status")" "$(cat "$work/new.status")"
		for part in out err; do
			cmp -s "$work/old.$part" "$work/new.$part" ||
				diff "$work/old.$part" "$work/new.$part" | head -n 8 | cut -c 1-160 | sed "s/^/    $part: /"
		done
	fi
}

for capture in "$@"; do
	capture=$(readlink -f "$capture")
	name=$capture
	k=(--kallsyms "$work/kallsyms")
	for j in $jobs_list; do
		for mode in merged all only native; do
			run "$name script --python=$mode -j $j" script -i "$capture" --python="$mode" -j "$j" "${k[@]}"
		done
	done
	run "$name script -F +srcline" script -i "$capture" -F +srcline "${k[@]}"
	run "$name script --no-inline --python=all" script -i "$capture" --no-inline --python=all "${k[@]}"
	run "$name script --libdw-unwind" script -i "$capture" --libdw-unwind "${k[@]}"
	run "$name script --libdw-unwind --python=native" script -i "$capture" --libdw-unwind --python=native "${k[@]}"
	run "$name script -G" script -i "$capture" -G "${k[@]}"
	run "$name script -F comm,tid,time,ip,sym,dso --ns" script -i "$capture" -F comm,tid,time,ip,sym,dso --ns "${k[@]}"
	run "$name script --unwinder=libdwfl" script -i "$capture" --unwinder=libdwfl "${k[@]}"
	for per in comm pid tid none; do
		run "$name collapse --per $per --weight period" collapse -i "$capture" --per "$per" --weight period "${k[@]}"
	done
	run "$name collapse --annotate --weight samples" collapse -i "$capture" --annotate --weight samples "${k[@]}"
	run "$name collapse --python=only --weight samples" collapse -i "$capture" --python=only --weight samples "${k[@]}"
	run "$name flamegraph" flamegraph -i "$capture" -o - "${k[@]}"
	run "$name flamegraph --icicle --per pid" flamegraph -i "$capture" -o - --icicle --per pid "${k[@]}"
	run "$name pprof" pprof -i "$capture" -o - "${k[@]}"
	run "$name pprof --srcline" pprof -i "$capture" -o - --srcline "${k[@]}"
	run "$name info" info -i "$capture"
	run "$name info -I -P" info -I -P -i "$capture"
	run "$name dump" dump -i "$capture"
done
echo "$runs runs, $differs differ"
[ $differs = 0 ]
