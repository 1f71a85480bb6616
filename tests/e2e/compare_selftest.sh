#!/bin/sh
# compare_selftest: the comparison tools must pass equal outputs and catch
# each kind of mismatch. Runs from committed text (a trimmed `perf report -D`
# of a `-g` capture and the matching pystitch output), so it needs no perf.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
perf_dump=$e2e_dir/selftest-perf-dump.txt
pystitch_dump=$e2e_dir/selftest-pystitch-dump.txt
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-$e2e_name.XXXXXX") || e2e_fail "cannot create a temporary directory"
trap e2e_cleanup EXIT
failures=0

# expect pass|fail DESCRIPTION [AWK_ASSIGNMENTS...] < PYSTITCH_OUTPUT; with
# EXPECT_TEXT set, the tool's output must also contain that text.
expect() {
	want=$1
	what=$2
	shift 2
	cat >"$E2E_TMP/pystitch.txt"
	if "$AWK" -v name=selftest "$@" -f "$e2e_dir/compare_dump.awk" \
		"$perf_dump" "$E2E_TMP/pystitch.txt" >"$E2E_TMP/out.txt" 2>&1; then
		got=pass
	else
		got=fail
	fi
	if [ $got = "$want" ] && { [ -z "${EXPECT_TEXT:-}" ] || grep -q -F -- "$EXPECT_TEXT" "$E2E_TMP/out.txt"; }; then
		e2e_say "ok: $what ($got)"
	else
		e2e_say "NOT OK: $what: expected $want${EXPECT_TEXT:+ mentioning \"$EXPECT_TEXT\"}, got $got:"
		sed 's/^/    /' "$E2E_TMP/out.txt"
		failures=$((failures + 1))
	fi
	EXPECT_TEXT=
}

expect pass "identical output" -v details_fatal=SAMPLE <"$pystitch_dump"
EXPECT_TEXT="all summary lines equal"
expect pass "perf's own output compared with itself" <"$perf_dump"
EXPECT_TEXT="ip(0x7f7b79665334|0x7f7b79665335)"
sed 's/: 0x7f7b79665334 period/: 0x7f7b79665335 period/' "$pystitch_dump" | expect fail "a sample's ip differs"
EXPECT_TEXT="pid/tid(6140/6140|6140/6141)"
sed '/0x4f0 \[0x48\]/s#6140/6140#6140/6141#' "$pystitch_dump" | expect fail "a sample's tid differs"
EXPECT_TEXT="size 0x48 vs 0x50"
sed 's/^0x4f0 \[0x48\]/0x4f0 [0x50]/' "$pystitch_dump" | expect fail "a sample's size differs"
EXPECT_TEXT="missing in pystitch"
sed '/^0x2b0 /d' "$pystitch_dump" | expect fail "an MMAP2 record is missing"
EXPECT_TEXT="not in perf's output"
sed 's/^0x3c20 \[0x30\]: PERF_RECORD_EXIT/0x3c28 [0x30]: PERF_RECORD_EXIT/' "$pystitch_dump" | expect fail "an EXIT record has the wrong offset"
EXPECT_TEXT="PERF_RECORD_COMM differs"
sed 's/COMM exec: loop/COMM exec: lop/' "$pystitch_dump" | expect fail "a COMM line differs"
EXPECT_TEXT="(not fatal) PERF_RECORD_THREAD_MAP differs"
sed 's/THREAD_MAP nr: 1/THREAD_MAP nr: 2/' "$pystitch_dump" | expect pass "a THREAD_MAP line differs (reported only)"
EXPECT_TEXT="Aggregated stats: MMAP2 events: perf 5, pystitch 4"
sed 's/MMAP2 events:          5/MMAP2 events:          4/' "$pystitch_dump" | expect fail "a stats count differs"
EXPECT_TEXT="pystitch printed no \"Aggregated stats:\" block"
sed '/^Aggregated stats:/,$d' "$pystitch_dump" | expect fail "no stats block"
EXPECT_TEXT="detail line 3 of PERF_RECORD_SAMPLE at 0x4f0 differs"
sed 's/^\.\.\.\.\.  1: 00007f7b79665334/.....  1: 00007f7b79665335/' "$pystitch_dump" |
	expect fail "a callchain entry differs" -v details_fatal=SAMPLE
EXPECT_TEXT="(not fatal) detail line 3"
sed 's/^\.\.\.\.\.  1: 00007f7b79665334/.....  1: 00007f7b79665335/' "$pystitch_dump" |
	expect pass "a callchain entry differs, details not fatal"
EXPECT_TEXT="out of order"
# move the sample at 0x4f0 (with its detail lines) after the one at 0x538
# shellcheck disable=SC2016 # an awk program
"$AWK" '/^0x4f0 /{moving = 1} moving && /^0x538 /{moving = 0} moving {held = held $0 "\n"; next}
	{ print } /^\.\.\.\.\.  1: 00005590aaca928c/ { printf "%s", held }' "$pystitch_dump" |
	expect fail "two samples swapped"
EXPECT_TEXT="missing: ID_INDEX 1"
expect fail "empty output" </dev/null
EXPECT_TEXT="fewer than the 4 this test needs"
expect fail "too few samples" -v min_samples=4 <"$pystitch_dump"

if [ $failures -ne 0 ]; then
	e2e_say "$e2e_name: $failures checks of the comparison tools went wrong"
	exit 1
fi
e2e_say "$e2e_name: the comparison tools pass equal outputs and catch every planted mismatch"
