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
#  - errors: a folder without "data", a data.N cut short (named, with the
#    offset), and archive, which does not pack folders, each say so in one
#    line and fail.
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
e2e_script_diff "--threads -a -g" 99.5 "$E2E_TMP/all.data" || failed=1

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
e2e_run "$PYSTITCH" archive -i "$E2E_TMP/core.data" -o "$E2E_TMP/core.pst" >/dev/null 2>"$E2E_TMP/archive.err" &&
	e2e_fail "archive packed a folder"
grep -q 'is a folder' "$E2E_TMP/archive.err" || e2e_fail "archive of a folder: $(cat "$E2E_TMP/archive.err")"
[ ! -e "$E2E_TMP/core.pst" ] || e2e_fail "archive of a folder left $E2E_TMP/core.pst"
e2e_say "errors: a folder without a header file, a data.N file cut short and archive each fail in one line"
exit $failed
