#!/bin/sh
# script_kernel: kernel frames this machine cannot record (it has no kernel
# modules, and with its two shared cores it is never idle), in a synthetic
# capture from the reader's builder (tests/e2e/kernel_capture.c) with the
# kallsyms it belongs to: modules mapped under a path (`[foo_bar]` from
# foo-bar.ko.xz, `[baz]` from baz.ko), in brackets (`[qux-mod]`), and under
# a name perf 6.1 does not take for a module (zst-mod.ko.zst); idle-task
# samples (pid 0 with no COMM: `swapper`) whose stacks end in init text past
# _etext, where perf record's kernel map ends; a thread without COMM; a
# fixed-period event. `pystitch script --kallsyms` must print what
# `perf script --kallsyms` prints on it, byte for byte. The capture has no
# EVENT_DESC: a second one, of an event that counts in guests too, gets
# perf's own name for it, cpu-clock:HG.
. "$(dirname "$0")/lib.sh"
e2e_setup
builder=$abs_top_builddir/tests/e2e/kernel_capture
[ -x "$builder" ] || e2e_fail "no $builder (make check builds it)"
"$builder" "$E2E_TMP/kernel.data" "$E2E_TMP/kallsyms" || e2e_fail "kernel_capture failed"

failed=0
e2e_script_diff "synthetic kernel capture" 100 "$E2E_TMP/kernel.data" -f --kallsyms "$E2E_TMP/kallsyms" ||
	failed=1
e2e_script_diff "synthetic kernel capture, -G" 100 "$E2E_TMP/kernel.data" -f -G \
	--kallsyms "$E2E_TMP/kallsyms" || failed=1
# what the capture is there for, in perf's own output
for want in '^swapper +0 ' '^:101 ' ' 250000 cpu-clock:' 'foo_read\+0x24 \(\[foo_bar\]\)' \
	'baz_poll\+0x8 \(\[baz\]\)' 'qux_init\+0x10 \(\[qux-mod\]\)' '\[unknown\] \(zst_mod\.ko\.zst\)' \
	'x86_64_start_kernel\+0xd1 \(\[kernel\.kallsyms\]\)'; do
	grep -q -E "$want" "$E2E_TMP/perf-synthetic_kernel_capture.txt" ||
		e2e_fail "perf script printed no line matching '$want' (the capture no longer tests it)"
done
"$builder" "$E2E_TMP/guest.data" "$E2E_TMP/kallsyms" guest || e2e_fail "kernel_capture guest failed"
e2e_script_diff "synthetic capture counting guests" 100 "$E2E_TMP/guest.data" -f \
	--kallsyms "$E2E_TMP/kallsyms" || failed=1
grep -q ' cpu-clock:HG: ' "$E2E_TMP/$E2E_PERF_OUT" ||
	e2e_fail "perf script did not name the event cpu-clock:HG: $(head -n 1 "$E2E_TMP/$E2E_PERF_OUT")"
exit $failed
