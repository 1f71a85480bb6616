#!/bin/sh
# script_options: `perf script` options that change what is printed or
# which samples are printed; for each, `pystitch script` with the same
# options must print exactly what `perf script` prints on the same file.
#  - a -g capture (with --sample-cpu) of a shell running the threads and
#    inlining programs side by side: -F lists, -G, --ns, --max-stack, and
#    the filters --pid, --tid, --comm, --cpu, --time (values picked from
#    the capture), and plain `pystitch -i FILE` without the sub-command;
#  - a --call-graph dwarf capture of the inlining program: -F with srcline,
#    --no-inline, -F without sym (inline frames print bare addresses),
#    srccode, insn and insnlen;
#  - a capture of every page fault (-d: their addresses) of the shlib
#    program: -F addr names the faulting address (a function or data
#    object, [stack], [heap]) as perf does.
# shellcheck disable=SC2016 # awk programs in single quotes
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0

# ---- the -g capture ----
e2e_record "$E2E_TMP/fp.data" -F 999 -g --sample-cpu -- /bin/sh -c \
	"'$E2E_PROGRAMS/threads' 0.3 2 & '$E2E_PROGRAMS/inlining' 0.3; wait"
fp=$E2E_TMP/fp.data

# values for the filters, from perf's view of the capture
e2e_perf_script ids.txt -i "$fp" -F comm,pid,tid,cpu,time
inlining_pid=$("$AWK" '$1 == "inlining" { split($2, id, "/"); print id[1]; exit }' "$E2E_TMP/ids.txt")
worker_tid=$("$AWK" '$1 == "threads" { split($2, id, "/"); if (id[1] != id[2]) { print id[2]; exit } }' \
	"$E2E_TMP/ids.txt")
# the CPU with the most samples
busy_cpu=$("$AWK" '{ cpu = $3; gsub(/[^0-9]/, "", cpu); n[cpu + 0]++ }
	END { for (c in n) if (n[c] > most) { most = n[c]; busy = c } print busy }' "$E2E_TMP/ids.txt")
time_range=$("$AWK" '{ t[NR] = $4; sub(/:$/, "", t[NR]) }
	END { if (NR >= 8) print t[int(NR / 4)] "," t[int(NR * 3 / 4)] }' "$E2E_TMP/ids.txt")
time_from=${time_range%,*}
if [ -z "$inlining_pid" ] || [ -z "$worker_tid" ] || [ -z "$busy_cpu" ] || [ -z "$time_range" ]; then
	e2e_show "$E2E_TMP/ids.txt"
	e2e_fail "cannot pick filter values (inlining pid '$inlining_pid', worker tid '$worker_tid', cpu '$busy_cpu', time '$time_range') from the capture"
fi

E2E_MIN_SAMPLES=100
e2e_script_diff "-g: default fields" 100 "$fp" || failed=1
perf_default=$E2E_PERF_OUT
e2e_script_diff "-g: -F comm,tid,time,ip,sym,dso" 100 "$fp" -F comm,tid,time,ip,sym,dso || failed=1
e2e_script_diff "-g: -F comm,pid,tid,cpu,time,period,event,ip,sym,symoff,dso" 100 "$fp" \
	-F comm,pid,tid,cpu,time,period,event,ip,sym,symoff,dso || failed=1
e2e_script_diff "-g: -F +pid" 100 "$fp" -F +pid || failed=1
e2e_script_diff "-g: -F -period,-cpu" 100 "$fp" -F -period,-cpu || failed=1
e2e_script_diff "-g: -G" 100 "$fp" -G || failed=1
e2e_script_diff "-g: --ns" 100 "$fp" --ns || failed=1
e2e_script_diff "-g: --max-stack 3" 100 "$fp" --max-stack 3 || failed=1
E2E_MIN_SAMPLES=20
e2e_script_diff "-g: --pid $inlining_pid" 100 "$fp" --pid "$inlining_pid" || failed=1
e2e_script_diff "-g: --tid $worker_tid" 100 "$fp" --tid "$worker_tid" || failed=1
e2e_script_diff "-g: --comm threads" 100 "$fp" --comm threads || failed=1
# perf script's own spelling, -c/--comms, on both sides
e2e_script_diff "-g: -c threads" 100 "$fp" -c threads || failed=1
e2e_script_diff "-g: --comms loop,threads" 100 "$fp" --comms loop,threads || failed=1
e2e_script_diff "-g: --cpu $busy_cpu" 100 "$fp" --cpu "$busy_cpu" || failed=1
e2e_script_diff "-g: --time $time_range" 100 "$fp" --time "$time_range" || failed=1
# perf's percentage forms, resolved from the capture's SAMPLE_TIME feature;
# two halves that must not share a sample
e2e_script_diff "-g: --time 10%/2" 100 "$fp" --time 10%/2 || failed=1
e2e_script_diff "-g: --time 0%-50%" 100 "$fp" --time 0%-50% || failed=1
e2e_script_diff "-g: --time 50%-100%" 100 "$fp" --time 50%-100% || failed=1
e2e_script_diff "-g: --time $time_from," 100 "$fp" --time "$time_from," || failed=1

# `pystitch -i FILE` is `pystitch script -i FILE`
e2e_run "$PYSTITCH" --buildid-dir "$E2E_TMP/buildid-cache" -i "$fp" >"$E2E_TMP/pystitch-plain.txt" 2>"$E2E_TMP/pystitch-plain.err" || {
	e2e_show "$E2E_TMP/pystitch-plain.err"
	e2e_fail "pystitch -i $fp failed"
}
e2e_compare_script "-g: pystitch -i FILE (no sub-command)" "$perf_default" \
	pystitch-plain.txt -v min_samples=100 || failed=1

# ---- the DWARF capture ----
e2e_record "$E2E_TMP/dwarf.data" -F 999 --call-graph dwarf -- "$E2E_PROGRAMS/inlining" 0.4
dwarf=$E2E_TMP/dwarf.data
E2E_MIN_SAMPLES=100
e2e_script_diff "dwarf: -F ip,sym,symoff,dso,srcline" 100 "$dwarf" -F ip,sym,symoff,dso,srcline || failed=1
e2e_script_diff "dwarf: -F comm,tid,time,event,ip" 100 "$dwarf" -F comm,tid,time,event,ip || failed=1
e2e_script_diff "dwarf: --no-inline" 100 "$dwarf" --no-inline || failed=1
e2e_script_diff "dwarf: -F +srcline --no-inline" 100 "$dwarf" -F +srcline --no-inline || failed=1
# the sampled address's source line (innermost inline frame), and its
# instruction
e2e_script_diff "dwarf: -F +srccode,+insn,+insnlen" 100 "$dwarf" -F +srccode,+insn,+insnlen || failed=1
grep -q '^[|][0-9]' "$E2E_TMP/$E2E_PERF_OUT" || e2e_fail "perf printed no source line with -F +srccode"

# ---- the page-fault capture ----
e2e_record "$E2E_TMP/faults.data" -e page-faults -c 1 -d -g -- "$E2E_PROGRAMS/shlib" 0.1
faults=$E2E_TMP/faults.data
E2E_MIN_SAMPLES=50
e2e_script_diff "faults: -F +addr" 100 "$faults" -F +addr || failed=1
grep -q 'page-faults: *[0-9a-f]* [^ ]*+0x[0-9a-f]* (' "$E2E_TMP/$E2E_PERF_OUT" ||
	e2e_fail "perf named no faulting address with -F +addr"
e2e_script_diff "faults: -F ip,addr,sym,dso" 100 "$faults" -F ip,addr,sym,dso || failed=1
e2e_script_diff "faults: -F addr,event,sym,dso" 100 "$faults" -F addr,event,sym,dso || failed=1
exit $failed
