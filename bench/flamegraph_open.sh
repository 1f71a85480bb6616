#!/usr/bin/env bash
# flamegraph_open.sh: how long a flame graph of a large capture takes to
# open in a browser. Records (unless -i is given) CPython 3.12 -X perf
# byte-compiling its own standard library three times with compileall -j 2
# (perf record -F 2999 --call-graph dwarf,8192: about 120,000 samples and
# 1 GB on two CPUs, in many processes with many distinct stacks), writes
# the SVG with pystitch flamegraph, then opens it --runs times in Debian's
# chromium, headless, and prints:
#
#   script ms   performance.now() when the SVG's script has run, at the end
#               of the document (data-ready-ms): loading, parsing and
#               building every element
#   drawn ms    the same after the first frame was drawn (data-drawn-ms)
#   shot s      chromium's wall time from start to a screenshot of the SVG,
#               less the same for an empty SVG of the same size (the
#               browser's own start-up and PNG encoding taken out)
#
#   usage: bench/flamegraph_open.sh [-i perf.data] [-n RUNS] [--pystitch PATH]
#                                   [--perf PATH] [--python PATH] [-k DIR]
set -uo pipefail

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
die() {
	printf 'flamegraph_open.sh: %s\n' "$*" >&2
	exit 1
}
say() { printf '%s\n' "$*" >&2; }

runs=5 input='' keep='' pystitch=${PYSTITCH:-} perf=${PERF:-perf} python=''
while [ $# -gt 0 ]; do
	case $1 in
	-i | --input) input=${2:?}; shift 2 ;;
	-n | --runs) runs=${2:?}; shift 2 ;;
	--pystitch) pystitch=${2:?}; shift 2 ;;
	--perf) perf=${2:?}; shift 2 ;;
	--python) python=${2:?}; shift 2 ;;
	-k | --keep) keep=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
case $runs in '' | *[!0-9]* | 0) die "--runs needs a positive number" ;; esac
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
if [ -z "$pystitch" ]; then
	if [ -x ./pystitch ]; then pystitch=./pystitch; else pystitch=$(command -v pystitch || true); fi
fi
[ -x "$pystitch" ] || die "no pystitch binary (run from the build directory or use --pystitch PATH)"
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser)} ||
	die "chromium is not installed (Debian: apt-get install chromium)"

if [ -n "$keep" ]; then
	mkdir -p "$keep" || die "cannot create $keep"
	work=$keep
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/flamegraph_open.XXXXXX") || die "cannot create a temporary directory"
	trap 'rm -rf "$work"' EXIT
fi
trap 'exit 130' HUP INT TERM

if [ -z "$input" ]; then
	[ -n "$python" ] || python=$(find_python 12) ||
		die "no CPython 3.12 under \$(pyenv root)/versions (use --python PATH or -i FILE)"
	stdlib=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])') ||
		die "$python cannot say where its standard library is"
	input=$work/perf.data
	say "recording $input: $python -X perf -m compileall over $stdlib, three times"
	# shellcheck disable=SC2016 # a shell program for sh -c
	"$perf" record -q -F 2999 --call-graph dwarf,8192 -o "$input" -- /bin/sh -c '
		for i in 1 2 3; do
			rm -rf "$1/pyc"
			# compiled files go to $1/pyc, not into the interpreter;
			# status 1 says some did not compile (the standard
			# shellcheck disable=SC2016 # a shell program for sh -c
			# library'"'"'s tests hold broken files on purpose)
			PYTHONPYCACHEPREFIX=$1/pyc "$2" -X perf -m compileall -f -q -j 2 "$3" \
				>/dev/null 2>"$1/compile.err"
			status=$?
			[ $status -le 1 ] || exit $status
		done' sh "$work" "$python" "$stdlib" 2>"$work/record.err" ||
		die "perf record failed: $(tail -n 3 "$work/record.err" "$work/compile.err" 2>/dev/null)"
	[ -n "$(find "$work/pyc" -name '*.pyc' -print -quit 2>/dev/null)" ] ||
		die "compileall wrote no .pyc file: $(tail -n 3 "$work/compile.err")"
fi
[ -r "$input" ] || die "cannot read $input"

svg=$work/flame.svg
start=$(date +%s.%N)
"$pystitch" flamegraph -q -i "$input" -o "$svg" || die "pystitch flamegraph failed"
written=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
samples=$(sed -n 's/^<rect class="root" data-n="all"[^>]* data-w="\([0-9]*\)".*/\1/p' "$svg")
frames=$(grep -c '^<rect class' "$svg")
width=$(sed -n 's/^<svg [^>]* width="\([0-9]*\)".*/\1/p' "$svg")
height=$(sed -n 's/^<svg [^>]* height="\([0-9]*\)".*/\1/p' "$svg")
# shellcheck disable=SC2015 # two tests, then die
[ -n "$width" ] && [ -n "$height" ] || die "no width and height on $svg"
printf '<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s"><rect width="1" height="1"/></svg>\n' \
	"$width" "$height" >"$work/empty.svg"

browser() {
	"$chromium" --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$work/chromium" --no-first-run "$@" 2>>"$work/chromium.err"
}
# wall FILE: seconds from starting chromium to its screenshot of FILE
wall() {
	local s
	s=$(date +%s.%N)
	browser --window-size="$width,$height" --screenshot="$work/shot.png" "file://$1" >/dev/null ||
		die "chromium --screenshot failed: $(tail -n 3 "$work/chromium.err")"
	awk -v s="$s" -v e="$(date +%s.%N)" 'BEGIN { printf "%.3f", e - s }'
}

printf '%s: %s samples, %s frames drawn, %s bytes of SVG written in %s s\n' \
	"$input" "$samples" "$frames" "$(stat -c %s "$svg")" "$written"
printf '%-4s %10s %10s %8s\n' run "script ms" "drawn ms" "shot s"
browser --dump-dom "file://$work/empty.svg" >/dev/null # a warm profile for every run
for run in $(seq "$runs"); do
	dom=$(browser --virtual-time-budget=10000 --dump-dom "file://$svg") ||
		die "chromium --dump-dom failed: $(tail -n 3 "$work/chromium.err")"
	ready=$(printf '%s' "$dom" | sed -n 's/.* data-ready-ms="\([0-9]*\)".*/\1/p' | head -n 1)
	drawn=$(printf '%s' "$dom" | sed -n 's/.* data-drawn-ms="\([0-9]*\)".*/\1/p' | head -n 1)
	empty=$(wall "$work/empty.svg")
	full=$(wall "$svg")
	printf '%-4s %10s %10s %8s\n' "$run" "${ready:-none}" "${drawn:-none}" \
		"$(awk -v f="$full" -v e="$empty" 'BEGIN { printf "%.2f", f - e }')"
done
