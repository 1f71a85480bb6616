#!/bin/sh
# script_threads_folder: captures `perf record --threads` writes as a folder
# (a header file "data" and one file of records per recording thread,
# data.0, data.1, ...), read as perf reads them: the header file's records,
# then each data.N in turn, 2 MB at a time, all sorted by time.
#  - script: DWARF stacks large enough that each file takes several turns,
#    -z compressed frame-pointer stacks, a whole machine's -g capture and
#    --threads=core: each sample identical to perf script's, with --jobs 2
#    too;
#  - dump: identical to perf report -D, hex dumps included (each record
#    named by the file it was read from, offsets within it);
#  - info: identical to perf report --header-only (DIR_FORMAT's version,
#    the header file's time), with -I;
#  - archive: the folder's files packed in the order they were read; from
#    the archive, with the folder renamed away, script (--jobs 1 and 2),
#    info and dump print what they print from the folder;
#  - errors: a folder without "data" and a data.N cut short (named, with
#    the offset) each say so in one line and fail.
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0
E2E_MIN_SAMPLES=100

# record NAME ARGS...: perf record --threads ARGS into $E2E_TMP/NAME.data
# (a folder), which must hold data files beside its header file
record() {
	rt_name=$1
	shift
	e2e_record "$E2E_TMP/$rt_name.data" "$@"
	if [ ! -d "$E2E_RECORDED" ] || [ ! -f "$E2E_RECORDED/data" ]; then
		e2e_fail "$rt_name: perf record --threads wrote no folder with a header file"
	fi
	rt_files=$(find "$E2E_RECORDED" -name 'data.*' -size +0 | wc -l)
	[ "$rt_files" -ge 1 ] || e2e_fail "$rt_name: no data.N file with records in $E2E_RECORDED"
	e2e_say "$rt_name: $(du -sk "$E2E_RECORDED" | cut -f1) KB, $rt_files data.N files"
}

# DWARF stacks: some files hold more than 2 MB, read in several turns
record dwarf --threads --call-graph dwarf -F 2000 -- "$E2E_PROGRAMS/threads" 0.4 3
big=$(find "$E2E_RECORDED" -name 'data.*' -size +2048k | wc -l)
[ "$big" -ge 1 ] || e2e_fail "dwarf: no data.N file over 2 MB (each would be read in one turn)"
e2e_script_diff "--threads, DWARF" 100 "$E2E_TMP/dwarf.data" || failed=1
e2e_pystitch_script jobs2.txt -i "$E2E_TMP/dwarf.data" --jobs 2
if cmp -s "$E2E_TMP/$E2E_PERF_OUT" "$E2E_TMP/jobs2.txt"; then
	e2e_say "--threads, DWARF: --jobs 2 prints perf script's text too"
else
	e2e_say "FAIL: --threads, DWARF: --jobs 2 differs from perf script"
	failed=1
fi
e2e_compare_info "$E2E_TMP/dwarf.data" "--threads, DWARF" || failed=1
e2e_compare_info "$E2E_TMP/dwarf.data" "--threads, DWARF" -I || failed=1

record z --threads -z -g -- "$E2E_PROGRAMS/threads" 0.3 3
e2e_script_diff "--threads -z -g" 100 "$E2E_TMP/z.data" || failed=1
e2e_compare_dump "$E2E_TMP/z.data" "--threads -z -g dump" 100 || failed=1

record core --threads=core -g -F 4000 -- "$E2E_PROGRAMS/threads" 0.3 3
e2e_script_diff "--threads=core -g" 100 "$E2E_TMP/core.data" || failed=1
e2e_compare_dump "$E2E_TMP/core.data" "--threads=core -g dump" 100 || failed=1

record all --threads -a -g -- "$E2E_PROGRAMS/threads" 0.3 3
# --python=native: the other modes print the Python processes of whoever
# else runs on the machine as Python stacks, as they should
e2e_perf_script perf-all.txt -i "$E2E_TMP/all.data"
e2e_pystitch_script pystitch-all.txt -i "$E2E_TMP/all.data" --python=native
e2e_compare_script "--threads -a -g" perf-all.txt pystitch-all.txt -v min_identical=99.5 ||
	failed=1

# errors
mkdir "$E2E_TMP/empty.data"
e2e_run "$PYSTITCH" script -i "$E2E_TMP/empty.data" >/dev/null 2>"$E2E_TMP/empty.err" &&
	e2e_fail "a folder without a header file was read"
grep -q 'a folder without a header file "data"' "$E2E_TMP/empty.err" ||
	e2e_fail "a folder without a header file: $(cat "$E2E_TMP/empty.err")"
cp -R "$E2E_TMP/core.data" "$E2E_TMP/cut.data"
cut_file=$(find "$E2E_TMP/cut.data" -name 'data.*' -size +0 | head -n 1)
cut_size=$(wc -c <"$cut_file")
truncate -s $((cut_size - 20)) "$cut_file"
e2e_run "$PYSTITCH" script -i "$E2E_TMP/cut.data" >/dev/null 2>"$E2E_TMP/cut.err" &&
	e2e_fail "a data.N file cut short was read without an error"
if [ "$(wc -l <"$E2E_TMP/cut.err")" != 1 ] ||
	! grep -q "^pystitch: $cut_file: offset 0x[0-9a-f]*: " "$E2E_TMP/cut.err"; then
	e2e_fail "a data.N file cut short: not one line naming it and the offset: $(cat "$E2E_TMP/cut.err")"
fi
e2e_say "errors: a folder without a header file and a data.N file cut short each fail in one line"

# archive NAME: NAME.data packed; each command prints the same from the
# archive, the folder away, as from the folder
archive_check() {
	ac_dir="$E2E_TMP/$1.data"
	ac_pst="$E2E_TMP/$1.pst"
	ac_cache="$E2E_TMP/buildid-cache"
	e2e_run "$PYSTITCH" archive --buildid-dir "$ac_cache" -i "$ac_dir" -o "$ac_pst" \
		>/dev/null 2>"$E2E_TMP/$1.archive.err" ||
		e2e_fail "archive of the $1 folder: $(cat "$E2E_TMP/$1.archive.err")"
	ac_streams=$(find "$ac_dir" -name 'data.*' -size +0 | wc -l)
	ac_listed=$(tar --zstd -xOf "$ac_pst" MANIFEST | grep -c '^file perf.data ')
	[ "$ac_listed" = $((ac_streams + 1)) ] ||
		e2e_fail "archive of the $1 folder lists $ac_listed perf.data files, not data and $ac_streams data.N"
	for ac_cmd in "script" "script --jobs 2" "info" "dump"; do
		# shellcheck disable=SC2086 # the command and its option
		e2e_run "$PYSTITCH" $ac_cmd --buildid-dir "$ac_cache" -i "$ac_dir" \
			>"$E2E_TMP/$1.folder.out" 2>&1 || e2e_fail "$ac_cmd on the $1 folder failed"
		mv "$ac_dir" "$ac_dir.away"
		# shellcheck disable=SC2086
		e2e_run "$PYSTITCH" $ac_cmd --buildid-dir "$ac_cache" -i "$ac_pst" \
			>"$E2E_TMP/$1.archive.out" 2>&1
		ac_rc=$?
		mv "$ac_dir.away" "$ac_dir"
		[ "$ac_rc" = 0 ] || e2e_fail "$ac_cmd on the archive of $1 failed: $(head -3 "$E2E_TMP/$1.archive.out")"
		if ! cmp -s "$E2E_TMP/$1.folder.out" "$E2E_TMP/$1.archive.out"; then
			diff "$E2E_TMP/$1.folder.out" "$E2E_TMP/$1.archive.out" | head -5
			e2e_fail "$ac_cmd prints other text from the archive of $1 than from the folder"
		fi
	done
	e2e_say "archive of $1: data and $ac_streams data.N files; script, info and dump print the same as from the folder"
}
archive_check dwarf
archive_check core
exit $failed
