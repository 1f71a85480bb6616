#!/bin/sh
# jobs_compressed_debug: with --jobs 2 and more, a helper thread loads the
# kernel's symbols and decompresses the debug sections of the files the
# capture's samples hit (its build-id table) while the session starts on
# the samples; the session takes what the helper made. The capture: a copy
# of tests/programs/inlining whose debug sections objcopy compressed (as
# Debian's and Fedora's debug files are), DWARF stacks with kernel frames.
# Checked:
#  - perf script's output, inline frames from the compressed DWARF and
#    kernel frames included, with -j 1, 2 and 3;
#  - PYSTITCH_AHEAD_WAIT=1 (the session waits for the helper's every
#    task, so it does them all): the same output again, and -vv says the
#    session used the helper's kernel symbols and decompressed file;
#  - --kallsyms FILE: the helper reads that file as the session would.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup

OBJCOPY=${OBJCOPY:-objcopy}
command -v "$OBJCOPY" >/dev/null 2>&1 || e2e_fail "objcopy (binutils) is needed"
prog=$E2E_TMP/inlining-z
"$OBJCOPY" --compress-debug-sections=zlib "$E2E_PROGRAMS/inlining" "$prog" ||
	e2e_fail "objcopy --compress-debug-sections failed"
# the flag C on .debug_info: the copy's sections are compressed
LC_ALL=C readelf -SW "$prog" | grep -q '\.debug_info .* C ' ||
	e2e_fail "objcopy left .debug_info of $prog uncompressed"

data=$E2E_TMP/compressed.data
e2e_record "$data" -F 2999 --call-graph dwarf,8192 -- "$prog" 0.5
"$PERF" buildid-list -i "$data" 2>/dev/null | grep -q '\[kernel.kallsyms\]' ||
	e2e_fail "the capture's build-id table has no kernel: no kernel samples?"

e2e_perf_script perf.txt -i "$data"
for jobs in 1 2 3; do
	e2e_pystitch_script "j$jobs.txt" -i "$data" --python=native -j $jobs
	e2e_compare_script "-j $jobs" perf.txt "j$jobs.txt" -v min_identical=100 \
		-v min_samples=500 || e2e_fail "-j $jobs: not what perf script prints"
done
grep -q 'inlining-z' "$E2E_TMP/j1.txt" || e2e_fail "no frame of $prog"
grep -q '(inlined)' "$E2E_TMP/j1.txt" || e2e_fail "no inlined frame: was the compressed DWARF read?"
grep -q 'kallsyms' "$E2E_TMP/j1.txt" || e2e_fail "no kernel frame"
for jobs in 2 3; do
	cmp -s "$E2E_TMP/j1.txt" "$E2E_TMP/j$jobs.txt" || e2e_fail "-j $jobs differs from -j 1"
done

# every task done by the helper: its results are what the session prints
summary() {
	grep 'helper thread:' "$E2E_TMP/$1.err" ||
		e2e_fail "-vv said nothing of the helper thread ($1)"
}
PYSTITCH_AHEAD_WAIT=1
export PYSTITCH_AHEAD_WAIT
e2e_pystitch_script wait.txt -i "$data" --python=native -j 2 -vv
cmp -s "$E2E_TMP/j1.txt" "$E2E_TMP/wait.txt" || e2e_fail "the helper's work changed the output"
line=$(summary wait.txt)
e2e_say "$e2e_name: $line"
case $line in
*"kernel symbols loaded ahead, used;"*) ;;
*) e2e_fail "the session did not use the kernel symbols the helper loaded" ;;
esac
used=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9][0-9]*\) used$/\1/p')
[ "${used:-0}" -ge 1 ] || e2e_fail "the session used none of the files the helper decompressed"

# --kallsyms: the helper reads the same file the session would
cp /proc/kallsyms "$E2E_TMP/kallsyms" || e2e_fail "cannot copy /proc/kallsyms"
e2e_perf_script perf-kallsyms.txt -i "$data" --kallsyms "$E2E_TMP/kallsyms"
e2e_pystitch_script kallsyms.txt -i "$data" --python=native -j 2 -vv \
	--kallsyms "$E2E_TMP/kallsyms"
e2e_compare_script "--kallsyms" perf-kallsyms.txt kallsyms.txt -v min_identical=100 \
	-v min_samples=500 || e2e_fail "--kallsyms: not what perf script prints"
case $(summary kallsyms.txt) in
*"kernel symbols loaded ahead, used;"*) ;;
*) e2e_fail "--kallsyms: the session did not use the kernel symbols the helper loaded" ;;
esac
exit 0
