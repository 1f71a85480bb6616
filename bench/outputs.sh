#!/usr/bin/env bash
# outputs.sh: what each of pystitch's outputs costs on one capture. Runs,
# once each, perf script (for reference), pystitch script, collapse,
# flamegraph, pprof and archive on the capture, then script and
# flamegraph again from the archive, and prints for each the wall time,
# CPU time, peak RSS and the size of what it wrote (the archive read back
# is the one made without --with-debuginfo); then whether both archives
# (with and without --with-debuginfo) give every output byte for byte.
#
#   usage: bench/outputs.sh -i perf.data [--pystitch PATH] [--perf PATH]
#                           [--perf-map-dir DIR] [-k DIR]
#
# Record a CPython 3.12 -X perf capture to feed it with
#   bench/compare.sh -w perf -n 1 -k DIR      (keeps DIR/perf.data)
set -euo pipefail

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
input='' keep='' map_dir=''
pystitch=${PYSTITCH:-}
perf=${PERF:-perf}
while [ $# -gt 0 ]; do
	case $1 in
	-i | --input) input=$2; shift 2 ;;
	--pystitch) pystitch=$2; shift 2 ;;
	--perf) perf=$2; shift 2 ;;
	--perf-map-dir) map_dir=$2; shift 2 ;;
	-k | --keep) keep=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "outputs.sh: unknown argument '$1' (see --help)" >&2; exit 1 ;;
	esac
done
[ -n "$input" ] || { echo "outputs.sh: -i FILE is required (see --help)" >&2; exit 1; }
[ -r "$input" ] || { echo "outputs.sh: cannot read $input" >&2; exit 1; }
if [ -z "$pystitch" ]; then
	if [ -x ./pystitch ]; then pystitch=./pystitch; else pystitch=$(command -v pystitch || true); fi
fi
[ -x "$pystitch" ] || { echo "outputs.sh: no pystitch binary (use --pystitch PATH)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "outputs.sh: needs GNU time (/usr/bin/time; Debian package time)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-outputs.XXXXXX")
trap 'rm -rf "$work"' EXIT
maps=()
[ -n "$map_dir" ] && maps=(--perf-map-dir "$map_dir")

# row NAME OUTPUT COMMAND...: run COMMAND once (its stdout into OUTPUT
# unless OUTPUT is written by the command itself), print one table row
row() {
	local name=$1 out=$2 size
	shift 2
	if ! /usr/bin/time -f '%e %U %S %M' -o "$work/usage" "$@" >"$work/stdout" 2>"$work/stderr"; then
		echo "outputs.sh: $name failed:" >&2
		sed 's/^/    /' "$work/stderr" | tail -n 5 >&2
		exit 1
	fi
	[ -s "$out" ] || out=$work/stdout
	size=$(stat -c %s "$out")
	read -r wall user sys rss <"$work/usage"
	printf '%-34s %8.2f %8.2f %9.0f %12s\n' "$name" "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" \
		"$((rss / 1024))" "$(numfmt --to=iec --suffix=B "$size")"
}

samples=$("$pystitch" script -q -i "$input" "${maps[@]}" --python=native -F time | grep -c . || true)
printf 'capture: %s (%s, %s samples)\n' "$input" "$(numfmt --to=iec --suffix=B "$(stat -c %s "$input")")" "$samples"
printf '%-34s %8s %8s %9s %12s\n' "run" "wall s" "CPU s" "RSS MB" "output"
row "perf script" "$work/none" "$perf" script -i "$input"
row "pystitch script (merged)" "$work/none" "$pystitch" script -q -i "$input" "${maps[@]}"
row "pystitch script --python=native" "$work/none" "$pystitch" script -q -i "$input" "${maps[@]}" --python=native
row "pystitch collapse" "$work/none" "$pystitch" collapse -q -i "$input" "${maps[@]}"
row "pystitch flamegraph" "$work/out.svg" "$pystitch" flamegraph -q -i "$input" "${maps[@]}" -o "$work/out.svg"
row "pystitch pprof" "$work/out.pb.gz" "$pystitch" pprof -q -i "$input" "${maps[@]}" -o "$work/out.pb.gz"
row "pystitch archive" "$work/plain.pst" "$pystitch" archive -q -i "$input" "${maps[@]}" -o "$work/plain.pst"
row "pystitch archive --with-debuginfo" "$work/capture.pst" "$pystitch" archive -q -i "$input" "${maps[@]}" \
	--with-debuginfo -o "$work/capture.pst"
row "pystitch script -i archive" "$work/none" "$pystitch" script -q -i "$work/plain.pst"
row "pystitch flamegraph -i archive" "$work/out2.svg" "$pystitch" flamegraph -q -i "$work/plain.pst" -o "$work/out2.svg"
# what the archives give, against the capture itself: every output
for command in "script" "script --python=native" "script -F +srcline" "collapse" "flamegraph" "pprof"; do
	name=$(echo "$command" | tr ' =+' '___')
	out=()
	case $command in flamegraph | pprof) out=(-o -) ;; esac
	# shellcheck disable=SC2086 # the command and its options split on purpose
	"$pystitch" $command -q -i "$input" "${maps[@]}" "${out[@]}" >"$work/$name.out"
	for archive in plain capture; do
		# shellcheck disable=SC2086
		"$pystitch" $command -q -i "$work/$archive.pst" "${out[@]}" >"$work/$name.$archive"
		if cmp -s "$work/$name.out" "$work/$name.$archive"; then
			verdict="identical"
		else
			verdict="DIFFERS"
		fi
		printf '%-28s from %-11s %s\n' "$command" "$archive.pst:" "$verdict"
	done
done
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	cp "$work/out.svg" "$work/out.pb.gz" "$work/capture.pst" "$keep/"
	echo "kept out.svg, out.pb.gz and capture.pst in $keep"
fi
