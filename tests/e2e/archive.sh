#!/bin/sh
# archive: `pystitch archive` packs a capture with every file its analysis
# reads; every command then reads the archive with -i in a fresh directory,
# with the originals out of reach (the test program and its shared library
# renamed, the build-id cache moved, HOME and --symfs pointing nowhere, the
# perf map moved out of /tmp), and must print byte for byte what it
# printed on the original capture: script (merged, native, +srcline),
# collapse, info, dump, pprof and flamegraph on tests/programs/shlib (with
# its own libpsworker.so) under --call-graph dwarf; script (merged, native,
# all, only, --no-inline), collapse, pprof and info on
# tests/programs/pychains.py, run by the newest CPython 3.12 under pyenv
# with -X perf. libpsworker.so's symbols are split off into a separate
# debug file. Each capture is archived twice: with
# --with-debuginfo, and without, when the archive carries the symbol
# answers of the debug files (libpsworker.so's, and libc's where
# libc6-dbg is installed) in their place; both must give the same. Then
# hostile archives built from a good one by archive_hostile.py (path
# traversal, an absolute name, a symbolic link, a member larger than the
# manifest says, a changed byte, a member the manifest does not list, a cut
# archive) must each fail with exit status 2, one line on stderr, nothing on stdout, and
# nothing written outside the private directory, which is removed; a
# damaged table of symbol answers whose manifest line matches it gives one
# warning with its offset. A FIFO where the perf map was is left out with a
# warning, not waited on.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
trap e2e_python_cleanup EXIT
failed=0
mkdir "$E2E_TMP/fresh" "$E2E_TMP/tmp" "$E2E_TMP/home" || e2e_fail "cannot make directories"

# archive DATA OUT [ARGS...]: `pystitch archive`, timed, warnings kept in OUT.err.
archive() {
	ar_data=$1
	ar_out=$2
	shift 2
	ar_start=$(date +%s.%N)
	e2e_run "$PYSTITCH" archive --buildid-dir "$E2E_TMP/buildid-cache" -i "$ar_data" -o "$ar_out" "$@" \
		>"$ar_out.out" 2>"$ar_out.err" || {
		ar_status=$?
		e2e_show "$ar_out.err"
		e2e_fail "pystitch archive -i $ar_data $* failed (exit status $ar_status)"
	}
	# shellcheck disable=SC2016 # an awk program
	e2e_say "$e2e_name: $(cat "$ar_out.out") in $(echo "$(date +%s.%N) $ar_start" | "$AWK" '{ printf "%.2f", $1 - $2 }') s $*"
}

# The commands compared (the Python capture: the first three).
commands='script|script --python=native|info -P|collapse|script -F +srcline|dump|pprof -o -|flamegraph -o -'
ncommands=8

# outputs LABEL INPUT [ARGS...]: the output of each command on INPUT into
# $E2E_TMP/LABEL/, run in the current directory.
outputs() {
	ou_label=$1
	ou_input=$2
	shift 2
	mkdir -p "$E2E_TMP/$ou_label"
	ou_saved_ifs=$IFS
	IFS='|'
	# shellcheck disable=SC2086 # split at '|' on purpose
	set -- "$@" -- $commands
	IFS=$ou_saved_ifs
	ou_args=
	while [ "$1" != -- ]; do
		ou_args="$ou_args $1"
		shift
	done
	shift
	ou_n=0
	for ou_command in "$@"; do
		ou_n=$((ou_n + 1))
		[ $ou_n -le $ncommands ] || break
		ou_file=$E2E_TMP/$ou_label/$(echo "$ou_command" | tr ' =+' '___').txt
		# shellcheck disable=SC2086 # the command and its options split on purpose
		e2e_run "$PYSTITCH" $ou_command -i "$ou_input" $ou_args >"$ou_file" 2>"$ou_file.err" || {
			e2e_show "$ou_file.err"
			e2e_fail "$ou_label: pystitch $ou_command -i $ou_input failed"
		}
	done
}

# same ORIGINAL ARCHIVED: every output of the two labels is identical.
same() {
	for sa_file in "$E2E_TMP/$1"/*.txt; do
		sa_name=${sa_file#"$E2E_TMP/$1/"}
		sa_other=$E2E_TMP/$2/$sa_name
		if cmp -s "$sa_file" "$sa_other"; then
			e2e_say "$e2e_name: $2: $sa_name: $(wc -l <"$sa_file") lines identical"
		else
			e2e_say "$e2e_name: $2: $sa_name differs (< original, > archive):"
			diff "$sa_file" "$sa_other" | cut -c 1-200 | head -n 8 | sed 's/^/    /'
			failed=1
		fi
	done
}

# hidden LABEL ARCHIVE: the outputs of ARCHIVE with the originals away.
hidden() {
	mv "$E2E_TMP/buildid-cache" "$E2E_TMP/buildid-cache.away" || e2e_fail "cannot move the build-id cache"
	(cd "$E2E_TMP/fresh" && HOME=$E2E_TMP/home TMPDIR=$E2E_TMP/tmp &&
		export HOME TMPDIR && outputs "$1" "$2" --symfs /nonexistent --buildid-dir /nonexistent)
	mv "$E2E_TMP/buildid-cache.away" "$E2E_TMP/buildid-cache" || e2e_fail "cannot restore the build-id cache"
	[ -z "$(ls -A "$E2E_TMP/tmp")" ] || e2e_fail "$1: files left in TMPDIR: $(ls "$E2E_TMP/tmp")"
	# killed while reading (SIGPIPE from head, SIGKILL): still nothing left,
	# as the unpacked files are unlinked and held by descriptor
	TMPDIR=$E2E_TMP/tmp "$PYSTITCH" script -i "$2" | head -n 1 >/dev/null
	TMPDIR=$E2E_TMP/tmp "$PYSTITCH" script -i "$2" >/dev/null &
	sleep 0.3
	kill -KILL $! 2>/dev/null
	wait $! 2>/dev/null
	[ -z "$(ls -A "$E2E_TMP/tmp")" ] || e2e_fail "$1: a killed reader left files in TMPDIR: $(ls "$E2E_TMP/tmp")"
}

# ---- native capture: a program and its shared library, both out of reach later
mkdir "$E2E_TMP/prog" || e2e_fail "cannot make a directory"
cp "$E2E_PROGRAMS/shlib" "$E2E_PROGRAMS/libpsworker.so" "$E2E_TMP/prog/" || e2e_fail "cannot copy shlib"
# the library's symbols and DWARF go to a separate debug file found through
# .gnu_debuglink, as distributions ship them: its static functions are
# named only by that file
(cd "$E2E_TMP/prog" && objcopy --only-keep-debug libpsworker.so libpsworker.so.debug &&
	objcopy --strip-all --add-gnu-debuglink=libpsworker.so.debug libpsworker.so) ||
	e2e_fail "cannot split libpsworker.so's debug file off"
LD_LIBRARY_PATH=$E2E_TMP/prog e2e_record "$E2E_TMP/native.data" -F 999 --call-graph dwarf -- "$E2E_TMP/prog/shlib" 0.3
outputs native "$E2E_TMP/native.data" --buildid-dir "$E2E_TMP/buildid-cache"
grep -q 'libpsworker.so' "$E2E_TMP/native/script.txt" || e2e_fail "no frame in the copied libpsworker.so"
grep -q 'compare_doubles+0x[0-9a-f]* (.*/libpsworker.so)' "$E2E_TMP/native/script.txt" ||
	e2e_fail "libpsworker.so's static compare_doubles is not named (from its debug file)"
archive "$E2E_TMP/native.data" "$E2E_TMP/native.pst" --with-debuginfo
archive "$E2E_TMP/native.data" "$E2E_TMP/native-nodebug.pst" -v
grep -q "archive: debuginfo .*/prog/libpsworker.so.debug\$" "$E2E_TMP/native-nodebug.pst.err" &&
	e2e_fail "the debug file was packed without --with-debuginfo"
grep -q "archive: names .*/prog/libpsworker.so.debug\$" "$E2E_TMP/native-nodebug.pst.err" ||
	e2e_fail "no symbol answers packed in place of libpsworker.so.debug"
e2e_say "$e2e_name: sizes: $(wc -c <"$E2E_TMP/native.pst") bytes with debug files, $(wc -c <"$E2E_TMP/native-nodebug.pst") bytes with their answers ($(grep -c 'archive: names ' "$E2E_TMP/native-nodebug.pst.err") files)"
grep -q "elf .*/prog/libpsworker.so" "$E2E_TMP/native.pst.err" &&
	e2e_fail "a file was listed without -v"
mv "$E2E_TMP/prog" "$E2E_TMP/prog.away" || e2e_fail "cannot move the program away"
hidden native-archive "$E2E_TMP/native.pst"
same native native-archive
# without --with-debuginfo, the answers of the debug files replace them:
# the output is the same
hidden native-nodebug "$E2E_TMP/native-nodebug.pst"
same native native-nodebug
for f in "$E2E_TMP"/native-nodebug/*.err; do
	[ ! -s "$f" ] || {
		e2e_show "$f"
		e2e_fail "native-nodebug: a warning reading the archive (${f##*/})"
	}
done

# ---- hostile archives ----------------------------------------------------
python3 "$e2e_dir/archive_hostile.py" "$E2E_TMP/native-nodebug.pst" "$E2E_TMP" "$E2E_TMP/abs-evil" ||
	e2e_fail "archive_hostile.py failed"
for attack in traversal absolute symlink oversized digest unlisted truncated damaged unrecognized; do
	(cd "$E2E_TMP/fresh" && TMPDIR=$E2E_TMP/tmp e2e_run "$PYSTITCH" script -i "$E2E_TMP/$attack.pst" \
		>"$E2E_TMP/$attack.out" 2>"$E2E_TMP/$attack.err")
	status=$?
	lines=$(wc -l <"$E2E_TMP/$attack.err")
	# (the man page promises the entry and its offset in every message)
	if [ $status != 2 ] || [ "$lines" != 1 ] || [ -s "$E2E_TMP/$attack.out" ] ||
		! grep -q "^pystitch: $E2E_TMP/$attack.pst: " "$E2E_TMP/$attack.err" ||
		! grep -q -E "entry .*at offset [0-9]+" "$E2E_TMP/$attack.err"; then
		e2e_show "$E2E_TMP/$attack.err"
		e2e_say "$e2e_name: $attack: exit status $status, $lines lines on stderr (2 and one line naming the archive expected)"
		failed=1
	else
		e2e_say "$e2e_name: $attack: $(cat "$E2E_TMP/$attack.err")"
	fi
	[ -z "$(ls -A "$E2E_TMP/tmp")" ] || e2e_fail "$attack: files left in TMPDIR: $(ls "$E2E_TMP/tmp")"
done
# a damaged table of symbol answers with a manifest that matches it: the
# table's own checks refuse it in one warning naming the file and the
# offset, and its library is named from its own symbols
[ -f "$E2E_TMP/names.pst" ] || e2e_fail "archive_hostile.py made no damaged names table"
(cd "$E2E_TMP/fresh" && TMPDIR=$E2E_TMP/tmp e2e_run "$PYSTITCH" script -i "$E2E_TMP/names.pst" \
	>"$E2E_TMP/names.out" 2>"$E2E_TMP/names.err") || {
	e2e_show "$E2E_TMP/names.err"
	e2e_fail "names: the damaged table stopped the run"
}
if [ "$(grep -c 'offset 56: fewer records than the address line says' "$E2E_TMP/names.err")" != 1 ] ||
	[ "$(wc -l <"$E2E_TMP/names.err")" != 1 ] || [ ! -s "$E2E_TMP/names.out" ]; then
	e2e_show "$E2E_TMP/names.err"
	e2e_fail "names: one warning with the offset expected, and the output"
fi
e2e_say "$e2e_name: names: $(cat "$E2E_TMP/names.err")"
for evil in "$E2E_TMP/evil" "$E2E_TMP/abs-evil" "$E2E_TMP/fresh/evil" "$E2E_TMP/evil"; do
	[ ! -e "$evil" ] || e2e_fail "a hostile archive wrote $evil"
done
# an archive is not archived again, and stdin cannot be archived
"$PYSTITCH" archive -i "$E2E_TMP/native.pst" -o "$E2E_TMP/again.pst" 2>"$E2E_TMP/again.err" &&
	e2e_fail "an archive was archived again"
[ ! -e "$E2E_TMP/again.pst" ] || e2e_fail "archiving an archive left $E2E_TMP/again.pst"
[ "${PS_E2E_KEEP:-}" = 1 ] || rm -f "$E2E_TMP"/native*.data "$E2E_TMP"/*.pst

# ---- Python capture: the perf map moved out of /tmp
python=$(e2e_newest_python 12) || {
	[ $failed = 0 ] || exit 1
	e2e_skip "no CPython 3.12 under \$(pyenv root)/versions (or ~/.pyenv/versions): archives of Python captures not tested"
}
e2e_say "$e2e_name: python: $python"
py_data=$E2E_TMP/python.data
E2E_PY_DATA=$py_data
e2e_record "$py_data" -F 999 --call-graph dwarf,16384 -- \
	"$python" -X perf "$e2e_dir/../programs/pychains.py" 1 "$E2E_TMP/python.expected"
py_pid=$(sed -n 's/^threads \([0-9]*\).*/\1/p' "$E2E_TMP/python.expected" 2>/dev/null)
[ -n "$py_pid" ] || py_pid=$(e2e_python_pid "$py_data")
e2e_python_forget "$py_pid"
commands='script|script --python=native|info -P|script --python=all|script --python=only|script --no-inline|collapse|pprof -o -'
ncommands=8
outputs python "$py_data" --buildid-dir "$E2E_TMP/buildid-cache"
grep -q 'py::' "$E2E_TMP/python/script.txt" || e2e_fail "python: no py:: frame"
archive "$py_data" "$E2E_TMP/python.pst" --with-debuginfo -v
archive "$py_data" "$E2E_TMP/python-nodebug.pst" -v
grep -q "no perf-$py_pid.map" "$E2E_TMP/python.pst.err" &&
	e2e_fail "python: the perf map was reported missing"
# every debug file the first packs, the second replaces by its answers
# (libc's, libm's and ld.so's where libc6-dbg is installed)
py_debug=$(grep -c 'archive: debuginfo ' "$E2E_TMP/python.pst.err")
py_names=$(grep -c 'archive: names ' "$E2E_TMP/python-nodebug.pst.err")
[ "$py_debug" = "$py_names" ] ||
	e2e_fail "python: $py_debug debug files packed with --with-debuginfo, $py_names replaced by their answers without"
[ "$py_debug" = 0 ] ||
	e2e_say "$e2e_name: python: $py_debug separate debug files, each replaced by its answers without --with-debuginfo"
[ "$py_debug" != 0 ] ||
	e2e_say "$e2e_name: python: no separate debug files here (libc6-dbg not installed): both archives hold the same files"
mv "$E2E_TMP/perf-$py_pid.map" "$E2E_TMP/perf-map.away" || e2e_fail "no perf-$py_pid.map beside the capture"
hidden python-archive "$E2E_TMP/python.pst"
same python python-archive
hidden python-nodebug "$E2E_TMP/python-nodebug.pst"
same python python-nodebug
# a FIFO in the perf map's place: not opened blocking, not packed
mkfifo "$E2E_TMP/perf-$py_pid.map" || e2e_fail "cannot make a FIFO"
if timeout 120 "$PYSTITCH" archive -i "$py_data" -o "$E2E_TMP/fifo.pst" >"$E2E_TMP/fifo.out" \
	2>"$E2E_TMP/fifo.err" </dev/null &&
	grep -q "archive: .*perf-$py_pid.map: not a regular file, left out" "$E2E_TMP/fifo.err"; then
	e2e_say "$e2e_name: a FIFO as the perf map: left out, archive written"
else
	e2e_show "$E2E_TMP/fifo.err"
	e2e_say "$e2e_name: a FIFO as the perf map: archive failed, hung or said nothing"
	failed=1
fi
rm -f "$E2E_TMP/perf-$py_pid.map"
exit $failed
