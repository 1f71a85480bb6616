#!/bin/sh
# script_options_records: the perf script options and -F fields that
# tooling passes (issue 17), each compared byte for byte, exit status
# included, with `perf script` on the same capture:
#  - a -g capture with --switch-events, --namespaces, --all-cgroups, -d,
#    --phys-data, --data-page-size, --code-page-size, --intr-regs,
#    --user-regs, --sample-cpu, -k CLOCK_MONOTONIC (clock data for tod) of
#    cpu-clock and the sched:sched_process_exec tracepoint, over a shell
#    running the threads and inlining programs: every --show-*-events
#    option, --reltime, --deltatime, the fields misc, tod, addr, data_src,
#    phys_addr, the page sizes, iregs, uregs, flags, callindent, ipc,
#    synth, metric, insn, insnlen, srccode, brstack*, machine_pid, vcpu (nothing to print without
#    branch stacks or guests), the filters -S (names, addresses,
#    --addr-range) and --dsos, --inline, --demangle, --no-demangle (the
#    threads program's work_chunk has a C++ name), --demangle-kernel,
#    -L, --stop-bt, --switch-on, --switch-off, --show-on-off-events,
#    --show-kernel-path, --max-blocks,
#    --stitch-lbr, --full-source-path, -C with the records, and
#    --per-event-dump (its files and its summary, with -F +srccode);
#  - a pipe-mode capture: records, rounds, misc, --reltime;
#  - perf's refusals: weight and ins_lat the capture does not record, tod
#    without clock data, brstackinsn without -b, -C without CPUs sampled;
#  - a group whose leader reads its members (PERF_SAMPLE_READ), each
#    sample delivered once per counter that moved;
#  - LOST records (a one-page buffer no DWARF sample fits), KSYMBOL and
#    BPF_EVENT records (BPF programs loaded while recording);
#  - the options pystitch leaves out are refused in one line naming the
#    option, and so is an unknown -F field.
# Prints one "TEST: ...: identical" line per option.
# shellcheck disable=SC2016 # awk programs in single quotes
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0

# a2l_staying: prints a directory whose addr2line is the real one for a
# file addr2line can read, and for any other file answers every line of
# its input with "??" and "??:0" until the input ends.
a2l_staying() {
	if [ ! -x "$E2E_TMP/a2l/addr2line" ]; then
		as_real=$(command -v addr2line) || e2e_fail "no addr2line"
		mkdir -p "$E2E_TMP/a2l"
		cat >"$E2E_TMP/a2l/addr2line" <<EOF
#!/bin/sh
# perf runs: addr2line -e FILE -i -f
if [ "\$1" != -e ] || "$as_real" -e "\$2" </dev/null >/dev/null 2>&1; then
	exec "$as_real" "\$@"
fi
while read -r line; do printf '??\\n??:0\\n'; done
EOF
		chmod +x "$E2E_TMP/a2l/addr2line"
	fi
	printf '%s\n' "$E2E_TMP/a2l"
}

# same LABEL FILE ARGS...: `perf script -i FILE ARGS` and `pystitch
# script -i FILE ARGS` print the same bytes on stdout and both succeed, or
# both fail.
same() {
	s_label=$1
	s_data=$2
	shift 2
	s_tag=$(printf '%s' "$s_label" | tr -c 'A-Za-z0-9_.-' '_')
	e2e_perf script -i "$s_data" "$@" >"$E2E_TMP/perf-$s_tag.txt" 2>"$E2E_TMP/perf-$s_tag.err"
	s_perf=$?
	if [ "$s_perf" = 141 ]; then
		# perf 6.1 keeps writing to an addr2line child that has exited on a
		# file it cannot read (the //anon of a bad frame-pointer frame): the
		# second address kills perf with SIGPIPE, and whether the first does
		# is a race. Once more with an addr2line that stays and answers
		# "??" and "??:0" for such a file, as addr2line does for an address
		# it cannot place: perf's output had its child stayed.
		e2e_say "TEST: $e2e_name: $s_label: perf died of SIGPIPE; again with an addr2line that stays on files it cannot read"
		s_a2l=$(a2l_staying)
		(
			# perf puts the directory of its argv[0] first in its
			# children's PATH: run by bare name, it finds ours first
			PATH=$s_a2l:$(dirname "$PERF"):$PATH
			export PATH
			PERF=perf
			e2e_perf script -i "$s_data" "$@" >"$E2E_TMP/perf-$s_tag.txt" 2>"$E2E_TMP/perf-$s_tag.err"
		)
		s_perf=$?
	fi
	e2e_run "$PYSTITCH" script -q --buildid-dir "$E2E_TMP/buildid-cache" -i "$s_data" "$@" \
		>"$E2E_TMP/pystitch-$s_tag.txt" 2>"$E2E_TMP/pystitch-$s_tag.err"
	s_ours=$?
	if [ "$s_perf" != 0 ] && [ "$s_ours" != 0 ]; then
		e2e_say "TEST: $e2e_name: $s_label: identical (both refuse)"
		return 0
	fi
	if [ "$s_perf" = 0 ] && [ "$s_ours" = 0 ] &&
		cmp -s "$E2E_TMP/perf-$s_tag.txt" "$E2E_TMP/pystitch-$s_tag.txt"; then
		e2e_say "TEST: $e2e_name: $s_label: identical ($(wc -l <"$E2E_TMP/perf-$s_tag.txt") lines)"
		return 0
	fi
	e2e_say "TEST: $e2e_name: $s_label: DIFFERENT (perf exit $s_perf, pystitch exit $s_ours)"
	diff "$E2E_TMP/perf-$s_tag.txt" "$E2E_TMP/pystitch-$s_tag.txt" | head -8 >&2
	e2e_show "$E2E_TMP/pystitch-$s_tag.err"
	return 1
}

# has LABEL OUTPUT REGEX: perf's output holds such lines (so an option
# that prints nothing cannot pass unnoticed).
has() {
	grep -q -E "$3" "$E2E_TMP/perf-$(printf '%s' "$1" | tr -c 'A-Za-z0-9_.-' '_').txt" ||
		e2e_fail "$1: perf printed no line matching '$3' ($2)"
}

rec=$E2E_TMP/records.data
e2e_record "$rec" -F 999 -g -k CLOCK_MONOTONIC --switch-events --namespaces --all-cgroups \
	-d --phys-data --data-page-size --code-page-size --intr-regs --user-regs --sample-cpu \
	-e cpu-clock -e sched:sched_process_exec -- /bin/sh -c \
	"'$E2E_PROGRAMS/threads' 0.3 2 & '$E2E_PROGRAMS/inlining' 0.3; wait"

for events in task mmap switch namespace cgroup lost round bpf text-poke; do
	same "--show-$events-events" "$rec" "--show-$events-events" || failed=1
done
has --show-task-events "task records" 'PERF_RECORD_(COMM|FORK|EXIT)'
has --show-mmap-events "mmap records" 'PERF_RECORD_MMAP2'
has --show-switch-events "switch records" 'PERF_RECORD_SWITCH'
has --show-namespace-events "namespace records" 'PERF_RECORD_NAMESPACES'
has --show-cgroup-events "cgroup records" 'PERF_RECORD_CGROUP'
has --show-round-events "rounds" 'PERF_RECORD_FINISHED_ROUND'
same "all records, -F +misc" "$rec" --show-task-events --show-mmap-events --show-switch-events \
	--show-namespace-events --show-cgroup-events -F +misc || failed=1
# records pass -C as perf filters them, and none of the sample filters
all_events="--show-task-events --show-mmap-events --show-switch-events --show-namespace-events --show-cgroup-events"
for cpus in 0 1 0-1; do
	# shellcheck disable=SC2086 # the options split into words
	same "-C $cpus, all records" "$rec" -C "$cpus" $all_events || failed=1
done
# shellcheck disable=SC2086
same "--comm threads --time 10%-50%, all records" "$rec" --comm threads --time 10%-50% $all_events ||
	failed=1
# shellcheck disable=SC2086
same "-G -F comm,tid,time, all records" "$rec" -G -F comm,tid,time $all_events || failed=1
same "--reltime" "$rec" --reltime || failed=1
same "--deltatime" "$rec" --deltatime || failed=1
same "--reltime --show-mmap-events" "$rec" --reltime --show-mmap-events || failed=1
same "-F +misc,+tod" "$rec" -F +misc,+tod || failed=1
same "--ns -F +tod" "$rec" --ns -F +tod || failed=1
same "-F +data_src,+phys_addr,+data_page_size,+code_page_size" "$rec" \
	-F +data_src,+phys_addr,+data_page_size,+code_page_size || failed=1
same "-F +addr" "$rec" -F +addr || failed=1
same "-F comm,tid,ip,sym,addr,dso" "$rec" -F comm,tid,ip,sym,addr,dso || failed=1
has "-F +addr" "the addr column" ' cpu-clock: +[0-9a-f]+$'
same "-F +iregs,+uregs" "$rec" -F +iregs,+uregs || failed=1
same "-G -F +iregs,+uregs,+misc" "$rec" -G -F +iregs,+uregs,+misc || failed=1
same "-F +flags" "$rec" -F +flags || failed=1
same "-F +callindent,+ipc,+synth,+metric" "$rec" -F +callindent,+ipc,+synth,+metric || failed=1
same "-F +brstack,+brstacksym,+brstackoff" "$rec" -F +brstack,+brstacksym,+brstackoff || failed=1
same "-F +machine_pid,+vcpu" "$rec" -F +machine_pid,+vcpu || failed=1
# the sampled instruction, read from each object's file (the vdso from
# the build-id cache; none from kallsyms) and decoded as perf decodes it
same "-F +insn,+insnlen" "$rec" -F +insn,+insnlen || failed=1
has "-F +insn,+insnlen" "instructions" '^ ilen: [1-9][0-9]* insn:( [0-9a-f]{2})+$'
has "-F +insn,+insnlen" "kernel samples" '^ ilen: 0$'
same "-G -F comm,tid,ip,sym,dso,insnlen,insn" "$rec" -G -F comm,tid,ip,sym,dso,insnlen,insn ||
	failed=1
# the source line of each sample, when not the one printed last for its
# thread (the tracepoint's default fields have no ip: perf refuses
# srccode there)
same "-F sw:+srccode" "$rec" -F sw:+srccode || failed=1
has "-F sw:+srccode" "source lines" '^[|][0-9]+ +	'
same "-F +srccode (refused)" "$rec" -F +srccode || failed=1
same "-G -F comm,tid,ip,sym,srcline,srccode" "$rec" -G -F comm,tid,ip,sym,srcline,srccode ||
	failed=1
same "-F trace:+bpf-output" "$rec" -F trace:+bpf-output || failed=1
same "-F comm,tid,misc,tod,data_src" "$rec" -F comm,tid,misc,tod,data_src || failed=1
same "--inline" "$rec" --inline || failed=1
same "-G -F ip,sym,srcline --full-source-path" "$rec" -G -F ip,sym,srcline --full-source-path ||
	failed=1
same "-F comm,tid,ip,sym,dso,srcline --full-source-path" "$rec" -F comm,tid,ip,sym,dso,srcline \
	--full-source-path || failed=1
same "-F comm,tid,ip,sym,dso,srcline --full-source-path --no-inline" "$rec" \
	-F comm,tid,ip,sym,dso,srcline --full-source-path --no-inline || failed=1
same "--demangle --demangle-kernel" "$rec" --demangle --demangle-kernel || failed=1
has "--demangle --demangle-kernel" "threads' work_chunk" ' pystitch::work_chunk\+0x'
same "--no-demangle" "$rec" --no-demangle || failed=1
has "--no-demangle" "threads' work_chunk" ' _ZN8pystitch10work_chunkEid\+0x'
same "--no-demangle --demangle" "$rec" --no-demangle --demangle || failed=1
same "-L" "$rec" -L || failed=1
same "--Latency -F comm,tid,cpu,time,event,ip,sym --show-task-events" "$rec" --Latency \
	-F comm,tid,cpu,time,event,ip,sym --show-task-events || failed=1
same "--stop-bt worker_main,main" "$rec" --stop-bt worker_main,main || failed=1
same "--stop-bt start_thread -F ip,sym,dso" "$rec" --stop-bt start_thread -F ip,sym,dso || failed=1
# --switch-on/--switch-off with the capture's two events
for sw in "--switch-on sched:sched_process_exec" "--switch-off sched:sched_process_exec" \
	"--switch-on sched:sched_process_exec --show-on-off-events" \
	"--switch-on cpu-clock --switch-off sched:sched_process_exec --show-on-off-events"; do
	# shellcheck disable=SC2086 # the options split into words
	same "$sw" "$rec" $sw || failed=1
done
same "--switch-on no-such-event (refused)" "$rec" --switch-on no-such-event || failed=1
same "--show-kernel-path" "$rec" --show-kernel-path || failed=1
same "--max-blocks 4" "$rec" --max-blocks 4 || failed=1
same "--stitch-lbr" "$rec" --stitch-lbr || failed=1
# perf's refusals
same "-F +weight (not recorded)" "$rec" -F +weight || failed=1
same "-F +ins_lat (not recorded)" "$rec" -F +ins_lat || failed=1
same "-F +brstackinsn (no -b)" "$rec" -F +brstackinsn || failed=1

# -S and --dsos: values from perf's view of the capture
e2e_perf_script syms.txt -i "$rec" -G -F ip,sym
sym=$("$AWK" '$2 != "[unknown]" && $2 != "" { n[$2]++ } END { for (s in n) if (n[s] > most) { most = n[s]; best = s } print best }' \
	"$E2E_TMP/syms.txt")
[ -n "$sym" ] || e2e_fail "no symbol in the capture for -S"
same "-S $sym" "$rec" -S "$sym" || failed=1
same "-S $sym,main -G" "$rec" -S "$sym,main" -G || failed=1
# only the samples printed count for what was printed last
same "-S $sym,work_chunk,run -F sw:+srccode" "$rec" -S "$sym,pystitch::work_chunk,run" \
	-F sw:+srccode || failed=1
# -S takes addresses too: a function's start, the sampled addresses in
# hexadecimal, and with --addr-range the bytes after them
e2e_perf_script addrs.txt -i "$rec" -G -F ip,sym,symoff
addr_off=$("$AWK" -v sym="$sym" '$2 ~ "^" sym "\\+0x" { off = $2; sub(/.*\+0x/, "", off)
	print $1, off; exit }' "$E2E_TMP/addrs.txt")
addr=${addr_off% *}
[ -n "$addr" ] || e2e_fail "no address of $sym for -S"
start=$(printf '0x%x' $((0x$addr - 0x${addr_off#* })))
# a function's start is a number, not a name: perf matches it with the
# sampled addresses (none here)
same "-S $start (the start of $sym)" "$rec" -S "$start" || failed=1
same "-S $addr,nosuch -G" "$rec" -S "$addr,nosuch" -G || failed=1
same "-S $addr --addr-range 64" "$rec" -S "$addr" --addr-range 64 || failed=1
same "-S $addr --addr-range -16 -G" "$rec" -S "$addr" --addr-range -16 -G || failed=1
same "--dsos inlining" "$rec" --dsos inlining || failed=1
same "--dsos [kernel.kallsyms],libc.so.6" "$rec" --dsos '[kernel.kallsyms],libc.so.6' || failed=1
same "--dsos $E2E_PROGRAMS/threads" "$rec" --dsos "$E2E_PROGRAMS/threads" || failed=1

# --per-event-dump: the summary on stdout, then each event's file
mkdir -p "$E2E_TMP/dump-perf" "$E2E_TMP/dump-ours"
same "--per-event-dump" "$rec" --per-event-dump || failed=1
for f in "$rec".*.dump; do
	[ -e "$f" ] && rm -f "$f"
done
# with -F sw:+srccode the source lines go to standard output. The
# summary's sizes are left out there: perf flushes every file whenever it
# starts an addr2line child (for srccode, srcline or the inline frames of
# DWARF stacks), which moves what its stdio buffers hold when it looks
e2e_perf script -i "$rec" --per-event-dump -F sw:+srccode >"$E2E_TMP/dump-perf.txt" 2>&1 ||
	e2e_fail "perf script --per-event-dump failed"
mv "$rec".*.dump "$E2E_TMP/dump-perf/"
e2e_run "$PYSTITCH" script -q --buildid-dir "$E2E_TMP/buildid-cache" -i "$rec" --per-event-dump \
	-F sw:+srccode >"$E2E_TMP/dump-ours.txt" || e2e_fail "pystitch script --per-event-dump failed"
mv "$rec".*.dump "$E2E_TMP/dump-ours/"
for f in dump-perf.txt dump-ours.txt; do
	sed 's/^\[ perf script: Wrote [0-9.]* MB /[ perf script: Wrote N MB /' "$E2E_TMP/$f" >"$E2E_TMP/$f.sizes"
done
grep -q '^[|][0-9]' "$E2E_TMP/dump-perf.txt" ||
	e2e_fail "perf script --per-event-dump -F sw:+srccode printed no source line"
if cmp -s "$E2E_TMP/dump-perf.txt.sizes" "$E2E_TMP/dump-ours.txt.sizes"; then
	e2e_say "TEST: $e2e_name: --per-event-dump -F sw:+srccode: identical but for the sizes"
else
	e2e_say "TEST: $e2e_name: --per-event-dump -F sw:+srccode: DIFFERENT"
	diff "$E2E_TMP/dump-perf.txt.sizes" "$E2E_TMP/dump-ours.txt.sizes" | head -8 >&2
	failed=1
fi
nr_dumps=0
for f in "$E2E_TMP/dump-perf"/*; do
	nr_dumps=$((nr_dumps + 1))
	if cmp -s "$f" "$E2E_TMP/dump-ours/${f##*/}"; then
		e2e_say "TEST: $e2e_name: --per-event-dump ${f##*/}: identical"
	else
		e2e_say "TEST: $e2e_name: --per-event-dump ${f##*/}: DIFFERENT"
		failed=1
	fi
done
[ "$nr_dumps" = 2 ] || e2e_fail "perf wrote $nr_dumps --per-event-dump files (2 expected)"

# ---- a capture without clock data: tod is refused, as perf refuses it ----
plain=$E2E_TMP/plain.data
e2e_record "$plain" -F 999 -- "$E2E_PROGRAMS/inlining" 0.2
same "-F +tod (no clock data)" "$plain" -F +tod || failed=1
same "-F +misc,+flags (plain)" "$plain" -F +misc,+flags || failed=1

# ---- -C on a capture whose samples carry no CPU: perf refuses it ----
same "-C 0 (no CPU in the samples)" "$plain" -C 0 || failed=1
grep -q -F 'File does not contain CPU events. Remove -C option to proceed.' \
	"$E2E_TMP/pystitch--C_0__no_CPU_in_the_samples_.err" ||
	e2e_fail "pystitch did not say why it refused -C: $(cat "$E2E_TMP/pystitch--C_0__no_CPU_in_the_samples_.err")"
"$PYSTITCH" collapse -q -i "$plain" -C 0 >/dev/null 2>&1 && e2e_fail "collapse took -C without CPUs"

# ---- lost records: a buffer of one page, which no DWARF sample fits ----
lost=$E2E_TMP/lost.data
E2E_NO_STACK_CHECK="every sample lost: no stack to check"
e2e_record "$lost" -m 1 -F 4999 --call-graph dwarf,32768 -- "$E2E_PROGRAMS/loop" 0.2
unset E2E_NO_STACK_CHECK
same "--show-lost-events (lost)" "$lost" --show-lost-events || failed=1
has "--show-lost-events (lost)" "lost records" ': PERF_RECORD_LOST lost [0-9]+$'
same "--show-lost-events --show-task-events -F +misc (lost)" "$lost" --show-lost-events \
	--show-task-events -F +misc || failed=1

# ---- BPF programs loaded while perf records ----
bpf=$E2E_TMP/bpf-events.data
# (bpf_progs mostly sleeps: the capture may hold no sample to check)
E2E_NO_STACK_CHECK="bpf_progs sleeps: few samples or none"
e2e_record "$bpf" -F 999 -- "$E2E_PROGRAMS/bpf_progs" 0.2 "$E2E_TMP/bpf-ready"
unset E2E_NO_STACK_CHECK
[ -e "$E2E_TMP/bpf-ready" ] || e2e_fail "bpf_progs loaded no BPF program under perf record"
same "--show-bpf-events (bpf)" "$bpf" --show-bpf-events || failed=1
has "--show-bpf-events (bpf)" "KSYMBOL records" 'PERF_RECORD_KSYMBOL addr [0-9a-f]+ len [0-9]+ type 1 flags 0x0 name bpf_prog_'
has "--show-bpf-events (bpf)" "BPF_EVENT records" 'PERF_RECORD_BPF_EVENT type 1, flags 0, id [0-9]+$'
same "--show-bpf-events --show-text-poke-events -F +misc (bpf)" "$bpf" --show-bpf-events \
	--show-text-poke-events -F +misc || failed=1

# ---- a group whose leader reads its members (:S, PERF_SAMPLE_READ) ----
# perf delivers each sample once per counter that moved, as that counter's
# event with how far it moved as the period
sread=$E2E_TMP/sample-read.data
e2e_record "$sread" -g -e '{cpu-clock,task-clock}:S' -- "$E2E_PROGRAMS/inlining" 0.2
same "sample read" "$sread" || failed=1
has "sample read" "the member's deliveries" ' task-clock: *$'
same "sample read, -F comm,tid,period,event,ip,sym -G" "$sread" -F comm,tid,period,event,ip,sym -G ||
	failed=1
# --switch-on goes by each delivery's event: only the leader samples
same "sample read, --switch-on task-clock" "$sread" --switch-on task-clock -G || failed=1
has "sample read, --switch-on task-clock" "samples after the switch" ' cpu-clock: '

# ---- a pipe-mode capture: the records arrive among the attrs and features ----
e2e_record - -F 999 -g -- "$E2E_PROGRAMS/inlining" 0.2
pipe=$E2E_TMP/pipe-records.data
mv "$E2E_RECORDED" "$pipe"
same "pipe: --show-task-events --show-mmap-events --show-round-events" "$pipe" \
	--show-task-events --show-mmap-events --show-round-events || failed=1
same "pipe: -F +misc --reltime" "$pipe" -F +misc --reltime || failed=1
same "pipe: -F +insn,+insnlen" "$pipe" -F +insn,+insnlen || failed=1
# the header: a file's is printed first; a pipe's features come as
# records, printed as they arrive, before any sample or record
for data in "$plain" "$pipe"; do
	kind="file"
	[ "$data" = "$pipe" ] && kind=pipe
	same "$kind: --header" "$data" --header || failed=1
	same "$kind: --header-only" "$data" --header-only || failed=1
	same "$kind: --header -I" "$data" --header -I || failed=1
	same "$kind: --header --show-mmap-events" "$data" --header --show-mmap-events || failed=1
done

# ---- what pystitch leaves out: one line naming the option ----
# each word: the option as given, ":", the name the message must hold
for case in -sfoo.py:script --script=foo.py:script --itrace:itrace --xed:xed \
	--insn-trace:insn-trace -F+nosuchfield:nosuchfield; do
	option=${case%:*}
	name=${case##*:}
	e2e_run "$PYSTITCH" script -q -i "$plain" "$option" >"$E2E_TMP/left.txt" 2>"$E2E_TMP/left.err" &&
		e2e_fail "pystitch script $option did not fail"
	if [ "$(wc -l <"$E2E_TMP/left.err")" != 1 ] || ! grep -q -F -e "$name" "$E2E_TMP/left.err" ||
		[ -s "$E2E_TMP/left.txt" ]; then
		e2e_show "$E2E_TMP/left.err"
		e2e_say "TEST: $e2e_name: $option: not refused in one line naming it"
		failed=1
	else
		e2e_say "TEST: $e2e_name: $option refused: $(cat "$E2E_TMP/left.err")"
	fi
done
exit $failed
