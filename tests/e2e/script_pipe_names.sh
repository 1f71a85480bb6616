#!/bin/sh
# script_pipe_names: event names in pipe mode (`perf record -o -`), where
# they come from records instead of the file's header: a uprobe
# (`perf probe -x PROG NAME=main`, a tracepoint of system probe_PROG) and a
# software event, each as recorded and without the records older perf
# versions do not write (pipe_strip.py): EVENT_UPDATE, which names every
# event in perf 6.1's pipe output; then also EVENT_DESC, so the uprobe's
# name comes from the tracing data (system:name of the event whose id is
# the attr's config) and cpu-clock:u gets perf's own name with modifiers
# (cpu-clock:uH: perf script keeps that name once it has printed it in a
# debug message about a field it prints that the samples lack, here the
# cpu, before EVENT_DESC arrives);
# then also the tracing data ("unknown tracepoint"). pystitch script must
# print what perf script prints for each. The same uprobe recorded to a
# file is compared too.
. "$(dirname "$0")/lib.sh"
e2e_setup
command -v python3 >/dev/null 2>&1 || e2e_skip "python3 is not installed (pipe_strip.py needs it)"
cp "$E2E_PROGRAMS/loop" "$E2E_TMP/psnames" || e2e_fail "cannot copy the loop program"
probe=pn$$
"$PERF" probe -q -x "$E2E_TMP/psnames" "$probe=main" >"$E2E_TMP/probe.err" 2>&1 || {
	e2e_show "$E2E_TMP/probe.err"
	e2e_skip "perf probe cannot add a uprobe here (uprobe_events in tracefs?)"
}
# shellcheck disable=SC2317 # called by the trap
names_cleanup() {
	"$PERF" probe -q -d "probe_psnames:$probe" >/dev/null 2>&1
	e2e_cleanup
}
trap names_cleanup EXIT
event=probe_psnames:$probe
workload="'$E2E_TMP/psnames' 0.05; '$E2E_TMP/psnames' 0.05; '$E2E_TMP/psnames' 0.05"
failed=0

# names_check LABEL FILE NAME [SCRIPT_ARGS...]: identical to perf, and
# perf printed the event as NAME
names_check() {
	nc_label=$1 nc_file=$2 nc_name=$3
	shift 3
	e2e_script_diff "$nc_label" 100 "$nc_file" "$@" || failed=1
	grep -q -F " $nc_name: " "$E2E_TMP/$E2E_PERF_OUT" ||
		e2e_fail "$nc_label: perf script did not name the event $nc_name: $(head -n 1 "$E2E_TMP/$E2E_PERF_OUT")"
}

e2e_record "$E2E_TMP/uprobe.data" -e "$event" -- /bin/sh -c "$workload"
names_check "uprobe, file mode" "$E2E_TMP/uprobe.data" "$event"

e2e_record - -e "$event" -- /bin/sh -c "$workload"
mv "$E2E_RECORDED" "$E2E_TMP/uprobe-pipe.data"
names_check "uprobe, pipe mode" "$E2E_TMP/uprobe-pipe.data" "$event"
python3 "$e2e_dir/pipe_strip.py" "$E2E_TMP/uprobe-pipe.data" "$E2E_TMP/uprobe-1.data" update
names_check "uprobe, pipe mode without EVENT_UPDATE" "$E2E_TMP/uprobe-1.data" "$event"
python3 "$e2e_dir/pipe_strip.py" "$E2E_TMP/uprobe-pipe.data" "$E2E_TMP/uprobe-2.data" update,desc
names_check "uprobe, pipe mode from the tracing data" "$E2E_TMP/uprobe-2.data" "$event"
python3 "$e2e_dir/pipe_strip.py" "$E2E_TMP/uprobe-pipe.data" "$E2E_TMP/uprobe-3.data" update,desc,tracing
# (perf's default fields need the tracing data: it crashes without)
names_check "uprobe, pipe mode with no name at all" "$E2E_TMP/uprobe-3.data" "unknown tracepoint" \
	-F comm,tid,time,event

e2e_record - -e cpu-clock:u -c 100003 -- "$E2E_PROGRAMS/loop" 0.1
mv "$E2E_RECORDED" "$E2E_TMP/sw-pipe.data"
names_check "cpu-clock:u, pipe mode" "$E2E_TMP/sw-pipe.data" cpu-clock:u
python3 "$e2e_dir/pipe_strip.py" "$E2E_TMP/sw-pipe.data" "$E2E_TMP/sw-1.data" update
names_check "cpu-clock:u, pipe mode without EVENT_UPDATE" "$E2E_TMP/sw-1.data" cpu-clock:uH
# without the cpu column perf never named it: EVENT_DESC's name stands
names_check "cpu-clock:u, pipe mode without EVENT_UPDATE, -F comm,tid,time,event" \
	"$E2E_TMP/sw-1.data" cpu-clock:u -F comm,tid,time,event
python3 "$e2e_dir/pipe_strip.py" "$E2E_TMP/sw-pipe.data" "$E2E_TMP/sw-2.data" update,desc
names_check "cpu-clock:u, pipe mode without EVENT_UPDATE and EVENT_DESC" "$E2E_TMP/sw-2.data" cpu-clock:uH
exit $failed
