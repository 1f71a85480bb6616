#!/usr/bin/env bash
# A fuzzing campaign: build the libFuzzer targets (clang, in their own build
# tree) and run each for SECONDS on the cores available, one target after
# the other, with libFuzzer's fork mode (a crash, leak, timeout or
# out-of-memory is saved and the campaign goes on). Prints per target the
# executions, coverage (libFuzzer's cov and ft), corpus and findings, and
# exits 1 when anything was found.
#   usage: fuzz/run.sh SECONDS [TARGET...]     (default: every target)
# Environment:
#   FUZZ_BUILD  build tree (default build/fuzz; configured when it has no
#               Makefile: ./configure CC=clang --enable-fuzzing)
#   FUZZ_WORK   where corpora and findings are kept, per target (default
#               $FUZZ_BUILD/campaign): TARGET/corpus grows from run to run,
#               seeded from fuzz/corpus/TARGET; TARGET/findings holds this
#               run's reproducers
#   FUZZ_JOBS   fuzzing processes per target (default: nproc)
#   FUZZ_NICE   run the fuzzers under nice -n FUZZ_NICE (default: not)
#   FUZZ_FLAGS  more libFuzzer flags (-entropic=0, -max_len=N, ...)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] ||
	targets=(fuzz_reader fuzz_jit fuzz_elf fuzz_archive fuzz_text fuzz_tracing fuzz_session
		fuzz_pylines)
build=${FUZZ_BUILD:-$top/build/fuzz}
mkdir -p "$build"
build=$(cd "$build" && pwd)
work=${FUZZ_WORK:-$build/campaign}
mkdir -p "$work"
work=$(cd "$work" && pwd) # the fuzzers run in their own directories
jobs=${FUZZ_JOBS:-$(nproc)}
nice=()
[ -n "${FUZZ_NICE:-}" ] && nice=(nice -n "$FUZZ_NICE")

# Longest input per target: above what the seeds need, small enough that an
# execution stays fast.
max_len() {
	case $1 in
	fuzz_text) echo 4096 ;;
	fuzz_jit | fuzz_tracing) echo 8192 ;;
	fuzz_archive | fuzz_session) echo 16384 ;;
	*) echo 32768 ;;
	esac
}

echo "== building ${targets[*]} in $build"
(cd "$top" && { [ -x configure ] || autoreconf -fi >/dev/null; })
if [ ! -f "$build/Makefile" ]; then
	(cd "$build" && "$top/configure" -q CC=clang --enable-fuzzing)
fi
make -s -C "$build" -j"$(nproc)" "${targets[@]/#/fuzz/}" >/dev/null

status=0
for t in "${targets[@]}"; do
	dir=$work/$t
	mkdir -p "$dir/corpus" "$dir/tmp"
	rm -rf "$dir/findings"
	mkdir -p "$dir/findings"
	flags=(-fork="$jobs" -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1
		-max_total_time="$seconds" -timeout=30 -max_len="$(max_len "$t")"
		-artifact_prefix="$dir/findings/" -print_final_stats=1)
	[ -f "$top/fuzz/$t.dict" ] && flags+=(-dict="$top/fuzz/$t.dict")
	# shellcheck disable=SC2206 # FUZZ_FLAGS is a list of flags
	flags+=(${FUZZ_FLAGS:-})
	seeds=()
	[ -d "$top/fuzz/corpus/$t" ] && seeds=("$top/fuzz/corpus/$t")
	echo "== $t: ${seconds}s, $jobs jobs"
	# archives unpack under TMPDIR; libtraceevent's own leaks, if any,
	# are listed in fuzz/lsan.supp, matched by a frame that lies deeper
	# than LeakSanitizer's default 30 when libtraceevent recurses
	(cd "$dir" && TMPDIR="$dir/tmp" LSAN_OPTIONS="suppressions=$top/fuzz/lsan.supp" \
		ASAN_OPTIONS="malloc_context_size=255${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
		"${nice[@]}" "$build/fuzz/$t" "${flags[@]}" "$dir/corpus" "${seeds[@]}" \
		>"$dir/log" 2>&1) || true
	# fork mode's status lines: "#N: cov: C ft: F corp: K exec/s E ..."
	last=$(grep -E '^#[0-9]+: cov:' "$dir/log" | tail -n 1 || true)
	execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
	cov=$(sed -E 's/.* cov: ([0-9]+).*/\1/' <<<"$last")
	ft=$(sed -E 's/.* ft: ([0-9]+).*/\1/' <<<"$last")
	corpus=$(find "$dir/corpus" -type f | wc -l)
	bytes=$(du -sk "$dir/corpus" | cut -f1)
	findings=$(find "$dir/findings" -type f \( -name 'crash-*' -o -name 'leak-*' -o \
		-name 'timeout-*' -o -name 'oom-*' \) | wc -l)
	printf '%s: %s executions, cov %s, ft %s, corpus %s files (%s KiB), findings %s\n' \
		"$t" "${execs:-0}" "${cov:-?}" "${ft:-?}" "$corpus" "$bytes" "$findings"
	if [ -z "$last" ]; then
		echo "$t: no status line; the end of $dir/log:" >&2
		tail -n 20 "$dir/log" >&2
		status=1
	fi
	if [ "$findings" -gt 0 ]; then
		find "$dir/findings" -type f -printf '  %p\n'
		grep -E '^(==[0-9]+==ERROR|SUMMARY):' "$dir/log" | sort | uniq -c | head -n 20
		status=1
	fi
done
exit $status
