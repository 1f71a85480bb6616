#!/bin/sh
# script_zstd_debug: the user profiles a program whose debug sections are
# compressed with zstd (objcopy --compress-debug-sections=zstd, which
# binutils 2.40 and later write and read). perf script's addr2line reads
# them; libelf before 0.189 cannot, so pystitch inflates them itself.
# Checked, on a capture of a zstd copy of tests/programs/inlining:
#  - the copy's .debug_info is compressed with zstd;
#  - perf script's output, inlined frames from the zstd DWARF included,
#    with -j 1 and -j 2 (where a helper thread decompresses ahead);
#  - the same with -F +srcline: file and line of every frame.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

OBJCOPY=${OBJCOPY:-objcopy}
command -v "$OBJCOPY" >/dev/null 2>&1 || e2e_fail "objcopy (binutils) is needed"
prog=$E2E_TMP/inlining-zstd
if ! "$OBJCOPY" --compress-debug-sections=zstd "$E2E_PROGRAMS/inlining" "$prog" \
	2>"$E2E_TMP/objcopy.err"; then
	e2e_show "$E2E_TMP/objcopy.err"
	e2e_skip "this objcopy cannot compress with zstd (binutils 2.40 or later built with zstd can)"
fi
# readelf -t names each section's compression: ZSTD on .debug_info
LC_ALL=C readelf -tW "$prog" | awk '/\.debug_info$/ { found = 1; next }
	found && /ZSTD/ { zstd = 1 } found && /^ *\[ *[0-9]+\] / { exit } END { exit !zstd }' ||
	e2e_fail "objcopy left .debug_info of $prog without zstd compression"

data=$E2E_TMP/zstd.data
e2e_record "$data" -F 2999 --call-graph dwarf,8192 -- "$prog" 0.5

e2e_perf_script perf.txt -i "$data"
grep -q '(inlined)' "$E2E_TMP/perf.txt" ||
	e2e_skip "perf script shows no inlined frame: its addr2line cannot read zstd sections"
for jobs in 1 2; do
	e2e_pystitch_script "j$jobs.txt" -i "$data" --python=native -j $jobs
	e2e_compare_script "-j $jobs" perf.txt "j$jobs.txt" -v min_identical=100 \
		-v min_samples=500 || e2e_fail "-j $jobs: not what perf script prints"
done
grep -q 'inlining-zstd' "$E2E_TMP/j1.txt" || e2e_fail "no frame of $prog"
grep -q '(inlined)' "$E2E_TMP/j1.txt" || e2e_fail "no inlined frame: was the zstd DWARF read?"
cmp -s "$E2E_TMP/j1.txt" "$E2E_TMP/j2.txt" || e2e_fail "-j 2 differs from -j 1"

e2e_perf_script perf-srcline.txt -i "$data" -F +srcline
e2e_pystitch_script srcline.txt -i "$data" --python=native -F +srcline
e2e_compare_script "-F +srcline" perf-srcline.txt srcline.txt -v min_identical=100 \
	-v min_samples=500 || e2e_fail "-F +srcline: not what perf script prints"
grep -q 'inlining\.c:[0-9]' "$E2E_TMP/srcline.txt" ||
	e2e_fail "no line of inlining.c: were the zstd line tables read?"
exit 0
