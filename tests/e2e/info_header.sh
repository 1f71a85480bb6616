#!/bin/sh
# info_header: `pystitch info` prints byte for byte what `perf report
# --header-only` prints, and `pystitch info -I` what `perf report
# --header-only -I` prints, on captures recorded here: two events, a pipe
# capture (its features arrive as records and print after the frame), a
# fixed period (-c), a tracepoint, -z, -g, --call-graph dwarf with a clock
# (CLOCKID, CLOCK_DATA), event groups in a file and in a pipe, BPF programs
# loaded while recording (BPF_PROG_INFO, BPF_BTF: named from their BTF or
# not), and the header file of a directory capture (perf record --threads).
# What this machine cannot record (hybrid CPUs, PMU capabilities) is
# compared in info_synthetic.sh.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
# the captures are small and their stacks are the script tests' business
E2E_NO_STACK_CHECK="info_header compares headers only"
status=0
loop=$E2E_PROGRAMS/loop

# compare FILE LABEL: info and info -I against perf
compare() {
	e2e_compare_info "$1" "$2" || status=1
	e2e_compare_info "$1" "$2" -I || status=1
}

# not_here WHAT: a capture this machine cannot make (a failure under CI)
not_here() {
	if [ "${CI:-}" = true ]; then
		e2e_say "FAIL: $e2e_name: $1 (CI=true does not allow leaving it out)" >&2
		status=1
	else
		e2e_say "$e2e_name: not compared: $1"
	fi
}

e2e_record "$E2E_TMP/two.data" -F 999 -e cpu-clock -e task-clock -- "$loop" 0.1
compare "$E2E_RECORDED" "two events"
e2e_record - -F 999 -g -- "$loop" 0.1
compare "$E2E_RECORDED" "pipe"
e2e_record "$E2E_TMP/period.data" -c 100000 -e cpu-clock -- "$loop" 0.1
compare "$E2E_RECORDED" "-c 100000"
e2e_record "$E2E_TMP/z.data" -z -F 999 -g -- "$loop" 0.1
compare "$E2E_RECORDED" "-z"
e2e_record "$E2E_TMP/g.data" -F 999 -g -- "$loop" 0.1
compare "$E2E_RECORDED" "-g"
e2e_record "$E2E_TMP/dwarf.data" -F 999 --call-graph dwarf,4096 -k mono -- "$loop" 0.1
compare "$E2E_RECORDED" "--call-graph dwarf -k mono"
e2e_record "$E2E_TMP/groups.data" -F 999 -e '{cpu-clock,task-clock}' \
	-e 'named{cpu-clock,page-faults}' -e context-switches -- "$loop" 0.1
compare "$E2E_RECORDED" "groups"
grep -q '^# group: named{cpu-clock,page-faults}$' "$E2E_TMP/pystitch-info.txt" ||
	{ e2e_say "FAIL: $e2e_name: no '# group: named{...}' line in info of the groups" >&2 && status=1; }
e2e_record - -F 999 -e '{cpu-clock,task-clock}' -- "$loop" 0.1
compare "$E2E_RECORDED" "groups in a pipe"

# a tracepoint, where tracefs is there to record one
if "$PERF" record -q -o "$E2E_TMP/trace.data" -e sched:sched_switch -e cpu-clock \
	-- "$E2E_PROGRAMS/sleeper" 20 1000 >/dev/null 2>"$E2E_TMP/trace.err"; then
	compare "$E2E_TMP/trace.data" "tracepoint"
else
	e2e_show "$E2E_TMP/trace.err"
	not_here "perf cannot record tracepoints here"
fi

# BPF programs held loaded while perf records: perf stores every program
# of the machine, these four among them
rm -f "$E2E_TMP/bpf-ready"
"$E2E_PROGRAMS/bpf_progs" 60 "$E2E_TMP/bpf-ready" 2>"$E2E_TMP/bpf.err" &
bpf_pid=$!
waited=0
while [ ! -e "$E2E_TMP/bpf-ready" ] && kill -0 $bpf_pid 2>/dev/null && [ $waited -lt 100 ]; do
	sleep 0.1
	waited=$((waited + 1))
done
if [ -e "$E2E_TMP/bpf-ready" ]; then
	e2e_record "$E2E_TMP/bpf.data" -F 999 -e cpu-clock -- "$loop" 0.1
	e2e_record - -F 999 -e cpu-clock -- "$loop" 0.1
	kill $bpf_pid 2>/dev/null
	wait $bpf_pid 2>/dev/null
	e2e_compare_info "$E2E_TMP/bpf.data" "BPF programs" || status=1
	for name in ps_plain ps_main '# btf info of id'; do
		grep -q -- "$name" "$E2E_TMP/pystitch-info.txt" ||
			{ e2e_say "FAIL: $e2e_name: no '$name' in info of the BPF capture" >&2 && status=1; }
	done
	grep -q '	sub_prog 1: bpf_prog_[0-9a-f]*_ps_leaf ' "$E2E_TMP/pystitch-info.txt" ||
		{ e2e_say "FAIL: $e2e_name: no BTF-named sub_prog in info of the BPF capture" >&2 && status=1; }
	e2e_compare_info "$E2E_TMP/bpf.data" "BPF programs" -I || status=1
	compare "$E2E_RECORDED" "BPF programs, pipe"
else
	kill $bpf_pid 2>/dev/null
	wait $bpf_pid
	bpf_status=$?
	e2e_show "$E2E_TMP/bpf.err"
	[ $bpf_status = 77 ] || e2e_fail "bpf_progs failed (exit status $bpf_status)"
	not_here "BPF programs cannot be loaded here"
fi

# perf record --threads writes a directory; its header file is a capture
# of its own, whose DIR_FORMAT perf refuses outside the directory
if "$PERF" record -q --threads -o "$E2E_TMP/threads.data" -F 999 -- "$loop" 0.1 \
	>/dev/null 2>"$E2E_TMP/threads.err" && [ -f "$E2E_TMP/threads.data/data" ]; then
	compare "$E2E_TMP/threads.data/data" "perf record --threads: its header file"
	# and the folder itself, as perf reads it (script_threads_folder.sh
	# compares the other commands)
	e2e_compare_info "$E2E_TMP/threads.data" "perf record --threads: the folder" || status=1
else
	e2e_show "$E2E_TMP/threads.err"
	not_here "this perf cannot record --threads"
fi
exit $status
