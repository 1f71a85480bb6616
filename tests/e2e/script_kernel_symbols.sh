#!/bin/sh
# script_kernel_symbols: where the kernel's symbols come from, on a capture
# with kernel call chains recorded here (dd copying zeros: its time is in
# the kernel).
#  - Read here: perf script reads /proc/kallsyms. pystitch reads the
#    kernel's own lines from perf record's copy of it in the build-id
#    cache when that copy is of this boot (`-vv` says so), and must print
#    what perf prints. A copy of another boot (its first line changed) is
#    not used, and the output is the same. (Not where modules are loaded:
#    src/symbols/kernel_source.c then looks at their per-CPU sections,
#    which test_kernel_source.c checks.)
#  - Read as if recorded on another machine (tests/e2e/kernel_elsewhere.py
#    changes the host name and the kernel's build-id): perf takes the
#    kernel's symbols from the build-id cache's copy for that build-id,
#    not from this machine's kernel; here that copy names every function
#    elsewhere_*. pystitch must print the same, with one job and two.
. "$(dirname "$0")/lib.sh"
e2e_setup
command -v python3 >/dev/null 2>&1 || e2e_fail "python3 is needed (it patches the capture)"
command -v dd >/dev/null 2>&1 || e2e_fail "dd is needed (the workload)"

data=$E2E_TMP/kernel.data
e2e_record "$data" -F 999 -g -- dd if=/dev/zero of=/dev/null bs=1M count=100000
cache="$E2E_TMP/buildid-cache/[kernel.kallsyms]"
# shellcheck disable=SC2012 # one directory per build-id, named in hex
here_id=$(ls "$cache" 2>/dev/null | head -n 1)
if [ -z "$here_id" ] || [ ! -s "$cache/$here_id/kallsyms" ]; then
	e2e_fail "perf record kept no copy of /proc/kallsyms in $cache"
fi
copy=$cache/$here_id/kallsyms

failed=0
e2e_script_diff "read here" 100 "$data" || failed=1
grep -q -E '\(\[kernel\.kallsyms\]\)$' "$E2E_TMP/$E2E_PERF_OUT" ||
	e2e_fail "perf script printed no kernel frame (the capture no longer tests it)"

# the copy is used when this machine's kernel is the capture's for perf
# (its build-id readable: some containers hide /sys) and no module is
# loaded whose per-CPU variables could fall among the kernel's lines
uses_copy() {
	e2e_run "$PYSTITCH" script -vv --buildid-dir "$E2E_TMP/buildid-cache" -i "$data" -j 1 2>&1 \
		>/dev/null | grep -q "from perf record's copy of /proc/kallsyms (of this boot)"
}
if [ -r /sys/kernel/notes ] && [ ! -s /proc/modules ]; then
	uses_copy || {
		e2e_say "-vv did not say the kernel's symbols came from perf record's copy"
		failed=1
	}
	# a copy of another boot: its first line is not /proc/kallsyms's
	cp "$copy" "$E2E_TMP/copy.saved" || e2e_fail "cannot save $copy"
	sed '1s/^\(.\{17\}\)./\1?/' "$E2E_TMP/copy.saved" >"$copy" || e2e_fail "cannot change $copy"
	if uses_copy; then
		e2e_say "a copy whose first line differs from /proc/kallsyms's was used"
		failed=1
	fi
	e2e_script_diff "another boot's copy" 100 "$data" || failed=1
	cp "$E2E_TMP/copy.saved" "$copy" || e2e_fail "cannot restore $copy"
else
	e2e_say "NOTE: /sys/kernel/notes unreadable or modules loaded: perf record's copy is not expected to be used here, not checked"
fi

# another machine's capture: the build-id cache's copy for its kernel
other_id=$(python3 "$e2e_dir/kernel_elsewhere.py" "$data" "$E2E_TMP/elsewhere.data") ||
	e2e_fail "kernel_elsewhere.py failed"
mkdir -p "$cache/$other_id" || e2e_fail "cannot create $cache/$other_id"
sed 's/ \([tTwW]\) \([a-z]\)/ \1 elsewhere_\2/' "$copy" >"$cache/$other_id/kallsyms" ||
	e2e_fail "cannot write the other kernel's kallsyms"
e2e_script_diff "another machine's kernel" 100 "$E2E_TMP/elsewhere.data" || failed=1
grep -q -E ' elsewhere_[a-z_0-9.]*\+0x[0-9a-f]+ \(\[kernel\.kallsyms\]\)$' "$E2E_TMP/$E2E_PERF_OUT" ||
	e2e_fail "perf script did not name the kernel frames from the other kernel's kallsyms (the capture no longer tests it)"
e2e_pystitch_script elsewhere-j2.txt -i "$E2E_TMP/elsewhere.data" -j 2
e2e_compare_script "another machine's kernel, -j 2" "$E2E_PERF_OUT" elsewhere-j2.txt \
	-v min_identical=100 || failed=1
[ "$failed" = 0 ] || e2e_fail "kernel symbols differ from perf script's"
exit 0
