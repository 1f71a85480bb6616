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
# perf's own name for it, cpu-clock:HG; a third is the first written by a
# big-endian machine, which must print the same. Then a module's symbols from its
# .ko file under --symfs (built here), --show-kernel-path, -F insn, a
# capture whose first samples are in modules, compressed modules (.ko.xz,
# .ko.gz, also built here, and damaged) also from an archive, kernel
# symbols from a vmlinux (-k, also built here), a capture of BPF output
# events, and memory-sampling ones (addr, weight, ins_lat, data_src).
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
	'gz_fn\+0x14 \(\[gz_mod\]\)' \
	'x86_64_start_kernel\+0xd1 \(\[kernel\.kallsyms\]\)'; do
	grep -q -E "$want" "$E2E_TMP/perf-synthetic_kernel_capture.txt" ||
		e2e_fail "perf script printed no line matching '$want' (the capture no longer tests it)"
done
# the same capture written by a big-endian machine: perf swaps every
# record; so must pystitch, records and header included
"$builder" "$E2E_TMP/be.data" "$E2E_TMP/kallsyms" be || e2e_fail "kernel_capture be failed"
for opts in "" "-F +misc" "--show-task-events --show-mmap-events" "-G --header"; do
	# shellcheck disable=SC2086 # the options split into words
	e2e_script_diff "big-endian capture, $opts" 100 "$E2E_TMP/be.data" -f \
		--kallsyms "$E2E_TMP/kallsyms" $opts || failed=1
done
cmp -s "$E2E_TMP/perf-synthetic_kernel_capture.txt" "$E2E_TMP/perf-big-endian_capture__.txt" ||
	e2e_fail "perf printed the big-endian capture differently from the little-endian one (the capture no longer tests it)"
# TEXT_POKE records (perf record --kcore): the kernel symbol after the
# address, and the maps perf loads for them, which decide the symbols of
# the modules they load before the kernel's map (kernel_capture.c)
"$builder" "$E2E_TMP/poke.data" "$E2E_TMP/kallsyms" poke || e2e_fail "kernel_capture poke failed"
for opts in "" "--show-text-poke-events" "--show-text-poke-events -F +misc"; do
	# shellcheck disable=SC2086 # the options split into words
	e2e_script_diff "text pokes, $opts" 100 "$E2E_TMP/poke.data" -f \
		--kallsyms "$E2E_TMP/kallsyms" $opts || failed=1
done
for want in ' PERF_RECORD_TEXT_POKE ffffffff81000404 vfs_read\+0x4 old len 2 new len 11$' \
	' PERF_RECORD_TEXT_POKE ffffffffc0000104  old len 0 new len 5$' \
	' PERF_RECORD_TEXT_POKE ffffffffc0000104 foo_write\+0x4 old len 1 new len 5$' \
	' PERF_RECORD_TEXT_POKE ffffffffc0500014  old len 2 new len 0$' \
	'ffffffffc0000024 \[unknown\] \(\[foo_bar\]\)' 'ffffffffc0000130 foo_write\+0x30 '; do
	grep -q -E "$want" "$E2E_TMP/$E2E_PERF_OUT" ||
		e2e_fail "perf script printed no line matching '$want' (the capture no longer tests it)"
done
"$builder" "$E2E_TMP/guest.data" "$E2E_TMP/kallsyms" guest || e2e_fail "kernel_capture guest failed"
e2e_script_diff "synthetic capture counting guests" 100 "$E2E_TMP/guest.data" -f \
	--kallsyms "$E2E_TMP/kallsyms" || failed=1
grep -q ' cpu-clock:HG: ' "$E2E_TMP/$E2E_PERF_OUT" ||
	e2e_fail "perf script did not name the event cpu-clock:HG: $(head -n 1 "$E2E_TMP/$E2E_PERF_OUT")"

# A module's symbols from its .ko under --symfs: an object file built here
# (perf reads its .symtab; those of .init.text go elsewhere), in place of
# baz.ko (at /lib/modules/6.1.0-test/kernel/drivers/baz.ko in the
# capture); --show-kernel-path then prints modules' paths, and -F insn
# reads the .ko. Also a capture whose first samples are in modules, before
# perf has loaded the kernel's map: perf gives a module it looks up then
# no kallsyms symbols (foo-bar.ko.xz, which it cannot open here) unless it
# has its .ko (baz.ko).
symfs=$E2E_TMP/symfs
mkdir -p "$symfs/lib/modules/6.1.0-test/kernel/drivers"
cat >"$E2E_TMP/baz.c" <<'EOF'
int baz_helper(int x) { return x * 3 + 1; }
int baz_poll(int x) { int s = 0; for (int i = 0; i < x; i++) s += baz_helper(i); return s; }
static int baz_local(int x) { return x - 1; }
int baz_read(int x) { return baz_local(x) + baz_poll(x); }
__attribute__((section(".init.text"))) int baz_init(void) { return 0; }
EOF
"${CC:-cc}" -O1 -c "$E2E_TMP/baz.c" -o "$symfs/lib/modules/6.1.0-test/kernel/drivers/baz.ko" ||
	e2e_fail "cannot build baz.ko"
"$builder" "$E2E_TMP/modules.data" "$E2E_TMP/kallsyms" modules || e2e_fail "kernel_capture modules failed"
for kind in kernel modules; do
	for opts in "--symfs $symfs" "--symfs $symfs --show-kernel-path -F +insn,+insnlen" \
		"--show-kernel-path"; do
		# shellcheck disable=SC2086 # the options split into words
		e2e_script_diff "$kind capture, $opts" 100 "$E2E_TMP/$kind.data" -f \
			--kallsyms "$E2E_TMP/kallsyms" $opts || failed=1
	done
done
# Compressed modules (foo-bar.ko.xz, gz-mod.ko.gz), which perf decompresses
# before reading their symbols and code, built here from assembly so that
# each symbol has a known size; then an xz file cut short and a gzip one
# whose data is damaged, which perf reads nothing from (pystitch says why).
symfsz=$E2E_TMP/symfs-compressed
mkdir -p "$symfsz/lib/modules/6.1.0-test/kernel/fs/foo" "$symfsz/lib/modules/6.1.0-test/kernel/net"
cp -R "$symfs/lib" "$symfsz/"
module_from_asm() { # FILE SYMBOL...: functions of 0x100 bytes each
	out=$1
	shift
	{
		echo '	.text'
		for sym in "$@"; do
			printf '\t.globl %s\n\t.type %s, @function\n%s:\n\t.fill 0x100, 1, 0x90\n\t.size %s, 0x100\n' \
				"$sym" "$sym" "$sym" "$sym"
		done
	} >"$E2E_TMP/module.S"
	"${CC:-cc}" -c "$E2E_TMP/module.S" -o "$out" || e2e_fail "cannot assemble $out"
}
module_from_asm "$symfsz/lib/modules/6.1.0-test/kernel/fs/foo/foo-bar.ko" foo_read foo_write
module_from_asm "$symfsz/lib/modules/6.1.0-test/kernel/net/gz-mod.ko" gz_start gz_fn
xz -f "$symfsz/lib/modules/6.1.0-test/kernel/fs/foo/foo-bar.ko" || e2e_fail "xz failed"
gzip -f "$symfsz/lib/modules/6.1.0-test/kernel/net/gz-mod.ko" || e2e_fail "gzip failed"
for kind in kernel modules; do
	for opts in "--symfs $symfsz" "--symfs $symfsz --show-kernel-path -F +insn,+insnlen"; do
		# shellcheck disable=SC2086 # the options split into words
		e2e_script_diff "$kind capture, compressed modules, $opts" 100 "$E2E_TMP/$kind.data" -f \
			--kallsyms "$E2E_TMP/kallsyms" $opts || failed=1
	done
done
# the text pokes load foo before the kernel's map: perf then gives the
# foo-bar.ko it read kallsyms's symbols too, but the first of each run
# (foo + 0x400 is past the .ko's functions, in foo_write by kallsyms)
e2e_script_diff "text pokes, compressed modules" 100 "$E2E_TMP/poke.data" -f \
	--kallsyms "$E2E_TMP/kallsyms" --symfs "$symfsz" --show-text-poke-events || failed=1
grep -q -E 'ffffffffc0000400 foo_write\+0x300 \(\[foo_bar\]\)' "$E2E_TMP/$E2E_PERF_OUT" ||
	e2e_fail "perf script did not name foo + 0x400 from kallsyms (the capture no longer tests it)"
"$PERF" script -i "$E2E_TMP/kernel.data" -f --kallsyms "$E2E_TMP/kallsyms" --symfs "$symfsz" \
	--show-kernel-path >"$E2E_TMP/compressed-perf.txt" 2>/dev/null ||
	e2e_fail "perf script failed on the kernel capture with compressed modules"
for want in 'foo_read\+0x24 \(/lib/modules/6.1.0-test/kernel/fs/foo/foo-bar.ko.xz\)' \
	'gz_start\+0x14 \(/lib/modules/6.1.0-test/kernel/net/gz-mod.ko.gz\)'; do
	grep -q -E "$want" "$E2E_TMP/compressed-perf.txt" ||
		e2e_fail "perf script printed no line matching '$want' (the test no longer tests it)"
done
# an archive of the capture packs the compressed files and reads them so
"$PYSTITCH" archive -i "$E2E_TMP/kernel.data" -o "$E2E_TMP/compressed.pst" --kallsyms "$E2E_TMP/kallsyms" \
	--symfs "$symfsz" 2>"$E2E_TMP/archive.err" || e2e_fail "archive failed: $(cat "$E2E_TMP/archive.err")"
"$PYSTITCH" script -i "$E2E_TMP/compressed.pst" -f --show-kernel-path >"$E2E_TMP/compressed-pst.txt" \
	2>"$E2E_TMP/archive.err" || e2e_fail "script of the archive failed: $(cat "$E2E_TMP/archive.err")"
cmp -s "$E2E_TMP/compressed-perf.txt" "$E2E_TMP/compressed-pst.txt" ||
	e2e_fail "the archive's script differs from perf's: $(diff "$E2E_TMP/compressed-perf.txt" "$E2E_TMP/compressed-pst.txt" | head -5)"
# damaged: an xz file cut in the middle, gzip data with bytes overwritten
xzfile=$symfsz/lib/modules/6.1.0-test/kernel/fs/foo/foo-bar.ko.xz
gzfile=$symfsz/lib/modules/6.1.0-test/kernel/net/gz-mod.ko.gz
head -c "$(($(wc -c <"$xzfile") / 2))" "$xzfile" >"$E2E_TMP/cut.xz" && mv "$E2E_TMP/cut.xz" "$xzfile"
printf '\377\377\377\377\377\377\377\377' | dd of="$gzfile" bs=1 seek=40 conv=notrunc 2>/dev/null
e2e_script_diff "kernel capture, damaged compressed modules" 100 "$E2E_TMP/kernel.data" -f \
	--kallsyms "$E2E_TMP/kallsyms" --symfs "$symfsz" || failed=1
"$PYSTITCH" script -i "$E2E_TMP/kernel.data" -f --kallsyms "$E2E_TMP/kallsyms" --symfs "$symfsz" \
	2>"$E2E_TMP/damaged.err" >/dev/null || e2e_fail "pystitch script failed on damaged modules"
for want in 'foo-bar\.ko\.xz: xz data bad at offset [0-9]+: truncated' \
	'gz-mod\.ko\.gz: gzip data bad at offset [0-9]+: '; do
	grep -q -E "$want" "$E2E_TMP/damaged.err" ||
		e2e_fail "no warning matching '$want': $(cat "$E2E_TMP/damaged.err")"
done

# Kernel symbols from a vmlinux (-k), built here at the capture's kernel
# addresses: perf's kernel map becomes its .text, and each other section
# with symbols gets a map of its own ([kernel.kallsyms].init.text, whose
# symbols without a size perf never finds); --show-kernel-path prints the
# vmlinux's path as -k gave it (a relative one is under --symfs), -F insn
# reads it. Also where a relative -k under --symfs finds nothing.
cat >"$E2E_TMP/vmlinux.S" <<'EOF'
	.text
	.globl _stext, _text, do_idle, cpu_startup_entry, rest_init, vfs_read, _etext
_stext:
_text:
	.fill 0x100, 1, 0x90
	.type do_idle, @function
do_idle:
	.fill 0x100, 1, 0x90
	.size do_idle, 0x100
	.type cpu_startup_entry, @function
cpu_startup_entry:
	.fill 0x100, 1, 0x90
	.type rest_init, @function
rest_init:
	.fill 0x100, 1, 0x90
	.type vfs_read, @function
vfs_read:
	.fill 0x200, 1, 0x90
_etext:
	.section .init.text, "ax"
	.globl start_kernel, x86_64_start_kernel
	.type start_kernel, @function
start_kernel:
	.fill 0x200, 1, 0x90
	.size start_kernel, 0x200
	.type x86_64_start_kernel, @function
x86_64_start_kernel:
	.fill 0x200, 1, 0x90
EOF
"${CC:-cc}" -c "$E2E_TMP/vmlinux.S" -o "$E2E_TMP/vmlinux.o" || e2e_fail "cannot assemble a vmlinux"
ld -o "$symfs/vmlinux" -static -nostdlib --build-id=none -Ttext=0xffffffff81000000 \
	--section-start=.init.text=0xffffffff81300000 -e 0 "$E2E_TMP/vmlinux.o" ||
	e2e_fail "cannot link a vmlinux"
for kind in kernel modules; do
	for opts in "-k $symfs/vmlinux" "-k $symfs/vmlinux --show-kernel-path -F +insn,+insnlen"; do
		# shellcheck disable=SC2086 # the options split into words
		e2e_script_diff "$kind capture, $opts" 100 "$E2E_TMP/$kind.data" -f $opts || failed=1
	done
done
# a relative -k must be here (both check), and is read under --symfs
(
	cd "$symfs" || exit 1
	failed=0
	for opts in "--symfs $symfs --show-kernel-path -G" "--symfs $E2E_TMP"; do
		# shellcheck disable=SC2086 # the options split into words
		e2e_script_diff "kernel capture, -k vmlinux $opts" 100 "$E2E_TMP/kernel.data" -f \
			-k vmlinux $opts || failed=1
	done
	exit $failed
) || failed=1
for run in "$PERF script" "$PYSTITCH script"; do
	# shellcheck disable=SC2086 # the command splits into words
	$run -i "$E2E_TMP/kernel.data" -f -k no-such-vmlinux >/dev/null 2>&1 &&
		e2e_fail "$run took a -k file that is not there"
done
cat "$E2E_TMP"/perf-kernel_capture*vmlinux*.txt | grep -q -F 'start_kernel+0x13d ([kernel.kallsyms].init.text)' ||
	e2e_fail "perf script named no symbol of the vmlinux's .init.text (the capture no longer tests it)"

# BPF output events (bpf_perf_event_output()'s data): strings, binary,
# Latin-1, among cpu-clock samples
"$builder" "$E2E_TMP/bpf.data" "$E2E_TMP/kallsyms" bpf || e2e_fail "kernel_capture bpf failed"
for fields in "" "-F sw:comm,tid,event,bpf-output" "-F -bpf-output" "-G -F ip,sym,bpf-output,period"; do
	# shellcheck disable=SC2086 # the options split into words
	E2E_MIN_SAMPLES=16 e2e_script_diff "BPF output, $fields" 100 "$E2E_TMP/bpf.data" \
		--kallsyms "$E2E_TMP/kallsyms" $fields || failed=1
done
for want in '^ +BPF string: "hello world"$' '^ +BPF output: 0000: 01 02 ff 80 7f 00 10 20  \.\.' \
	'^ +0028: 64 6f 67 00 +dog\. +$' '^ +BPF string: ""$'; do
	grep -q -E "$want" "$E2E_TMP/perf-BPF_output__-G_-F_ip_sym_bpf-output_period.txt" ||
		e2e_fail "perf script printed no line matching '$want' (the capture no longer tests it)"
done

# samples of a guest's kernel and user space, which perf script passes
# over, and PERF_SAMPLE_READ groups delivered once per counter that moved
# (dump_synthetic.sh's capture, little- and big-endian)
places=$abs_top_builddir/tests/e2e/dump_capture
for kind in places places-be; do
	"$places" "$E2E_TMP/$kind.data" "$E2E_TMP/$kind.kallsyms" "$kind" || e2e_fail "dump_capture $kind failed"
	E2E_MIN_SAMPLES=10 e2e_script_diff "$kind capture" 100 "$E2E_TMP/$kind.data" -f \
		--kallsyms "$E2E_TMP/$kind.kallsyms" || failed=1
done
grep -q -E '^ +reader +300 .* 2000 task-clock: ' "$E2E_TMP/$E2E_PERF_OUT" ||
	e2e_fail "perf script printed no task-clock delivery (the capture no longer tests it)"

# memory-sampling events (what perf mem records, which this machine's PMU
# cannot): addresses, data sources, weights plain (the whole u64, as perf
# prints it) and as the struct whose second half-word is ins_lat
for kind in mem mem-struct; do
	"$builder" "$E2E_TMP/$kind.data" "$E2E_TMP/kallsyms" "$kind" || e2e_fail "kernel_capture $kind failed"
	for fields in "-F ip,sym,addr,weight,data_src" "-F +addr,+weight,+data_src"; do
		# shellcheck disable=SC2086 # the options split into words
		e2e_script_diff "$kind capture, $fields" 100 "$E2E_TMP/$kind.data" \
			--kallsyms "$E2E_TMP/kallsyms" $fields || failed=1
	done
done
e2e_script_diff "mem-struct capture, ins_lat" 100 "$E2E_TMP/mem-struct.data" \
	--kallsyms "$E2E_TMP/kallsyms" -F +addr,+weight,+ins_lat,+data_src || failed=1
grep -q -E ' 68100142 \|OP LOAD\|LVL L1 hit\|SNP None\|TLB L1 or L2 hit\|LCK No\|BLK  N/A +1 +3$' \
	"$E2E_TMP/$E2E_PERF_OUT" ||
	e2e_fail "perf script printed no weight and ins_lat (the capture no longer tests it)"
for run in "$PERF script" "$PYSTITCH script"; do
	# shellcheck disable=SC2086 # the command splits into words
	$run -i "$E2E_TMP/mem.data" --kallsyms "$E2E_TMP/kallsyms" -F +ins_lat >/dev/null 2>&1 &&
		e2e_fail "$run printed ins_lat of a capture without WEIGHT_STRUCT"
done

# what the captures are there for, in perf's own output
"$PERF" script -i "$E2E_TMP/modules.data" -f --kallsyms "$E2E_TMP/kallsyms" --symfs "$symfs" \
	--show-kernel-path -F +insn,+insnlen >"$E2E_TMP/modules-perf.txt" 2>/dev/null ||
	e2e_fail "perf script failed on the modules capture"
grep -q -E 'baz_poll\+0x[0-9a-f]+ \(/lib/modules/6.1.0-test/kernel/drivers/baz.ko\)' \
	"$E2E_TMP/modules-perf.txt" ||
	e2e_fail "perf script did not name baz.ko's symbols (the capture no longer tests it)"
grep -q -E '^ ilen: [1-9]' "$E2E_TMP/modules-perf.txt" ||
	e2e_fail "perf script read no instruction from baz.ko (the capture no longer tests it)"
"$PERF" script -i "$E2E_TMP/modules.data" -f --kallsyms "$E2E_TMP/kallsyms" 2>/dev/null |
	sed -n 2p | grep -q -F '[unknown] ([baz])' ||
	e2e_fail "perf script named baz before loading the kernel (the capture no longer tests it)"
exit $failed
