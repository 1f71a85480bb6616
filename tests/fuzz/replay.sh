#!/bin/sh
# Replays every committed seed and reproducer of every fuzz target
# (fuzz/corpus/TARGET/*) through the target, built without libFuzzer
# (tests/fuzz/replay_TARGET): under ASan+UBSan a memory error, a leak or
# undefined behaviour any of them once found fails this test.
set -eu
top=${abs_top_srcdir:-$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)}
build=${abs_top_builddir:-.}
status=0
for t in fuzz_reader fuzz_jit fuzz_elf fuzz_archive fuzz_text fuzz_tracing fuzz_session \
	fuzz_pylines; do
	replay=$build/tests/fuzz/replay_$t
	[ -d "$top/fuzz/corpus/$t" ] || continue
	n=$(find "$top/fuzz/corpus/$t" -type f | wc -l)
	if find "$top/fuzz/corpus/$t" -type f -exec "$replay" {} + >"$build/tests/fuzz/replay-$t.log" 2>&1; then
		echo "$t: $n inputs"
	else
		echo "$t: FAILED ($build/tests/fuzz/replay-$t.log):"
		tail -n 30 "$build/tests/fuzz/replay-$t.log"
		status=1
	fi
done
exit $status
