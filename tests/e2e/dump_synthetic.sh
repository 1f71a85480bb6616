#!/bin/sh
# dump_synthetic: what `perf report -D` prints that this machine cannot
# record, in synthetic captures from the reader's builder with the kallsyms
# they belong to (tests/e2e/dump_capture.c, tests/e2e/kernel_capture.c):
# the DSO line of a kernel address past _etext before and after perf has
# loaded the kernel's map, of the cpumodes perf does not look up
# ("[hypervisor]"), of executable anonymous memory mapped by MMAP2 and by
# the older MMAP, of a data mapping and of no mapping; threads seen first in
# a sample; PERF_SAMPLE_READ groups delivered once per counter that moved;
# kernel modules mapped under a path or a name; an event without
# sample_id_all nor PERF_SAMPLE_TID, which perf reads in file order
# ("WARNING: No sample_id_all support", "-1 -1 ", FINISHED_ROUND's default
# handler); the same captures written big-endian. `pystitch dump
# --kallsyms` must print `perf report -D
# --kallsyms`'s text, byte for byte.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
dump_capture=$abs_top_builddir/tests/e2e/dump_capture
kernel_capture=$abs_top_builddir/tests/e2e/kernel_capture
if [ ! -x "$dump_capture" ] || [ ! -x "$kernel_capture" ]; then
	e2e_fail "no $dump_capture or $kernel_capture (make check builds them)"
fi
cd "$E2E_TMP" || e2e_fail "cannot enter $E2E_TMP"
status=0

# check NAME MIN_SAMPLES PATTERN...: compare the dumps of NAME.data; perf's
# must hold every line PATTERN (an extended regex), or the capture no longer
# tests what it is there for
check() {
	ch_name=$1
	ch_min=$2
	shift 2
	e2e_compare_dump "$ch_name.data" "$e2e_name: $ch_name" "$ch_min" --kallsyms "$ch_name.kallsyms" ||
		status=1
	for ch_want in "$@"; do
		grep -q -E "$ch_want" perf-dump.txt ||
			e2e_fail "$ch_name: perf printed no line matching '$ch_want'"
	done
}

"$dump_capture" places.data places.kallsyms places || e2e_fail "dump_capture places failed"
check places 18 '^ \.\.\.\.\.\. dso: <not found>$' '^ \.\.\.\.\.\. dso: \[hypervisor\]$' \
	'^ \.\.\.\.\.\. dso: /tmp/perf-100\.map$' '^ \.\.\.\.\.\. dso: //anon$' \
	'^ \.\.\. thread: :101:101$' '^ \.\.\. thread: :400:400$'
# past _etext: not found before the kernel's map is loaded, found after
sed -n '/0xffffffff81300010 period/{n;n;p}' perf-dump.txt | tr '\n' ' ' | grep -q -E \
	'^ \.\.\.\.\.\. dso: <not found> +\.\.\.\.\.\. dso: \[kernel\.kallsyms\] $' ||
	e2e_fail "places: perf did not find init text only once the kernel's map was loaded"

"$dump_capture" unordered.data unordered.kallsyms unordered || e2e_fail "dump_capture unordered failed"
check unordered 3 '^WARNING: No sample_id_all support' '^-1 -1 0x[0-9a-f]+ \[0x8\]: PERF_RECORD_FINISHED_ROUND: unhandled!$' \
	'^ \.\.\. thread: :-1:-1$'

# the same captures written by a big-endian machine: perf dumps each
# record as it swapped it in memory (the header and the fields its type's
# swap function turns), and reads MMAP2's prot and flags, which it does
# not swap, as written: no map is executable, no //anon map is named after
# its perf map
"$dump_capture" places-be.data places-be.kallsyms places-be || e2e_fail "dump_capture places-be failed"
check places-be 18 '^ \.\.\.\.\.\. dso: //anon$' 'PERF_RECORD_MMAP2 100/100: .*\]: ---p //anon$' \
	'^\.  0000:  0a 00 00 00 02 00 ' '^\.  0000:  09 00 00 00 '
"$dump_capture" unordered-be.data unordered-be.kallsyms unordered-be ||
	e2e_fail "dump_capture unordered-be failed"
check unordered-be 3
"$kernel_capture" kernel-be.data kernel-be.kallsyms be || e2e_fail "kernel_capture be failed"
check kernel-be 15
"$kernel_capture" poke.data poke.kallsyms poke || e2e_fail "kernel_capture poke failed"
# perf report -D prints a TEXT_POKE before loading the map it is in: the
# first load of a module without a .ko fails there, and names nothing
check poke 15 'PERF_RECORD_TEXT_POKE ffffffff81000404 vfs_read\+0x4 old len 2 new len 11$' \
	'PERF_RECORD_TEXT_POKE ffffffffc0100008  old len 3 new len 14$' \
	'PERF_RECORD_TEXT_POKE ffffffffc0100008 baz_poll\+0x8 old len 2 new len 5$'
"$kernel_capture" kernel.data kernel.kallsyms || e2e_fail "kernel_capture failed"
check kernel 15 '^ \.\.\.\.\.\. dso: /lib/modules/6\.1\.0-test/kernel/fs/foo/foo-bar\.ko\.xz$' \
	'^ \.\.\.\.\.\. dso: \[qux-mod\]$' '^ \.\.\. thread: swapper:0$'
exit $status
