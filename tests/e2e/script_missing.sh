#!/bin/sh
# script_missing: --call-graph dwarf captures whose binaries are gone when
# perf script reads them, `pystitch script` against `perf script` byte for
# byte. Debian's perf (libunwind) unwinds a process's stacks only once a map
# of a file it can read as a 64-bit ELF was inserted into it
# (unwind__prepare_access()); until then its samples get no user frame at
# all, and once it does, a sample in a missing binary shows its IP as
# `[unknown] (path)` and stops there. Each capture runs a copy of a test
# program that is deleted after recording, with perf's build-id cache kept
# from supplying it:
#  - a dynamic program (-N: no cache copies): ld.so and libc stay
#    readable, so its samples show `[unknown] (copy)`;
#  - the same program under threads: the process's threads share it;
#  - a static program, -N --buildid-all: every file of the process is
#    gone, the vdso's recorded build-id is not in the cache, so no user
#    frame at all;
#  - the same with -B (no build-ids): perf reads [vdso] from its own copy
#    of its vdso, which registers the process;
#  - the static program run twice by sh: the first is a fork of sh (a
#    copy of its readable maps), the second an exec, which keeps them;
#  - the dynamic capture again under an empty --symfs: nothing readable
#    (perf's own vdso and the kallsyms are not under the symfs), no user
#    frame and no kernel symbol;
#  - a dynamic program recorded with the build-id cache on: the cache
#    supplies the deleted binary and the stacks are whole.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0
E2E_MIN_SAMPLES=100
bin=$E2E_TMP/bin
mkdir -p "$bin" "$E2E_TMP/empty-symfs"

# record_gone NAME PROGRAM PERF_RECORD_ARGS... -- COMMAND...: records a
# capture of a copy of tests/programs/PROGRAM at $bin/PROGRAM-NAME (the
# command names it as COPY), then deletes the copy and checks the stacks
# (table = libdwfl, -j 3 = -j 1) as they are without it.
record_gone() {
	rg_name=$1
	rg_program=$2
	shift 2
	rg_copy=$bin/$rg_program-$rg_name
	cp "$E2E_PROGRAMS/$rg_program" "$rg_copy" || e2e_fail "cannot copy $rg_program"
	rg_args=
	for rg_arg in "$@"; do
		[ "$rg_arg" = COPY ] && rg_arg=$rg_copy
		rg_args="$rg_args '$rg_arg'"
	done
	eval "set -- $rg_args"
	E2E_NO_STACK_CHECK="run once the binary is gone"
	e2e_record "$E2E_TMP/$rg_name.data" -F 999 --call-graph dwarf "$@" >/dev/null
	rm -f "$rg_copy"
	[ -e "$rg_copy" ] && e2e_fail "cannot delete $rg_copy"
	E2E_NO_STACK_CHECK=
	e2e_check_stacks "$E2E_TMP/$rg_name.data" --call-graph dwarf
}

# expect LABEL WHAT: a check of perf's own output for LABEL (the last
# e2e_script_diff): that it shows what the capture is for.
expect() {
	case $2 in
	unknown)
		grep -q -F "[unknown] ($rg_copy)" "$E2E_TMP/$E2E_PERF_OUT" ||
			{ e2e_say "$e2e_name: $1: perf printed no [unknown] ($rg_copy) frame"; failed=1; }
		;;
	none)
		# a sample of the program: its header line, no user frame
		if grep -q -F "$rg_copy" "$E2E_TMP/$E2E_PERF_OUT"; then
			e2e_say "$e2e_name: $1: perf printed frames of $rg_copy"
			failed=1
		fi
		;;
	whole)
		grep -q "run+0x[0-9a-f]* ($rg_copy)" "$E2E_TMP/$E2E_PERF_OUT" ||
			{ e2e_say "$e2e_name: $1: perf did not name the frames of $rg_copy"; failed=1; }
		;;
	esac
	# samples of the program with no user frame at all: the blank line
	# right after the header, or after the kernel frames
	# shellcheck disable=SC2016 # an awk program
	nouser=$("$AWK" -v comm="$(basename "$rg_copy" | cut -c1-15)" '
		/^[^\t ]/ { inside = ($1 == comm); last = ""; next }
		inside && /^$/ { if (last !~ /^\t/ || last ~ /\[kernel\.kallsyms\]\)$/) n++; inside = 0; next }
		inside { last = $0 }
		END { print n + 0 }' "$E2E_TMP/$E2E_PERF_OUT")
	e2e_say "$e2e_name: $1: $nouser samples of the program without user frames"
	if [ "$2" = none ] && [ "$nouser" = 0 ]; then
		e2e_say "$e2e_name: $1: no sample of the program"
		failed=1
	fi
}

record_gone dynamic loop -N -- COPY 0.3
e2e_script_diff "dynamic, deleted" 100 "$E2E_TMP/dynamic.data" || failed=1
expect "dynamic, deleted" unknown
e2e_script_diff "dynamic, empty --symfs" 100 "$E2E_TMP/dynamic.data" \
	--symfs "$E2E_TMP/empty-symfs" || failed=1
expect "dynamic, empty --symfs" none

record_gone threads threads -N -- COPY 0.3
e2e_script_diff "threads, deleted" 100 "$E2E_TMP/threads.data" || failed=1
expect "threads, deleted" unknown

record_gone static loop_static -N --buildid-all -- COPY 0.3
e2e_script_diff "static, deleted" 100 "$E2E_TMP/static.data" || failed=1
expect "static, deleted" none

record_gone static-nobuildid loop_static -B -- COPY 0.3
e2e_script_diff "static, deleted, no build-ids" 100 "$E2E_TMP/static-nobuildid.data" || failed=1
expect "static, deleted, no build-ids" unknown

# shellcheck disable=SC2016 # a program for sh -c, COPY its $0
record_gone static-sh loop_static -N --buildid-all -- /bin/sh -c '"$0" 0.2; "$0" 0.2' COPY
e2e_script_diff "static, run by sh, deleted" 100 "$E2E_TMP/static-sh.data" || failed=1
expect "static, run by sh, deleted" unknown

record_gone cached loop -- COPY 0.3
e2e_script_diff "dynamic, deleted, in the build-id cache" 100 "$E2E_TMP/cached.data" || failed=1
expect "dynamic, deleted, in the build-id cache" whole
exit $failed
