#!/bin/sh
# script_dwarf: `perf record --call-graph dwarf` of each native test program
# (deep recursion with and without frame pointers, heavy inlining, threads,
# a shared library of our own plus libc/libm, a signal handler), then
# `pystitch script` against `perf script` on the same file. The stacks are
# unwound offline from the stack copies; deep ones are cut off by the
# 8 KiB copy, where pystitch emulates Debian perf's libunwind quirks. At
# least 99.5% of each capture's samples must be identical; all of them in
# a capture of the signal handler run on top of another handler that a
# signal interrupted at its first instruction (signals ... nested).
# One capture per program, each program run by perf itself: a program
# started from a shell inherits the shell's mappings of libc and ld.so in
# perf's model, and then Debian's perf unwinds their frames by guesswork
# or not, depending on where ASLR put the two copies.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0
E2E_MIN_SAMPLES=200
for program in deep deep_nofp inlining threads shlib signals; do
	# the signal handler's capture runs longer, for enough samples (a
	# signal that landed on the first instruction of libm's cos made 2 of
	# 327 samples differ once: see "signals nested" below)
	seconds=0.3
	[ "$program" = signals ] && seconds=0.8
	e2e_record "$E2E_TMP/$program.data" -F 999 --call-graph dwarf -- "$E2E_PROGRAMS/$program" "$seconds"
	e2e_script_diff "$program" 99.5 "$E2E_TMP/$program.data" || failed=1
	if [ "$program" = deep ]; then
		grep -q -F -x "$(printf '\tffffffffffffffff [unknown] ([unknown])')" "$E2E_TMP/$E2E_PERF_OUT" || {
			e2e_say "$e2e_name: deep: perf printed no stack cut by the 8 KiB stack copy (no ffffffffffffffff frame)"
			failed=1
		}
	fi
	[ "${PS_E2E_KEEP:-}" = 1 ] || rm -f "$E2E_TMP/$program.data"
done
# a frame a signal interrupted at a function's first instruction: libunwind
# looks it up at its PC, not at the byte before (another function's, or
# none); the nested signals make hundreds of such frames
E2E_MIN_SAMPLES=300
e2e_record "$E2E_TMP/nested.data" -F 999 --call-graph dwarf -- "$E2E_PROGRAMS/signals" 0.8 nested
e2e_script_diff "signals nested" 100 "$E2E_TMP/nested.data" || failed=1
entries=$(grep -c ' on_sigusr1+0x0 ' "$E2E_TMP/$E2E_PERF_OUT")
e2e_say "$e2e_name: signals nested: $entries frames interrupted at on_sigusr1's first instruction"
[ "$entries" -gt 0 ] || { e2e_say "$e2e_name: signals nested: none"; failed=1; }
exit $failed
