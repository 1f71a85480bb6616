#!/bin/sh
# script_lbr: LBR call graphs (perf record --call-graph lbr), which this
# machine cannot record (its CPU has no LBR), in a synthetic capture from
# the reader's builder (tests/e2e/lbr_capture.c): samples of
# tests/programs/deep whose branch stacks hold the real call sites of its
# recursion (read from the binary with objdump), as a 32-entry LBR in
# call-stack mode holds them, with a kernel part or none, on an event with
# hw_idx and one without, in two threads, one of which exits and comes
# back. `pystitch script` must print what `perf script` prints on it byte
# for byte, without --stitch-lbr, with it (stacks joined to the frames the
# thread's previous sample saw: they must get longer), and with a
# --max-stack that cuts the chain before its user part. In pipe mode (a
# copy by perf inject) and on a frame-pointer capture, --stitch-lbr must
# be switched off with perf's warning. Then -F brstack, brstacksym,
# brstackoff, brstackinsn and brstackinsnlen (with srccode) on a synthetic
# capture of perf record -b (tests/e2e/lbr_branches.c).
. "$(dirname "$0")/lib.sh"
e2e_setup
builder=$abs_top_builddir/tests/e2e/lbr_capture
program=$E2E_PROGRAMS/deep
[ -x "$builder" ] || e2e_fail "no $builder (make check builds it)"
[ -x "$program" ] || e2e_fail "no $program (make check builds it)"
command -v objdump >/dev/null 2>&1 || e2e_skip "no objdump to find deep's call sites"

# FUNCTION=ADDRESS for every function, CALLER>CALLEE=ADDRESS for the first
# call of CALLEE in CALLER, and the executable segment
# shellcheck disable=SC2016 # awk programs
objdump -d --no-show-raw-insn "$program" | "$AWK" '
	/^[0-9a-f]+ <[^>]+>:$/ { fn = $2; gsub(/[<>:]/, "", fn); print fn "=" $1; next }
	$2 == "call" && $4 ~ /^<[^@+>]+>$/ {
		callee = $4; gsub(/[<>]/, "", callee); site = $1; sub(/:$/, "", site)
		if (!((fn ">" callee) in seen)) { seen[fn ">" callee] = 1; print fn ">" callee "=" site }
	}' >"$E2E_TMP/addresses" || e2e_fail "objdump -d $program failed"
# shellcheck disable=SC2016
readelf -lW "$program" | "$AWK" '$1 == "LOAD" && / R E / {
	print "text_offset=" $2; print "text_vaddr=" $3; print "text_size=" $6; exit }' \
	>>"$E2E_TMP/addresses" || e2e_fail "readelf -l $program failed"
# shellcheck disable=SC2046 # one argument per line of the file
"$builder" "$E2E_TMP/lbr.data" "$E2E_TMP/kallsyms" "$program" $(cat "$E2E_TMP/addresses") ||
	e2e_fail "lbr_capture failed"

failed=0
E2E_MIN_SAMPLES=13 e2e_script_diff "LBR call stacks" 100 "$E2E_TMP/lbr.data" \
	--kallsyms "$E2E_TMP/kallsyms" || failed=1
plain=$E2E_TMP/$E2E_PERF_OUT
# what the capture is there for, in perf's own output: frames from the
# LBR (the latest call's target, the call sites as they are)
for want in '^	 +[0-9a-f]+ bottom\+0x0 \(' '^	 +[0-9a-f]+ main\+0x[0-9a-f]+ \(' \
	'schedule\+0x1b \(\[kernel\.kallsyms\]\)'; do
	grep -q -E "$want" "$plain" ||
		e2e_fail "perf script printed no line matching '$want' (the capture no longer tests it)"
done
E2E_MIN_SAMPLES=13 e2e_script_diff "LBR call stacks, stitched" 100 "$E2E_TMP/lbr.data" \
	--kallsyms "$E2E_TMP/kallsyms" --stitch-lbr || failed=1
[ "$(wc -l <"$E2E_TMP/$E2E_PERF_OUT")" -gt "$(wc -l <"$plain")" ] ||
	e2e_fail "perf script --stitch-lbr stitched nothing (the capture no longer tests it)"
E2E_MIN_SAMPLES=13 e2e_script_diff "LBR call stacks, --max-stack 3" 100 "$E2E_TMP/lbr.data" \
	--kallsyms "$E2E_TMP/kallsyms" --max-stack 3 || failed=1
# the branch stacks themselves, beside the stacks made of them
for fields in +brstack +brstacksym +brstackoff; do
	E2E_MIN_SAMPLES=13 e2e_script_diff "LBR call stacks, -F $fields" 100 "$E2E_TMP/lbr.data" \
		--kallsyms "$E2E_TMP/kallsyms" -F "$fields" || failed=1
done

# perf record -b: every branch, no call graph, with a library (no sample
# is in it until the fifth), the kernel and an address no map holds
library=$E2E_PROGRAMS/libpsworker.so
[ -f "$library" ] || e2e_fail "no $library (make check builds it)"
# shellcheck disable=SC2016 # awk programs
readelf -lW "$library" | "$AWK" '$1 == "LOAD" && / R E / {
	print "lib_text_offset=" $2; print "lib_text_vaddr=" $3; print "lib_text_size=" $6; exit }' \
	>"$E2E_TMP/lib-addresses" || e2e_fail "readelf -l $library failed"
# shellcheck disable=SC2016
nm -D "$library" | "$AWK" '$3 == "psw_norm" || $3 == "psw_checksum" { print $3 "=" $1 }' \
	>>"$E2E_TMP/lib-addresses" || e2e_fail "nm -D $library failed"
# shellcheck disable=SC2046 # one argument per line of the files
"$builder" --branches "$E2E_TMP/branches.data" "$E2E_TMP/kallsyms" "$program" \
	$(cat "$E2E_TMP/addresses" "$E2E_TMP/lib-addresses") "lib=$library" ||
	e2e_fail "lbr_capture --branches failed"
for fields in +brstack +brstacksym +brstackoff ip,sym,brstacksym comm,tid,ip,dso,brstack \
	ip,brstackoff,flags; do
	E2E_MIN_SAMPLES=10 e2e_script_diff "perf record -b, -F $fields" 100 "$E2E_TMP/branches.data" \
		--kallsyms "$E2E_TMP/kallsyms" -F "$fields" || failed=1
done
# what the capture is there for, in perf's own output (of the last)
for want in ' 0x390/0x[0-9a-f]+/P/-/-/0/SYSRET ' ' 0x1280/' ' 0x7f1234561280/' '/0x1234/M/-/-/0/IND ' \
	'/-/X/A/0/COND ' '/-/X/-/0/FAULT_INST ' '/\(null\) '; do
	grep -q -E -e "$want" "$E2E_TMP/$E2E_PERF_OUT" ||
		e2e_fail "perf script printed nothing matching '$want' (the capture no longer tests it)"
done
# the code between the branches, instruction by instruction, with the
# source lines perf prints among them (srccode: after each instruction
# whose line differs from the thread's last printed one)
for fields in "+brstackinsn --max-blocks 2" "ip,sym,srcline,brstackinsn,insn" \
	"+brstackinsn,+srccode" "+brstackinsnlen,+srccode,+srcline --max-blocks 3" "+brstackinsnlen"; do
	# shellcheck disable=SC2086 # the options split into words
	E2E_MIN_SAMPLES=10 e2e_script_diff "perf record -b, -F $fields" 100 "$E2E_TMP/branches.data" \
		--kallsyms "$E2E_TMP/kallsyms" -F $fields || failed=1
done
for want in '	mismatch of LBR data and executable$' '	\.\.\. not reaching sample \.\.\.$' \
	'	ilen: 5	# PRED 7 cycles \[[0-9]+\] [0-9.]+ IPC$' '# INTX 5 cycles' '# MISPRED ABORT$' \
	'^	descend_odd\+[0-9]+:$'; do
	grep -q -E "$want" "$E2E_TMP/$E2E_PERF_OUT" ||
		e2e_fail "perf script -F +brstackinsnlen printed nothing matching '$want' (the capture no longer tests it)"
done
# perf's source lines within the listing: after an instruction, and after
# a jump
"$AWK" '/^\t[0-9a-f]{16}\tinsn: / { insn = 1; next } insn && /^\|[0-9]+ / { n++ } { insn = 0 }
	END { exit n < 3 }' "$E2E_TMP/perf-perf_record_-b__-F__brstackinsn__srccode.txt" ||
	e2e_fail "perf script -F +brstackinsn,+srccode printed no source line within a listing (the capture no longer tests it)"

# perf switches --stitch-lbr off, and says so, without LBR call graphs,
# and in pipe mode (it decides before reading any event)
switched_off() {
	for out in "$E2E_PERF_OUT" "$E2E_PYSTITCH_OUT"; do
		grep -q "Can't find LBR callchain. Switch off --stitch-lbr." "$E2E_TMP/$out.err" ||
			e2e_fail "$out.err does not say that --stitch-lbr is switched off: $(cat "$E2E_TMP/$out.err")"
	done
}
"$PERF" inject -i "$E2E_TMP/lbr.data" -o - >"$E2E_TMP/lbr-pipe.data" 2>"$E2E_TMP/inject.err" ||
	e2e_fail "perf inject could not write a pipe-mode copy: $(cat "$E2E_TMP/inject.err")"
E2E_MIN_SAMPLES=13 e2e_script_diff "LBR call stacks in pipe mode, --stitch-lbr" 100 \
	"$E2E_TMP/lbr-pipe.data" --kallsyms "$E2E_TMP/kallsyms" --stitch-lbr || failed=1
switched_off
e2e_record "$E2E_TMP/fp.data" -F 999 -g -- "$E2E_PROGRAMS/loop" 0.2
e2e_script_diff "-g with --stitch-lbr" 100 "$E2E_TMP/fp.data" --stitch-lbr || failed=1
switched_off
exit $failed
