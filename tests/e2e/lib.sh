# lib.sh: shared by the end-to-end tests in tests/e2e/ (POSIX sh; sourced).
# shellcheck shell=sh
#
# A test records a capture of one of tests/programs/ with `perf record`,
# then compares `pystitch dump` (or `pystitch info`) with perf's own view of
# the same file. Exit codes follow automake: 0 pass, 1 fail, 77 skip.
# Without root or perf the tests skip, except under CI=true, where a skip is
# a failure; what only an environment variable can name (PS_E2E_FP_PYTHONS)
# skips either way (e2e_skip_optional).
#
# Environment (make check sets the first ones through AM_TESTS_ENVIRONMENT):
#   abs_top_builddir  build tree holding ./pystitch and tests/programs/
#   PERF              perf found by configure (else perf from PATH)
#   AWK               awk found by configure (else awk)
#   PYSTITCH          pystitch binary to test (default: the build tree's)
#   PS_E2E_KEEP=1     keep the work directory (captures and outputs)
#   PS_E2E_TIMEOUT    seconds before a perf report or pystitch run is killed (120)
#   CI=true           turn skips into failures (not e2e_skip_optional's)
#   PS_E2E_PYTHONS, PS_E2E_MODULE_PYTHONS, PS_E2E_FP_PYTHONS: more
#                     interpreters to test (README.md, "Building by hand")

e2e_name=$(basename "$0" .sh)
e2e_dir=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)

if [ -z "${abs_top_builddir:-}" ]; then
	if [ -n "${top_builddir:-}" ]; then
		abs_top_builddir=$(CDPATH='' cd -- "$top_builddir" && pwd)
	else
		# run by hand from an in-tree build
		abs_top_builddir=$(CDPATH='' cd -- "$e2e_dir/../.." && pwd)
	fi
fi
PYSTITCH=${PYSTITCH:-$abs_top_builddir/pystitch}
E2E_PROGRAMS=$abs_top_builddir/tests/programs
AWK=${AWK:-awk}
E2E_TMP=

# e2e_run COMMAND...: runs COMMAND, killed after PS_E2E_TIMEOUT seconds
# (default 120) when timeout(1) exists, so a hanging reader fails the test
# instead of stalling `make check`. Exit status 124 means it timed out.
e2e_run() {
	if command -v timeout >/dev/null 2>&1; then
		timeout "${PS_E2E_TIMEOUT:-120}" "$@"
	else
		"$@"
	fi
}

e2e_say() {
	printf '%s\n' "$*"
}

e2e_fail() {
	e2e_say "FAIL: $e2e_name: $*" >&2
	exit 1
}

e2e_skip() {
	if [ "${CI:-}" = true ]; then
		e2e_say "FAIL: $e2e_name: CI=true does not allow skipping; would have skipped because: $*" >&2
		exit 1
	fi
	e2e_say "************************************************************" >&2
	e2e_say "SKIP: $e2e_name: $*" >&2
	e2e_say "************************************************************" >&2
	exit 77
}

# e2e_skip_optional REASON: SKIP, as loudly, under CI=true too: for what
# only an environment variable can name (interpreters built differently,
# which neither this machine's packages nor CI's provide).
e2e_skip_optional() {
	e2e_say "************************************************************" >&2
	e2e_say "SKIP: $e2e_name: $*" >&2
	e2e_say "************************************************************" >&2
	exit 77
}

e2e_cleanup() {
	[ -n "$E2E_TMP" ] && [ -d "$E2E_TMP" ] || return 0
	if [ "${PS_E2E_KEEP:-}" = 1 ]; then
		e2e_say "kept the work directory $E2E_TMP"
	else
		rm -rf "$E2E_TMP"
	fi
}

# e2e_refuses_terminal MESSAGE COMMAND: COMMAND (one string, for sh -c),
# run with a terminal as standard output (script(1) gives it one), must
# exit 1 printing one line that holds MESSAGE. Nothing to check without
# script(1).
e2e_refuses_terminal() {
	command -v script >/dev/null 2>&1 || return 0
	script -qec "$2" /dev/null >"$E2E_TMP/tty.txt" 2>&1
	rt_status=$?
	if [ $rt_status != 1 ] || ! grep -q -- "$1" "$E2E_TMP/tty.txt" ||
		[ "$(wc -l <"$E2E_TMP/tty.txt")" != 1 ]; then
		e2e_fail "$2, to a terminal: exit status $rt_status, $(cat "$E2E_TMP/tty.txt")"
	fi
}

# Shows the last lines of a log file, indented.
e2e_show() {
	[ -s "$1" ] || return 0
	tail -n "${2:-15}" "$1" | sed 's/^/    /' >&2
}

# e2e_setup: checks for pystitch and perf, makes the work directory and a
# perf config that keeps the build-id cache inside it (the user's
# ~/.perfconfig and ~/.debug stay out of the tests).
e2e_setup() {
	[ -x "$PYSTITCH" ] || e2e_fail "no pystitch binary at $PYSTITCH (build it first)"
	[ -x "$E2E_PROGRAMS/loop" ] || e2e_fail "no test programs in $E2E_PROGRAMS (make check builds them)"
	if [ -z "${PERF:-}" ]; then
		PERF=$(command -v perf) || e2e_skip "perf is not installed (Debian/Ubuntu: apt-get install linux-perf)"
	fi
	[ -x "$PERF" ] || e2e_skip "perf ($PERF) is not installed or not executable"
	"$PERF" version >/dev/null 2>&1 || e2e_skip "\`$PERF version\` fails: $("$PERF" version 2>&1 | head -n 1)"

	E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-$e2e_name.XXXXXX") ||
		e2e_fail "cannot create a temporary directory"
	trap e2e_cleanup EXIT
	trap 'exit 130' HUP INT TERM
	printf '[buildid]\n\tdir = %s\n' "$E2E_TMP/buildid-cache" >"$E2E_TMP/perfconfig"
	PERF_CONFIG=$E2E_TMP/perfconfig
	export PERF_CONFIG
}

# Called after `perf record` failed; $1 is its stderr. Missing permissions
# and missing kernel features are skips, anything else a failure.
e2e_record_failed() {
	e2e_say "perf record failed; its messages:" >&2
	e2e_show "$1" 20
	reason=$(grep -m 1 -i -E 'permission|not permitted|paranoid|access to performance monitoring' "$1")
	[ -n "$reason" ] && e2e_skip "perf record is not permitted here (run as root or lower kernel.perf_event_paranoid): $reason"
	reason=$(grep -m 1 -i -E 'tracepoint|tracefs|debugfs|event syntax error' "$1")
	[ -n "$reason" ] && e2e_skip "tracepoints are not available here: $reason"
	reason=$(grep -m 1 -i -E 'compression.*(not|isn.t) supported|zstd' "$1")
	[ -n "$reason" ] && e2e_skip "this perf cannot compress: $reason"
	reason=$(grep -m 1 -i -E 'no such device|not supported' "$1")
	[ -n "$reason" ] && e2e_skip "the kernel cannot do what this test records: $reason"
	e2e_fail "perf record failed"
}

# e2e_record FILE PERF_RECORD_ARGS... -- COMMAND...: records into FILE.
# FILE "-" records in pipe mode into $E2E_TMP/pipe.data and prints that path
# in E2E_RECORDED; otherwise E2E_RECORDED=FILE. The test programs print
# nothing on stdout, so pipe mode output stays clean.
e2e_record() {
	target=$1
	shift
	# perf runs in the background only to learn its pid: a capture of
	# every CPU holds other processes, whose files stay theirs
	if [ "$target" = - ]; then
		E2E_RECORDED=$E2E_TMP/pipe.data
		"$PERF" record -o - "$@" >"$E2E_RECORDED" 2>"$E2E_TMP/record.err" &
	else
		E2E_RECORDED=$target
		"$PERF" record -o "$target" "$@" >"$E2E_TMP/record.out" 2>"$E2E_TMP/record.err" &
	fi
	er_perf=$!
	wait "$er_perf" || e2e_record_failed "$E2E_TMP/record.err"
	er_root=
	for er_arg in "$@"; do
		case $er_arg in
		--) break ;;
		-a | --all-cpus | -C | --cpu | --cpu=*) er_root=$er_perf ;;
		esac
	done
	if grep -q -E 'Failed to collect|[Ww]orkload failed' "$E2E_TMP/record.err"; then
		e2e_show "$E2E_TMP/record.err"
		e2e_fail "perf record could not run the workload"
	fi
	[ -s "$E2E_RECORDED" ] || e2e_fail "perf record wrote no data"
	grep -i -E 'lost|warning' "$E2E_TMP/record.err" >&2
	e2e_keep_maps "$E2E_RECORDED" $er_root
	e2e_check_stacks "$E2E_RECORDED" "$@"
	return 0
}

# e2e_keep_maps FILE: the perf maps and jitdumps the processes of the
# capture FILE wrote to /tmp become the test's own, as soon as it is
# recorded: /tmp is shared by every process of the machine, and once the
# recorded process has exited its pid can be given to another process
# (pid_max is 32768 here), which would write a perf-PID.map of its own
# there. Each file is copied beside the capture (where pystitch looks
# before /tmp) and into $E2E_TMP/tmp-view (the /tmp that e2e_perf shows
# perf), then removed from /tmp. Sets E2E_KEPT to the copies beside FILE.
# With ROOT (the pid of the perf that recorded every CPU), only the files
# of ROOT's descendants: the machine's other processes, other tests'
# among them, keep theirs.
E2E_KEPT_PIDS=
e2e_keep_maps() {
	km_dir=$(dirname "$1")
	E2E_KEPT=
	# every process of the capture, named in its COMM and FORK records
	# (PERF_RECORD_FORK(PID:TID):(PPID:PTID)), or ROOT's descendants
	# shellcheck disable=SC2016 # an awk program
	for km_pid in $("$PYSTITCH" dump --no-hex -i "$1" 2>/dev/null | "$AWK" -v root="${2:-}" '
		/PERF_RECORD_COMM/ { p = $NF; sub(/.*:/, "", p); sub(/\/.*/, "", p); seen[p] = 1 }
		/PERF_RECORD_FORK\(/ {
			f = $0; sub(/.*PERF_RECORD_FORK\(/, "", f); split(f, n, /[:()]+/)
			seen[n[1]] = 1
			if (n[1] != n[3]) parent[n[1]] = n[3]
		}
		END {
			for (p in seen) {
				if (root == "") { print p; continue }
				# (a pid reused in the capture may make a loop)
				q = p
				for (d = 0; d < 4096 && q != root && (q in parent); d++)
					q = parent[q]
				if (q == root && p != root) print p
			}
		}' | sort -u); do
		for km_file in "/tmp/perf-$km_pid.map" "/tmp/jit-$km_pid.dump" \
			"/tmp/perf-$km_pid.pylines"; do
			[ -f "$km_file" ] || continue
			mkdir -p "$E2E_TMP/tmp-view"
			# shellcheck disable=SC2015 # either copy failing is the same failure
			cp "$km_file" "$km_dir/" && cp "$km_file" "$E2E_TMP/tmp-view/" ||
				e2e_fail "cannot copy $km_file beside $1"
			rm -f "$km_file"
			E2E_KEPT="$E2E_KEPT $km_dir/$(basename "$km_file")"
			E2E_KEPT_PIDS="$E2E_KEPT_PIDS $km_pid "
		done
	done
}

# e2e_perf ARGS...: perf (through e2e_run), seeing as /tmp the test's own
# copies of the perf maps it recorded (e2e_keep_maps), in a mount
# namespace of its own; the machine's /tmp is never changed. Without such
# copies, or without root or unshare(1), perf as it is.
e2e_perf() {
	if [ ! -d "$E2E_TMP/tmp-view" ] || [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1; then
		e2e_run "$PERF" "$@"
		return
	fi
	# the work directory stays where it is when it lives in /tmp
	case $E2E_TMP in
	/tmp/*) ep_inner=${E2E_TMP#/tmp/} ;;
	*) ep_inner= ;;
	esac
	# shellcheck disable=SC2016 # a shell program for sh -c
	e2e_run unshare --mount --propagation private sh -c '
		view=$1 inner=$2 work=$3
		shift 3
		if [ -n "$inner" ]; then
			mkdir -p "$view/$inner" && mount --bind "$work" "$view/$inner" || exit 125
		fi
		mount --rbind "$view" /tmp || exit 125
		exec "$@"' e2e_perf "$E2E_TMP/tmp-view" "$ep_inner" "$E2E_TMP" "$PERF" "$@"
}

# e2e_check_stacks FILE PERF_RECORD_ARGS...: the properties the speed work
# must keep, on every capture e2e_record makes (while its perf maps are
# still where the recording left them), in the default mode (Python frames
# merged, Debian perf's libunwind quirks) and in --python=native
# --libdw-unwind (neither trampoline rules nor quirks):
#  - the compiled CFI table unwinds as libdwfl does: `pystitch script
#    --unwinder=table` prints what --unwinder=libdwfl (the reference)
#    prints, with the same exit status (DWARF captures);
#  - unwinding on worker threads changes nothing: --jobs 3 (more than the
#    CI's cores) prints the same bytes with the same exit status and the
#    same messages as --jobs 1.
# Kernel frames depend on neither: an empty kallsyms spares reading
# /proc/kallsyms each time. A test whose captures need options to be read
# gives them in E2E_CHECK_OPTS; one whose captures cannot be checked this
# way sets E2E_NO_STACK_CHECK to the reason.
e2e_check_stacks() {
	cs_data=$1
	shift
	if [ -n "${E2E_NO_STACK_CHECK:-}" ]; then
		e2e_say "stack checks skipped: $E2E_NO_STACK_CHECK"
		return 0
	fi
	cs_dwarf=0
	case " $* " in
	*" --call-graph dwarf"* | *" --call-graph=dwarf"*) cs_dwarf=1 ;;
	esac
	for cs_mode in --python=merged "--python=native --libdw-unwind"; do
		for cs_run in libdwfl-1 table-1 table-3; do
			[ $cs_dwarf = 1 ] || [ $cs_run != libdwfl-1 ] || continue
			# shellcheck disable=SC2086 # option lists split into words
			e2e_run "$PYSTITCH" script -i "$cs_data" $cs_mode --unwinder="${cs_run%-*}" \
				-j "${cs_run#*-}" --kallsyms /dev/null ${E2E_CHECK_OPTS:-} \
				>"$E2E_TMP/check-$cs_run.txt" 2>"$E2E_TMP/check-$cs_run.err"
			echo $? >"$E2E_TMP/check-$cs_run.status"
			sort "$E2E_TMP/check-$cs_run.err" >"$E2E_TMP/check-$cs_run.messages"
		done
		# a capture pystitch cannot read would compare nothing
		if [ "$(cat "$E2E_TMP/check-table-1.status")" != 0 ] || [ ! -s "$E2E_TMP/check-table-1.txt" ]; then
			e2e_show "$E2E_TMP/check-table-1.err"
			e2e_fail "stack check: pystitch script $cs_mode failed on $cs_data (set E2E_NO_STACK_CHECK if that is expected)"
		fi
		if [ $cs_dwarf = 1 ] && { ! cmp -s "$E2E_TMP/check-libdwfl-1.status" "$E2E_TMP/check-table-1.status" ||
			! cmp -s "$E2E_TMP/check-libdwfl-1.txt" "$E2E_TMP/check-table-1.txt"; }; then
			e2e_say "$cs_data $cs_mode: exit status $(cat "$E2E_TMP/check-libdwfl-1.status") with --unwinder=libdwfl, $(cat "$E2E_TMP/check-table-1.status") with the table; first differences (< libdwfl, > table):"
			diff "$E2E_TMP/check-libdwfl-1.txt" "$E2E_TMP/check-table-1.txt" | head -n 20
			e2e_fail "the compiled CFI table unwinds $cs_data differently from libdwfl ($cs_mode)"
		fi
		for cs_part in status txt messages; do
			cmp -s "$E2E_TMP/check-table-1.$cs_part" "$E2E_TMP/check-table-3.$cs_part" && continue
			diff "$E2E_TMP/check-table-1.$cs_part" "$E2E_TMP/check-table-3.$cs_part" | head -n 20
			e2e_fail "pystitch script $cs_mode -j 3 differs from -j 1 ($cs_part) on $cs_data"
		done
	done
	e2e_say "$e2e_name: $(basename "$cs_data"): $(grep -c '^[^ 	]' "$E2E_TMP/check-table-1.txt") samples;$([ $cs_dwarf = 1 ] && echo ' table = libdwfl,') -j 3 = -j 1"
	rm -f "$E2E_TMP"/check-*
}

# e2e_perf_dump FILE [ARGS...]: `perf report -D ARGS` of FILE into
# $E2E_TMP/perf-dump.txt. One line is rewritten: where perf has no "[vdso]"
# DSO from the capture's build-id table (pipe mode, perf record -B), it
# names the vdso after a copy of its own that it writes to a new
# /tmp/perf-vdso.so-XXXXXX on every run (util/vdso.c), which no other
# program can print; pystitch prints "[vdso]" there. E2E_VDSO_COPIES is
# the number of such lines.
e2e_perf_dump() {
	pd_data=$1
	shift
	e2e_run "$PERF" report -D "$@" -i "$pd_data" >"$E2E_TMP/perf-dump.raw" 2>"$E2E_TMP/perf-dump.err" || {
		e2e_show "$E2E_TMP/perf-dump.err"
		e2e_fail "perf report -D $* -i $pd_data failed"
	}
	vdso_copy='^ \.\.\.\.\.\. dso: /tmp/perf-vdso\.so-[A-Za-z0-9]\{6\}$'
	E2E_VDSO_COPIES=$(grep -c "$vdso_copy" "$E2E_TMP/perf-dump.raw")
	sed "s#$vdso_copy# ...... dso: [vdso]#" "$E2E_TMP/perf-dump.raw" >"$E2E_TMP/perf-dump.txt"
	rm -f "$E2E_TMP/perf-dump.raw"
}

# e2e_pystitch_dump FILE [ARGS...]: `pystitch dump ARGS -i FILE` into
# $E2E_TMP/pystitch-dump.txt. Call it after e2e_perf_dump: when pystitch
# fails, where what it printed before failing parts from perf's output is
# shown too.
e2e_pystitch_dump() {
	pd_data=$1
	shift
	e2e_run "$PYSTITCH" dump "$@" -i "$pd_data" >"$E2E_TMP/pystitch-dump.txt" 2>"$E2E_TMP/pystitch-dump.err" || {
		status=$?
		e2e_show "$E2E_TMP/pystitch-dump.err"
		if [ -s "$E2E_TMP/perf-dump.txt" ]; then
			e2e_say "where what pystitch printed before failing parts from perf's output:"
			e2e_first_difference "$E2E_TMP/perf-dump.txt" "$E2E_TMP/pystitch-dump.txt"
		fi
		e2e_fail "pystitch dump $* -i $pd_data failed (exit status $status)"
	}
}

# e2e_first_difference PERF_TEXT PYSTITCH_TEXT: the first lines where the
# two differ (diff's, at most 20), with their line numbers.
e2e_first_difference() {
	diff "$1" "$2" | head -n 20 | cut -c 1-200 | sed 's/^/    /'
}

# e2e_dump_samples TEXT: the number of sample records in a perf report -D
# text (their record lines, after the timestamp columns).
e2e_dump_samples() {
	grep -c -E '^(-?[0-9]+ )*(0x[0-9a-f]+|0) \[0x[0-9a-f]+\]: PERF_RECORD_SAMPLE' "$1"
}

# e2e_strip_hex < TEXT: a perf report -D text without its hex dumps: the
# lines from the "." after each record's first line to the empty line that
# ends the dump. What `pystitch dump --no-hex` leaves out.
e2e_strip_hex() {
	# shellcheck disable=SC2016 # an awk program
	"$AWK" 'skip { if ($0 == "") skip = 0; next }
		first && $0 == "." { skip = 1; first = 0; next }
		{ first = ($0 ~ /^(0x[0-9a-f]+|0)@.* \[0x[0-9a-f]+\]: event: [0-9]+$/); print }'
}

# e2e_compare [LABEL [MIN_SAMPLES]]: perf-dump.txt and pystitch-dump.txt
# must be identical, byte for byte, and hold at least MIN_SAMPLES samples
# (default 1). Returns 0 or 1 (after showing the first differences).
e2e_compare() {
	label=${1:-$e2e_name}
	min=${2:-1}
	samples=$(e2e_dump_samples "$E2E_TMP/perf-dump.txt")
	if ! cmp -s "$E2E_TMP/perf-dump.txt" "$E2E_TMP/pystitch-dump.txt"; then
		e2e_say "$label: pystitch dump differs from perf report -D ($(diff "$E2E_TMP/perf-dump.txt" \
			"$E2E_TMP/pystitch-dump.txt" | grep -c '^[<>]') lines, < perf, > pystitch):"
		e2e_first_difference "$E2E_TMP/perf-dump.txt" "$E2E_TMP/pystitch-dump.txt"
		[ "${PS_E2E_KEEP:-}" = 1 ] ||
			e2e_say "(rerun with PS_E2E_KEEP=1 to keep the capture and both outputs)"
		return 1
	fi
	if [ "$samples" -lt "$min" ]; then
		e2e_say "$label: the capture holds $samples samples, fewer than the $min this test needs"
		return 1
	fi
	vdso_note=
	[ "${E2E_VDSO_COPIES:-0}" = 0 ] ||
		vdso_note=" ($E2E_VDSO_COPIES DSO lines name the vdso where perf names its own copy)"
	e2e_say "$label: $samples samples, $(wc -l <"$E2E_TMP/perf-dump.txt") lines identical to perf report -D$vdso_note"
	return 0
}

# e2e_compare_no_hex FILE [LABEL [ARGS...]]: `pystitch dump --no-hex ARGS
# -i FILE` must be perf-dump.txt without its hex dumps, byte for byte.
e2e_compare_no_hex() {
	nh_data=$1
	nh_label=${2:-$e2e_name}
	if [ $# -gt 1 ]; then shift 2; else shift; fi
	e2e_strip_hex <"$E2E_TMP/perf-dump.txt" >"$E2E_TMP/perf-dump-no-hex.txt"
	e2e_run "$PYSTITCH" dump --no-hex "$@" -i "$nh_data" >"$E2E_TMP/pystitch-no-hex.txt" 2>"$E2E_TMP/pystitch-no-hex.err" || {
		e2e_show "$E2E_TMP/pystitch-no-hex.err"
		e2e_say "$nh_label: pystitch dump --no-hex failed"
		return 1
	}
	if ! cmp -s "$E2E_TMP/perf-dump-no-hex.txt" "$E2E_TMP/pystitch-no-hex.txt"; then
		e2e_say "$nh_label: pystitch dump --no-hex differs from perf report -D without its hex dumps:"
		e2e_first_difference "$E2E_TMP/perf-dump-no-hex.txt" "$E2E_TMP/pystitch-no-hex.txt"
		return 1
	fi
	e2e_say "$nh_label: --no-hex: $(wc -l <"$E2E_TMP/pystitch-no-hex.txt") lines identical to perf's without hex dumps"
	return 0
}

# e2e_compare_dump FILE [LABEL [MIN_SAMPLES [ARGS...]]]: dumps FILE with
# perf report -D ARGS and pystitch dump ARGS, with and without hex dumps,
# and compares them (e2e_compare, e2e_compare_no_hex).
e2e_compare_dump() {
	cd_data=$1
	cd_label=${2:-$e2e_name}
	cd_min=${3:-1}
	if [ $# -ge 3 ]; then shift 3; else shift $#; fi
	e2e_perf_dump "$cd_data" "$@"
	e2e_pystitch_dump "$cd_data" "$@"
	cd_status=0
	e2e_compare "$cd_label" "$cd_min" || cd_status=1
	e2e_compare_no_hex "$cd_data" "$cd_label" "$@" || cd_status=1
	return $cd_status
}

# e2e_count_compressed FILE: walks the records of a native-endian capture
# (file or pipe format) and sets E2E_COMPRESSED (number of
# PERF_RECORD_COMPRESSED records) and E2E_COMPRESSED_FULL (those of 60000
# bytes or more: perf split one flush over several records, so a record
# inside straddles two of them).
# shellcheck disable=SC2046 # od's numbers are split into words on purpose
e2e_count_compressed() {
	set -- "$1" $(od -A n -t u8 -j 8 -N 8 "$1")
	if [ "$2" = 16 ]; then
		offset=16
		end=$(wc -c <"$1")
	else
		set -- "$1" $(od -A n -t u8 -j 40 -N 16 "$1")
		offset=$2
		end=$(($2 + $3))
	fi
	E2E_COMPRESSED=0
	E2E_COMPRESSED_FULL=0
	while [ "$offset" -lt "$end" ]; do
		set -- "$1" $(od -A n -t u4 -j "$offset" -N 8 "$1")
		size=$(($3 >> 16))
		[ "$size" -ge 8 ] || e2e_fail "cannot walk the records of $1 (size $size at offset $offset)"
		if [ "$2" = 81 ]; then
			E2E_COMPRESSED=$((E2E_COMPRESSED + 1))
			[ "$size" -ge 60000 ] && E2E_COMPRESSED_FULL=$((E2E_COMPRESSED_FULL + 1))
		fi
		offset=$((offset + size))
	done
}

# e2e_compare_info FILE LABEL [ARGS...]: `pystitch info ARGS` must print
# byte for byte what `perf report --header-only ARGS` prints (ARGS: -I or
# nothing); on a difference the diff (< perf, > pystitch) goes to stderr.
# Both read the same file, so even "captured on" (its mtime) agrees.
# Returns 1 when they differ.
e2e_compare_info() {
	ci_data=$1
	ci_label=$2
	shift 2
	e2e_run "$PERF" report --header-only "$@" -i "$ci_data" >"$E2E_TMP/perf-header.txt" \
		2>"$E2E_TMP/perf-header.err" || {
		e2e_show "$E2E_TMP/perf-header.err"
		e2e_fail "perf report --header-only $* -i $ci_data failed"
	}
	e2e_run "$PYSTITCH" info "$@" -i "$ci_data" >"$E2E_TMP/pystitch-info.txt" \
		2>"$E2E_TMP/pystitch-info.err" || {
		ci_status=$?
		e2e_show "$E2E_TMP/pystitch-info.err"
		e2e_fail "pystitch info $* -i $ci_data failed (exit status $ci_status)"
	}
	ci_args=${*:-}
	if cmp -s "$E2E_TMP/perf-header.txt" "$E2E_TMP/pystitch-info.txt"; then
		e2e_say "$e2e_name: $ci_label: info${ci_args:+ $ci_args} = perf report --header-only${ci_args:+ $ci_args} ($(wc -l <"$E2E_TMP/perf-header.txt") lines)"
		return 0
	fi
	e2e_say "FAIL: $e2e_name: $ci_label: pystitch info${ci_args:+ $ci_args} differs from perf report --header-only${ci_args:+ $ci_args} (< perf, > pystitch):" >&2
	diff "$E2E_TMP/perf-header.txt" "$E2E_TMP/pystitch-info.txt" | head -n 40 >&2
	return 1
}

# ---- perf script comparisons (the script_*.sh tests) ---------------------

# e2e_perf_script OUTPUT ARGS...: `perf script ARGS` into $E2E_TMP/OUTPUT.
e2e_perf_script() {
	out=$1
	shift
	e2e_perf script "$@" >"$E2E_TMP/$out" 2>"$E2E_TMP/$out.err" || {
		e2e_show "$E2E_TMP/$out.err"
		e2e_fail "perf script $* failed"
	}
}

# e2e_pystitch_script OUTPUT ARGS...: `pystitch script ARGS` into
# $E2E_TMP/OUTPUT, looking in the build-id cache perf uses here (see
# e2e_setup), so both read the same copies (the vdso is only found there).
# Runs pystitch with stdin from the file E2E_STDIN when that is not empty.
e2e_pystitch_script() {
	out=$1
	shift
	set -- --buildid-dir "$E2E_TMP/buildid-cache" "$@"
	if [ -n "${E2E_STDIN:-}" ]; then
		e2e_run "$PYSTITCH" script "$@" <"$E2E_STDIN" >"$E2E_TMP/$out" 2>"$E2E_TMP/$out.err"
	else
		e2e_run "$PYSTITCH" script "$@" >"$E2E_TMP/$out" 2>"$E2E_TMP/$out.err"
	fi || {
		status=$?
		e2e_show "$E2E_TMP/$out.err"
		e2e_fail "pystitch script $* failed (exit status $status)"
	}
}

# e2e_compare_script LABEL PERF_OUTPUT PYSTITCH_OUTPUT [AWK_ASSIGNMENTS...]:
# compares two outputs in $E2E_TMP with compare_script.awk (which prints
# "TEST: LABEL: N samples, P% identical"); returns its status.
e2e_compare_script() {
	label=$1
	perf_out=$2
	pystitch_out=$3
	shift 3
	(cd "$E2E_TMP" && "$AWK" -v name="$e2e_name: $label" "$@" \
		-f "$e2e_dir/compare_script.awk" "$perf_out" "$pystitch_out")
	status=$?
	if [ $status -ne 0 ] && [ "${PS_E2E_KEEP:-}" != 1 ]; then
		e2e_say "(rerun with PS_E2E_KEEP=1 to keep the captures and both outputs)"
	fi
	return $status
}

# e2e_script_diff LABEL MIN_PERCENT FILE [SCRIPT_ARGS...]: runs
# `perf script -i FILE SCRIPT_ARGS` and `pystitch script -i FILE
# SCRIPT_ARGS` and fails the comparison when fewer than MIN_PERCENT of the
# samples are identical. E2E_MIN_SAMPLES (default 1) is the least number of
# samples the comparison accepts; E2E_BY_COMM=1 adds a line per program
# (command name) and holds each program to MIN_PERCENT too. The outputs
# stay in $E2E_TMP under the names in E2E_PERF_OUT and E2E_PYSTITCH_OUT.
# Returns the comparison's status.
e2e_script_diff() {
	label=$1
	min=$2
	data=$3
	shift 3
	tag=$(printf '%s' "$label" | tr -c 'A-Za-z0-9_.-' '_')
	E2E_PERF_OUT=perf-$tag.txt
	E2E_PYSTITCH_OUT=pystitch-$tag.txt
	e2e_perf_script "$E2E_PERF_OUT" -i "$data" "$@"
	e2e_pystitch_script "$E2E_PYSTITCH_OUT" -i "$data" "$@"
	e2e_compare_script "$label" "$E2E_PERF_OUT" "$E2E_PYSTITCH_OUT" \
		-v min_identical="$min" -v min_samples="${E2E_MIN_SAMPLES:-1}" \
		-v by_comm="${E2E_BY_COMM:-0}"
}

# e2e_program_sequence SECONDS PROGRAM...: a shell command (for
# `perf record -- /bin/sh -c`) that runs each of tests/programs/PROGRAM for
# SECONDS of CPU time, one after the other, stopping at the first failure.
e2e_program_sequence() {
	seconds=$1
	shift
	sequence="set -e"
	for program in "$@"; do
		sequence="$sequence; '$E2E_PROGRAMS/$program' $seconds"
	done
	printf '%s\n' "$sequence"
}

# e2e_expect_programs OUTPUT MIN PROGRAM...: fails unless perf's script
# output $E2E_TMP/OUTPUT holds at least MIN samples of each PROGRAM (so a
# program that did not run cannot pass unnoticed).
e2e_expect_programs() {
	out=$1
	min=$2
	shift 2
	for program in "$@"; do
		# shellcheck disable=SC2016 # an awk program
		count=$("$AWK" -v comm="$program" '/^[^\t ]/ && $1 == comm { n++ } END { print n + 0 }' \
			"$E2E_TMP/$out")
		[ "$count" -ge "$min" ] ||
			e2e_fail "$program has $count samples in the capture (at least $min expected)"
	done
}

# e2e_record_python FILE PERF_RECORD_ARGS...: e2e_record of a Python
# workload; the trap (e2e_python_cleanup) knows FILE while it records, and
# its process's maps are the test's own once it is recorded.
e2e_record_python() {
	E2E_PY_DATA=$1
	e2e_record "$@"
	e2e_python_forget "$(e2e_python_pid "$1")"
}

# e2e_find_pythons: sets pythons to the newest CPython 3.12.N and 3.13.N
# under pyenv's versions directory (e2e_newest_python) and the paths in
# PS_E2E_PYTHONS, saying which of the two is missing; SKIP when none.
e2e_find_pythons() {
	pythons=
	for ef_minor in 12 13; do
		if ef_found=$(e2e_newest_python "$ef_minor"); then
			pythons="$pythons $ef_found"
		else
			e2e_say "$e2e_name: no CPython 3.$ef_minor under \$(pyenv root)/versions (or ~/.pyenv/versions)"
		fi
	done
	pythons="$pythons ${PS_E2E_PYTHONS:-}"
	[ -n "$(printf '%s' "$pythons" | tr -d ' ')" ] ||
		e2e_skip "no CPython 3.12+ found under \$(pyenv root)/versions/3.1[23].* or ~/.pyenv/versions (set PS_E2E_PYTHONS)"
}

# e2e_chains LABEL EXPECTED OUTPUT [CHECKER_ARGS...]: pychains_check.py,
# run with $python (the interpreter under test), holds $E2E_TMP/OUTPUT to
# the chains the workload wrote to EXPECTED: at least 99% of at least
# $min_samples samples exactly right. Prints its figures, adds them to
# $summary, and sets failed=1 when the check fails.
# shellcheck disable=SC2154,SC2034 # python, min_samples, failed: the test's
e2e_chains() {
	ec_label=$1
	ec_expected=$2
	ec_output=$3
	shift 3
	ec_line=$("$python" "$e2e_dir/pychains_check.py" --label "$ec_label" --min 99 \
		--min-samples "$min_samples" "$@" "$ec_expected" "$E2E_TMP/$ec_output" \
		2>"$E2E_TMP/$ec_output.check") || {
		failed=1
		ec_line="$ec_line; FAIL"
	}
	e2e_say "$ec_line"
	e2e_show "$E2E_TMP/$ec_output.check" 60
	summary="$summary
$ec_line"
}

# e2e_newest_python MINOR: prints the newest CPython 3.MINOR.N under pyenv's
# versions directory (`pyenv root`, else $PYENV_ROOT, else ~/.pyenv), as
# its bin/python3; release builds only (no rc, -dev or free-threaded t).
# Fails when there is none.
e2e_newest_python() {
	for e2e_root in "$(pyenv root 2>/dev/null)" "${PYENV_ROOT:-}" "${HOME:-/nonexistent}/.pyenv"; do
		if [ -z "$e2e_root" ] || [ ! -d "$e2e_root/versions" ]; then
			continue
		fi
		e2e_best=
		e2e_best_patch=-1
		for e2e_candidate in "$e2e_root"/versions/3."$1".*/bin/python3; do
			[ -x "$e2e_candidate" ] || continue
			e2e_patch=${e2e_candidate#"$e2e_root"/versions/3."$1".}
			e2e_patch=${e2e_patch%%/*}
			case $e2e_patch in
			'' | *[!0-9]*) continue ;;
			esac
			if [ "$e2e_patch" -gt "$e2e_best_patch" ]; then
				e2e_best=$e2e_candidate
				e2e_best_patch=$e2e_patch
			fi
		done
		if [ -n "$e2e_best" ]; then
			printf '%s\n' "$e2e_best"
			return 0
		fi
	done
	return 1
}

# CPython tests: the maps and jitdumps CPython writes to /tmp go when the
# test ends. Set E2E_PY_DATA to a capture before recording it (a failed
# run's pid is taken from it), call e2e_python_forget PID once the pid is
# known, and install `trap e2e_python_cleanup EXIT`.
E2E_PY_DATA=
E2E_PY_LEFTOVERS=
e2e_python_pid() {
	"$PERF" script -i "$1" -F pid 2>/dev/null | sed -n '1s/ //gp'
}
e2e_python_forget() {
	# the files e2e_keep_maps took are gone from /tmp: what is there now
	# under that pid belongs to another process
	case $E2E_KEPT_PIDS in
	*" $1 "*) ;;
	*) E2E_PY_LEFTOVERS="$E2E_PY_LEFTOVERS /tmp/perf-$1.map /tmp/jit-$1.dump /tmp/perf-$1.pylines" ;;
	esac
	E2E_PY_DATA=
}
# shellcheck disable=SC2317 # called by the trap
e2e_python_cleanup() {
	if [ -n "$E2E_PY_DATA" ] && [ -s "$E2E_PY_DATA" ]; then
		e2e_py_pid=$(e2e_python_pid "$E2E_PY_DATA")
		[ -n "$e2e_py_pid" ] && e2e_python_forget "$e2e_py_pid"
	fi
	for e2e_py_file in $E2E_PY_LEFTOVERS; do
		rm -f "$e2e_py_file"
	done
	e2e_cleanup
}
