#!/bin/sh
# script_hybrid: the names of hardware and hardware-cache events that no
# EVENT_DESC names, on synthetic captures (tests/e2e/hybrid_capture.c) of
# what this machine cannot record (a VM has no hardware counters, and it is
# no hybrid Intel CPU): perf's evsel__hw_cache_name() spellings
# (L1-dcache-load-misses, LLC-loads, invalid-cache, ...) and a hybrid CPU's
# legacy events carrying the PMU type in config's high 32 bits, which x86
# perf names cpu/cycles/ (followed by the modifiers: cpu/cycles/:upppH).
# perf 6.1 reads the captures of 128-byte attrs: `pystitch script` must
# print what `perf script` prints on them, byte for byte. The same hybrid
# events as perf 6.3 and later write them (136-byte attrs) perf 6.1
# refuses in a file ("incompatible file format"); pystitch must print what newer perf prints, written out below
# from perf's rules, and the names of EVENT_DESC when the capture has them
# (cpu_core/cycles:Pu/). In pipe mode (perf record -o -) perf 6.1 takes
# 136-byte attrs: there it prints the hybrid events' names itself.
. "$(dirname "$0")/lib.sh"
e2e_setup
builder=$abs_top_builddir/tests/e2e/hybrid_capture
[ -x "$builder" ] || e2e_fail "no $builder (make check builds it)"
for kind in cache cache-more hybrid128 hybrid named cache-pipe hybrid-pipe; do
	"$builder" "$E2E_TMP/$kind.data" "$E2E_TMP/kallsyms" $kind || e2e_fail "hybrid_capture $kind failed"
done

failed=0
for kind in cache cache-more hybrid128 cache-pipe hybrid-pipe; do
	e2e_script_diff "$kind capture" 100 "$E2E_TMP/$kind.data" -f --kallsyms "$E2E_TMP/kallsyms" ||
		failed=1
	cp "$E2E_TMP/$E2E_PERF_OUT" "$E2E_TMP/perf-$kind.txt"
done
# what the captures are there for, in perf's own output
for want in 'cache: L1-dcache-load-misses:HG:' 'cache: L1-dcache-stores:uH:' \
	'cache: L1-icache-prefetch-misses:' 'cache: LLC-loads:uh:' 'cache: dTLB-load-misses:pp:' \
	'cache: iTLB-load-misses:uH:' 'cache: branch-loads:HG:' 'cache: node-prefetch-misses:G:' \
	'cache-more: invalid-cache:HG:' 'cache-more: unknown-ext-hardware-cache-type:HG:' \
	'cache-more: unknown-ext-hardware-cache-op:HG:' \
	'cache-more: unknown-ext-hardware-cache-result:uH:' 'cache-more: dTLB-store-misses:HG:' \
	'cache-more: branch-misses:upH:' 'cache-more: unknown-hardware:kh:' \
	'hybrid128: cpu/cycles/:upppH:' 'hybrid128: L1-dcache-load-misses:uH:' \
	'hybrid128: LLC-loads:uH:' 'hybrid128: cpu/unknown-hardware/:uH:' \
	'hybrid128: cpu/instructions/:kp:' 'cache-pipe: L1-dcache-load-misses:HG:' \
	'hybrid-pipe: cpu/cycles/:upppH:'; do
	kind=${want%%: *}
	name=${want#*: }
	grep -q -F " $name " "$E2E_TMP/perf-$kind.txt" ||
		e2e_fail "perf script printed no event $name on the $kind capture (it no longer tests it)"
done

# perf 6.1 refuses 136-byte attrs; a newer perf reads them, and is then
# the oracle itself.
for kind in hybrid named; do
	if "$PERF" script -i "$E2E_TMP/$kind.data" >"$E2E_TMP/perf-$kind.txt" 2>"$E2E_TMP/perf-$kind.err"; then
		e2e_say "$kind capture: $("$PERF" version) reads 136-byte attrs: comparing with it"
		e2e_script_diff "$kind capture" 100 "$E2E_TMP/$kind.data" -f --kallsyms "$E2E_TMP/kallsyms" ||
			failed=1
	else
		grep -q 'incompatible file format' "$E2E_TMP/perf-$kind.err" ||
			e2e_fail "perf script refused the $kind capture, not for its attr size: $(head -n 1 "$E2E_TMP/perf-$kind.err")"
	fi
done

# The text newer perf prints: evsel__name() of each attr (x86's
# arch_evsel__hw_name() for the hardware events, with "cpu" for every PMU
# since a capture does not tell perf script the PMU's name; the cache
# events without their PMU), then perf 6.1's modifiers, which newer perf
# prints alike for these attrs (each has k, u or p).
cat >"$E2E_TMP/want-hybrid.txt" <<'EOF'
            work   200 [000]     3.001000:       4000        cpu/cycles/:upppH:            401000 [unknown] ([unknown])
            work   200 [012]     3.002000:       4100        cpu/cycles/:upppH:            401010 [unknown] ([unknown])
            work   200 [000]     3.003000:       4200 L1-dcache-load-misses:uH:            401020 [unknown] ([unknown])
            work   200 [012]     3.004000:       4300 L1-dcache-load-misses:uH:            401030 [unknown] ([unknown])
            work   200 [000]     3.005000:       4400             LLC-loads:uH:            401040 [unknown] ([unknown])
            work   200 [012]     3.006000:       4500             LLC-loads:uH:            401050 [unknown] ([unknown])
            work   200 [000]     3.007000:       4600 cpu/unknown-hardware/:uH:            401060 [unknown] ([unknown])
            work   200 [012]     3.008000:       4700     cpu/instructions/:kp:  ffffffff81000204 vfs_read+0x4 ([kernel.kallsyms])
            work   200 [001]     3.009000:       4001        cpu/cycles/:upppH:            401000 [unknown] ([unknown])
            work   200 [012]     3.010000:       4101        cpu/cycles/:upppH:            401010 [unknown] ([unknown])
            work   200 [001]     3.011000:       4201 L1-dcache-load-misses:uH:            401020 [unknown] ([unknown])
            work   200 [012]     3.012000:       4301 L1-dcache-load-misses:uH:            401030 [unknown] ([unknown])
            work   200 [001]     3.013000:       4401             LLC-loads:uH:            401040 [unknown] ([unknown])
            work   200 [012]     3.014000:       4501             LLC-loads:uH:            401050 [unknown] ([unknown])
            work   200 [001]     3.015000:       4601 cpu/unknown-hardware/:uH:            401060 [unknown] ([unknown])
            work   200 [012]     3.016000:       4701     cpu/instructions/:kp:  ffffffff81000204 vfs_read+0x4 ([kernel.kallsyms])
EOF
# With EVENT_DESC, its names, the ones perf record gave the events.
cat >"$E2E_TMP/want-named.txt" <<'EOF'
            work   200 [000]     3.001000:       4000               cpu_core/cycles:Pu/:            401000 [unknown] ([unknown])
            work   200 [012]     3.002000:       4100               cpu_atom/cycles:Pu/:            401010 [unknown] ([unknown])
            work   200 [000]     3.003000:       4200 cpu_core/L1-dcache-load-misses:u/:            401020 [unknown] ([unknown])
            work   200 [012]     3.004000:       4300 cpu_atom/L1-dcache-load-misses:u/:            401030 [unknown] ([unknown])
            work   200 [000]     3.005000:       4400             cpu_core/LLC-loads:u/:            401040 [unknown] ([unknown])
            work   200 [012]     3.006000:       4500             cpu_atom/LLC-loads:u/:            401050 [unknown] ([unknown])
            work   200 [000]     3.007000:       4600             cpu_core/event=0x3c/u:            401060 [unknown] ([unknown])
            work   200 [012]     3.008000:       4700         cpu_atom/instructions:kp/:  ffffffff81000204 vfs_read+0x4 ([kernel.kallsyms])
            work   200 [001]     3.009000:       4001               cpu_core/cycles:Pu/:            401000 [unknown] ([unknown])
            work   200 [012]     3.010000:       4101               cpu_atom/cycles:Pu/:            401010 [unknown] ([unknown])
            work   200 [001]     3.011000:       4201 cpu_core/L1-dcache-load-misses:u/:            401020 [unknown] ([unknown])
            work   200 [012]     3.012000:       4301 cpu_atom/L1-dcache-load-misses:u/:            401030 [unknown] ([unknown])
            work   200 [001]     3.013000:       4401             cpu_core/LLC-loads:u/:            401040 [unknown] ([unknown])
            work   200 [012]     3.014000:       4501             cpu_atom/LLC-loads:u/:            401050 [unknown] ([unknown])
            work   200 [001]     3.015000:       4601             cpu_core/event=0x3c/u:            401060 [unknown] ([unknown])
            work   200 [012]     3.016000:       4701         cpu_atom/instructions:kp/:  ffffffff81000204 vfs_read+0x4 ([kernel.kallsyms])
EOF
for kind in hybrid named; do
	e2e_pystitch_script "pystitch-$kind.txt" -i "$E2E_TMP/$kind.data" -f --kallsyms "$E2E_TMP/kallsyms"
	if cmp -s "$E2E_TMP/want-$kind.txt" "$E2E_TMP/pystitch-$kind.txt"; then
		e2e_say "$kind capture: what newer perf prints ($(wc -l <"$E2E_TMP/want-$kind.txt") lines)"
	else
		diff "$E2E_TMP/want-$kind.txt" "$E2E_TMP/pystitch-$kind.txt" | head -n 10 >&2
		e2e_say "$kind capture: pystitch does not print what newer perf prints"
		failed=1
	fi
done
# The 128-byte hybrid capture is the same but for config3, and the pipe
# one the same events: perf 6.1's text for them is newer perf's.
for kind in hybrid128 hybrid-pipe; do
	cmp -s "$E2E_TMP/perf-$kind.txt" "$E2E_TMP/want-hybrid.txt" || {
		e2e_say "perf 6.1's text for the $kind capture is not the expected text"
		failed=1
	}
done
exit $failed
