#!/bin/sh
# compare_script_selftest: compare_script.awk must pass equal `perf script`
# outputs, count samples right in each output shape, catch each kind of
# difference, and normalise the two libunwind quirks (libdw_quirks=1) and
# nothing else. Runs from generated text, so it needs no perf.
# shellcheck disable=SC2094 # expect copies its stdin to another file
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-$e2e_name.XXXXXX") || e2e_fail "cannot create a temporary directory"
trap e2e_cleanup EXIT
failures=0
tab=$(printf '\t')
bogus="${tab}ffffffffffffffff [unknown] ([unknown])"

# samples N: N DWARF-style samples, each a header, four frames (one of
# them an inline pair) and a blank line.
samples() {
	i=1
	while [ "$i" -le "$1" ]; do
		printf 'deep 4242  100.%06d:    1001001 cpu-clock:ppp: \n' "$i"
		printf '\t            1234 bottom+0x24 (/build/deep)\n'
		printf '\t            1301 square+0x11 (inlined)\n'
		printf '\t            1301 level_work+0x11 (/build/deep)\n'
		printf '\t            13ab descend_even+0x4b (/build/deep)\n'
		printf '\n'
		i=$((i + 1))
	done
}

# expect pass|fail DESCRIPTION PERF_FILE [AWK_ASSIGNMENTS...] < PYSTITCH_OUTPUT;
# with EXPECT_TEXT set, the tool's output must also contain that text.
expect() {
	want=$1
	what=$2
	perf_file=$3
	shift 3
	cat >"$E2E_TMP/pystitch.txt"
	if "$AWK" -v name=selftest "$@" -f "$e2e_dir/compare_script.awk" \
		"$perf_file" "$E2E_TMP/pystitch.txt" >"$E2E_TMP/out.txt" 2>&1; then
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

perf=$E2E_TMP/perf.txt
samples 200 >"$perf"

EXPECT_TEXT="selftest: 200 samples, 100.00% identical"
expect pass "identical output" "$perf" <"$perf"
EXPECT_TEXT="perf.txt:10: ${tab}            1301 level_work+0x11 (/build/deep)"
sed '10s/level_work+0x11/level_work+0x12/' "$perf" | expect fail "one frame differs" "$perf"
EXPECT_TEXT="pystitch.txt:10: ${tab}            1301 level_work+0x12 (/build/deep)"
sed '10s/level_work+0x11/level_work+0x12/' "$perf" | expect fail "one frame differs (pystitch's line shown)" "$perf"
EXPECT_TEXT="200 samples, 99.50% identical"
sed '10s/level_work+0x11/level_work+0x12/' "$perf" |
	expect pass "one sample in 200 differs, 99.5% needed" "$perf" -v min_identical=99.5
EXPECT_TEXT="99.00% identical; FAIL: below 99.5%"
sed '10s/level_work+0x11/level_work+0x12/; 16s/level_work+0x11/level_work+0x12/' "$perf" |
	expect fail "two samples in 200 differ, 99.5% needed" "$perf" -v min_identical=99.5
EXPECT_TEXT="99.99% identical"
samples 20000 >"$E2E_TMP/big.txt"
sed '10s/level_work+0x11/level_work+0x12/' "$E2E_TMP/big.txt" |
	expect fail "one sample in 20000 differs: not rounded up to 100%" "$E2E_TMP/big.txt"
EXPECT_TEXT="sample 2 differs"
sed '7s/4242/4243/' "$perf" | expect fail "a header differs" "$perf"
EXPECT_TEXT="perf 200 samples, pystitch 199 samples"
sed '7,12d' "$perf" | expect fail "a sample is missing" "$perf" -v min_identical=99
EXPECT_TEXT="(no line 6)"
sed '10d' "$perf" | expect fail "a frame is missing" "$perf"
EXPECT_TEXT="perf 200 samples, pystitch 0 samples"
expect fail "empty output" "$perf" </dev/null
EXPECT_TEXT="fewer than the 300 samples"
expect fail "too few samples" "$perf" -v min_samples=300 <"$perf"
EXPECT_TEXT="selftest: 200 samples, 0.00% identical"
sed 's/ $//' "$perf" | expect fail "trailing blank after the event name lost" "$perf"

# other output shapes
printf '            deep 4242 [000]   100.000001:    1001001 cpu-clock:ppp:      55555555 bottom+0x24 (/build/deep)\n' >"$E2E_TMP/one.txt"
for i in 1 2 3 4; do cat "$E2E_TMP/one.txt"; done >"$E2E_TMP/flat.txt"
EXPECT_TEXT="selftest: 4 samples, 100.00% identical"
expect pass "one line per sample (-G)" "$E2E_TMP/flat.txt" <"$E2E_TMP/flat.txt"
EXPECT_TEXT="75.00% identical"
sed '3s/bottom/bottom2/' "$E2E_TMP/flat.txt" | expect fail "one line per sample, one differs" "$E2E_TMP/flat.txt"
# -F ip,sym,symoff,dso,srcline: empty header lines, srcline lines
{
	for i in 1 2 3; do
		printf '\n\t            1234 bottom+0x24 (/build/deep)\n  deep.c:33\n'
		printf '\t            1301 square+0x11\n  inlining.c:31 (inlined)\n\n'
	done
} >"$E2E_TMP/srcline.txt"
EXPECT_TEXT="selftest: 3 samples, 100.00% identical"
expect pass "empty headers and srcline lines" "$E2E_TMP/srcline.txt" <"$E2E_TMP/srcline.txt"
EXPECT_TEXT="66.67% identical"
sed '9s/deep.c:33/deep.c:34/' "$E2E_TMP/srcline.txt" |
	expect fail "a srcline differs" "$E2E_TMP/srcline.txt"

# the libdw normalisation: perf's sample 2 ends in the bogus frame
"$AWK" -v bogus="$bogus" '{ print } NR == 11 { print bogus }' "$perf" >"$E2E_TMP/cut.txt"
EXPECT_TEXT="99.50% identical"
expect fail "bogus frame without normalisation" "$E2E_TMP/cut.txt" -v min_identical=100 <"$perf"
EXPECT_TEXT="100.00% identical (libdw normalisation: 1 bogus last frames dropped, 0 extra"
expect pass "bogus frame dropped" "$E2E_TMP/cut.txt" -v libdw_quirks=1 <"$perf"
EXPECT_TEXT="1 bogus last frames dropped, 1 extra last frames allowed"
"$AWK" '{ print } NR == 11 { print "\t            1500 descend_odd+0x4b (/build/deep)" }' "$perf" |
	expect pass "bogus frame dropped, one extra real frame" "$E2E_TMP/cut.txt" -v libdw_quirks=1
EXPECT_TEXT="1 bogus last frames dropped, 1 extra last frames allowed"
"$AWK" '{ print } NR == 11 { print "\t            1500 inner+0x4b (inlined)"
	print "\t            1500 descend_odd+0x4b (/build/deep)" }' "$perf" |
	expect pass "bogus frame dropped, one extra frame with its inline chain" "$E2E_TMP/cut.txt" -v libdw_quirks=1
EXPECT_TEXT="sample 2 differs"
"$AWK" '{ print } NR == 11 { print "\t            1500 descend_odd+0x4b (/build/deep)"
	print "\t            1600 descend_even+0x4b (/build/deep)" }' "$perf" |
	expect fail "two extra frames" "$E2E_TMP/cut.txt" -v libdw_quirks=1
EXPECT_TEXT="sample 2 differs"
"$AWK" '{ print } NR == 11 { print "\t            1500 inner+0x4b (inlined)"
	print "\t            1501 descend_odd+0x4c (/build/deep)" }' "$perf" |
	expect fail "an extra inline chain whose lines are not of one address" "$E2E_TMP/cut.txt" -v libdw_quirks=1
EXPECT_TEXT="1 bogus last frames dropped, 1 extra last frames allowed"
"$AWK" '{ print } NR == 11 { print "\t           27304 __libc_start_main_impl+0x84 (inlined)" }' "$perf" |
	expect pass "an extra frame printed as inlined only (outer name is not the ELF symbol)" \
	"$E2E_TMP/cut.txt" -v libdw_quirks=1
EXPECT_TEXT="sample 2 differs"
"$AWK" '{ print } NR == 11 { print "\t            1500 descend_odd+0x4b (/build/deep)"
	print "\t            1500 descend_odd+0x4b (/build/deep)" }' "$perf" |
	expect fail "two extra frames at one address (self-recursion)" "$E2E_TMP/cut.txt" -v libdw_quirks=1
EXPECT_TEXT="sample 2 differs"
sed '11s/13ab/13ac/' "$perf" |
	expect fail "bogus frame dropped, but another frame differs" "$E2E_TMP/cut.txt" -v libdw_quirks=1
EXPECT_TEXT="sample 1 differs"
"$AWK" '{ print } NR == 5 { print "\t            1500 descend_odd+0x4b (/build/deep)" }' "$perf" |
	expect fail "an extra frame where perf has no bogus frame" "$E2E_TMP/cut.txt" -v libdw_quirks=1
EXPECT_TEXT="sample 2 differs"
expect fail "pystitch prints the bogus frame too, perf without it is not normalised" "$perf" \
	-v libdw_quirks=1 <"$E2E_TMP/cut.txt"
EXPECT_TEXT="sample 2 differs"
"$AWK" -v bogus="$bogus" '{ print } NR == 10 { print bogus }' "$perf" >"$E2E_TMP/mid.txt"
"$AWK" '{ print } NR == 10 { print "\t            1500 descend_odd+0x4b (/build/deep)" }' "$perf" |
	expect fail "a bogus frame that is not the last is kept" "$E2E_TMP/mid.txt" -v libdw_quirks=1

# by_comm=1: one line per program, each held to the threshold
{
	samples 100
	samples 100 | sed 's/^deep 4242 /shlib 4343 /'
} >"$E2E_TMP/two.txt"
EXPECT_TEXT="selftest: shlib: 100 samples, 100.00% identical"
expect pass "per-program lines" "$E2E_TMP/two.txt" -v by_comm=1 <"$E2E_TMP/two.txt"
EXPECT_TEXT="selftest: deep: 100 samples, 99.00% identical; FAIL: below 99.5%"
sed '10s/level_work+0x11/level_work+0x12/' "$E2E_TMP/two.txt" |
	expect fail "one program below the threshold, all of them above" "$E2E_TMP/two.txt" \
	-v by_comm=1 -v min_identical=99.5

if [ $failures -ne 0 ]; then
	e2e_say "$e2e_name: $failures checks of compare_script.awk went wrong"
	exit 1
fi
e2e_say "$e2e_name: compare_script.awk passes equal outputs, normalises only the libunwind quirks, and catches every planted difference"
