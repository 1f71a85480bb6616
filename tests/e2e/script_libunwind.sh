#!/bin/sh
# script_libunwind: whole programs whose DWARF stacks Debian perf's
# libunwind ends its own way, `pystitch script --python=native` against
# `perf script` on the same file, byte for byte:
#  - Node.js run with --perf-basic-prof: V8 maps part of its own (non-PIE)
#    binary near its JIT code; libunwind finds the file, no FDE for such a
#    frame at the address it looks up, guesses with frame pointers, and
#    the walk ends at the JIT frame the guess reaches (named from
#    /tmp/perf-PID.map);
#  - an AddressSanitizer program that reports leaks at exit: to symbolize
#    them the sanitizer runtime maps parts of its own library (and debug
#    files) below it, which moves the base libunwind looks the library up
#    from while the stacks still run through it. Frames libunwind looked
#    up before come from its cache of unwind states; the others from
#    whatever the process has mapped where the moved tables would be
#    (zeros: no info, the frame-chain guess; a file: its bytes taken for a
#    table; nothing: the end). The capture is also checked with --jobs 3
#    (e2e_check_stacks), where the session keeps that cache from what the
#    workers looked up;
#  - a shell exec'ing /bin/true in a loop, sampled inside execve (where
#    the user stack cannot be copied);
#  - a program built without unwind tables (tests/programs/no_cfi.c):
#    its frames are guessed from frame pointers, one of which leads to a
#    return address in its writable data, a mapping whose start less its
#    file offset is not the file's base; perf shows that frame.
# Node.js and the AddressSanitizer program are optional: without them
# their captures are left out, saying so.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0

# native LABEL FILE [SCRIPT_ARGS...]: `perf script SCRIPT_ARGS` against
# `pystitch script --python=native SCRIPT_ARGS $NV_JOBS`, all samples
# identical (the merged mode recovers the registers a leaf's epilogue
# popped in processes with JIT code, which perf does not). Sets
# E2E_PERF_OUT.
NV_JOBS=
native() {
	nv_label=$1
	nv_data=$2
	shift 2
	nv_tag=$(printf '%s' "$nv_label" | tr -c 'A-Za-z0-9_.-' '_')
	E2E_PERF_OUT=perf-$nv_tag.txt
	e2e_perf_script "$E2E_PERF_OUT" -i "$nv_data" "$@"
	# shellcheck disable=SC2086 # an option and its value, or nothing
	e2e_pystitch_script "pystitch-$nv_tag.txt" -i "$nv_data" --python=native "$@" $NV_JOBS
	e2e_compare_script "$nv_label" "$E2E_PERF_OUT" "pystitch-$nv_tag.txt" \
		-v min_identical="${NV_MIN:-100}" -v min_samples="$E2E_MIN_SAMPLES"
}

if command -v node >/dev/null 2>&1; then
	E2E_MIN_SAMPLES=100
	# (V8 writes an isolate log into the current directory unless told
	# where: the test's own directory)
	e2e_record "$E2E_TMP/node.data" -F 999 --call-graph dwarf -- \
		node --perf-basic-prof --no-logfile-per-isolate --logfile="$E2E_TMP/v8.log" \
		"$e2e_dir/../programs/jitloop.js" 0.5
	# --no-inline: perf runs addr2line on node's 100 MB of DWARF otherwise
	native node "$E2E_TMP/node.data" --no-inline || failed=1
	jit=$(grep -c '(/tmp/perf-[0-9]*\.map)$' "$E2E_TMP/$E2E_PERF_OUT")
	e2e_say "$e2e_name: node: $jit frames in JIT code"
	[ "$jit" -gt 0 ] || { e2e_say "$e2e_name: node: perf printed no JIT frame"; failed=1; }
else
	e2e_say "$e2e_name: no node (Node.js) here: its capture is left out"
fi

if [ -x "$E2E_PROGRAMS/asan_leak" ]; then
	E2E_MIN_SAMPLES=300
	LSAN_OPTIONS=exitcode=0
	export LSAN_OPTIONS
	e2e_record "$E2E_TMP/asan.data" -F 2999 --call-graph dwarf -- "$E2E_PROGRAMS/asan_leak" 0.2
	unset LSAN_OPTIONS
	NV_JOBS="--jobs 1"
	native asan "$E2E_TMP/asan.data" || failed=1
	NV_JOBS="--jobs 3"
	native "asan, --jobs 3" "$E2E_TMP/asan.data" || failed=1
	NV_JOBS=
	# the report's symbolizing: LeakSanitizer's own frames
	symbolizer=$(grep -c -E 'Symbolizer|backtrace|elf_|dwarf_' "$E2E_TMP/$E2E_PERF_OUT")
	e2e_say "$e2e_name: asan: $symbolizer frames of the report's symbolizer"
	[ "$symbolizer" -gt 0 ] || { e2e_say "$e2e_name: asan: no sample of the leak report"; failed=1; }
else
	e2e_say "$e2e_name: no AddressSanitizer program (configure found no -fsanitize=address): its capture is left out"
fi

E2E_MIN_SAMPLES=300
# A timer's samples land inside execve only by chance, and on some
# virtual machines (whose guest timers fire mostly in user mode) never:
# the task:task_rename tracepoint adds one sample inside every exec, after
# the new memory is in place and before the COMM record, where the user
# stack cannot be copied (perf then prints no user frame at all). Without
# that tracepoint the timer alone is recorded, and finding no sample
# inside execve is reported, not failed.
exec_events="-F 2999"
exec_must_sample=
if perf list tracepoint 2>/dev/null | grep -q 'task:task_rename'; then
	exec_events="-e task:task_rename -e cpu-clock -F 2999"
	exec_must_sample=1
fi
# shellcheck disable=SC2016,SC2086 # a program for sh -c; the events' options
e2e_record "$E2E_TMP/exec.data" $exec_events --call-graph dwarf -- \
	/bin/sh -c 'i=0; while [ $i -lt 3000 ]; do /bin/true; i=$((i + 1)); done'
# (99.9%: once, on a loaded machine whose capture lost chunks, perf
# unwound one sample in 1,886 (a 1,500-exec run) further than pystitch, a true at _dl_fixup's
# first instruction under ld.so's _dl_runtime_resolve_xsavec, whose CFA is
# rbx-based; not yet understood, and reported in the test's output)
NV_MIN=99.9
native exec "$E2E_TMP/exec.data" || failed=1
NV_MIN=
execs=$(grep -c 'bprm_execve\|do_execveat_common' "$E2E_TMP/$E2E_PERF_OUT")
e2e_say "$e2e_name: exec: $execs frames inside execve"
if [ "$execs" -eq 0 ]; then
	if [ -n "$exec_must_sample" ]; then
		e2e_say "$e2e_name: exec: no sample inside execve"
		failed=1
	else
		e2e_say "$e2e_name: exec: NOTE: no task:task_rename tracepoint here, and no timer sample landed inside execve: that case went untested"
	fi
fi
E2E_MIN_SAMPLES=300
e2e_record "$E2E_TMP/no_cfi.data" -F 2999 --call-graph dwarf -- "$E2E_PROGRAMS/no_cfi" 0.4
native "no unwind tables" "$E2E_TMP/no_cfi.data" || failed=1
guessed=$(grep -c ' descend+' "$E2E_TMP/$E2E_PERF_OUT")
in_data=$(grep -c ' data_target+0x7 ' "$E2E_TMP/$E2E_PERF_OUT")
e2e_say "$e2e_name: no unwind tables: $guessed guessed frames, $in_data return addresses in data"
[ "$guessed" -gt 0 ] || { e2e_say "$e2e_name: no unwind tables: perf printed no guessed frame"; failed=1; }
if [ "$(uname -m)" = x86_64 ] && [ "$in_data" -eq 0 ]; then
	e2e_say "$e2e_name: no unwind tables: perf printed no frame in the program's data"
	failed=1
fi
exit $failed
