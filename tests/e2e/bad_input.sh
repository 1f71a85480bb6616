#!/bin/sh
# bad_input: damaged captures (cut short, hostile sizes, garbage, corrupt
# zstd) each give exactly one line on stderr naming the file, the byte
# offset and what is wrong, and exit status 2; with --force, what comes
# before a damaged tail is still printed and the exit status is 0.
# Built from the committed fixtures, so no perf is needed.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
fixtures=${abs_top_srcdir:-$e2e_dir/../..}/fixtures
[ -x "$PYSTITCH" ] || e2e_fail "no pystitch binary at $PYSTITCH"
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-$e2e_name.XXXXXX") || e2e_fail "mktemp"
trap e2e_cleanup EXIT
cases=0

# expect_bad FILE PATTERN [COMMAND]: exit 2, one stderr line naming FILE and
# an offset and matching PATTERN (an extended regex)
expect_bad() {
	file=$1 pattern=$2 command=${3:-dump}
	e2e_run "$PYSTITCH" "$command" -i "$file" >"$E2E_TMP/out" 2>"$E2E_TMP/err"
	status=$?
	[ "$status" -eq 2 ] || { e2e_show "$E2E_TMP/err"; e2e_fail "$file ($command): exit status $status, expected 2"; }
	lines=$(wc -l <"$E2E_TMP/err")
	[ "$lines" -eq 1 ] || { e2e_show "$E2E_TMP/err"; e2e_fail "$file ($command): $lines lines on stderr, expected 1"; }
	grep -q -F "$file" "$E2E_TMP/err" || e2e_fail "$file: message does not name the file: $(cat "$E2E_TMP/err")"
	grep -q -E 'offset 0x[0-9a-f]+' "$E2E_TMP/err" || e2e_fail "$file: message has no offset: $(cat "$E2E_TMP/err")"
	grep -q -E "$pattern" "$E2E_TMP/err" || e2e_fail "$file: message does not match /$pattern/: $(cat "$E2E_TMP/err")"
	cases=$((cases + 1))
}

# le64 VALUE: 8 little-endian bytes as printf escapes (for patch)
le64() {
	v=$1 i=0 out=
	while [ $i -lt 8 ]; do
		out="$out\\$(printf '%03o' $((v & 255)))"
		v=$((v >> 8))
		i=$((i + 1))
	done
	printf '%s' "$out"
}

# patch FILE OFFSET BYTES...: overwrite bytes (given as printf escapes) in place
patch() {
	# shellcheck disable=SC2059 # the format is the bytes to write, escapes and all
	printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

fp=$fixtures/fp.data
size=$(wc -c <"$fp")
data_offset=$(od -A n -t u8 -j 40 -N 8 "$fp" | tr -d ' ')
data_size=$(od -A n -t u8 -j 48 -N 8 "$fp" | tr -d ' ')

# garbage and truncated headers
head -c 300 /dev/urandom >"$E2E_TMP/garbage.data"
printf 'NOTPERF!' | dd of="$E2E_TMP/garbage.data" bs=1 conv=notrunc 2>/dev/null
expect_bad "$E2E_TMP/garbage.data" 'bad magic'
head -c 10 "$fp" >"$E2E_TMP/short.data"
expect_bad "$E2E_TMP/short.data" 'truncated'
head -c 60 "$fp" >"$E2E_TMP/header-cut.data"
expect_bad "$E2E_TMP/header-cut.data" 'truncated'

# the file cut in the middle of its data: an error, or with --force the
# records before the cut
cut=$((data_offset + data_size / 2 + 3))
head -c $cut "$fp" >"$E2E_TMP/cut.data"
expect_bad "$E2E_TMP/cut.data" 'past end of file'
e2e_run "$PYSTITCH" dump --force -i "$E2E_TMP/cut.data" >"$E2E_TMP/forced" 2>"$E2E_TMP/err" ||
	{ e2e_show "$E2E_TMP/err"; e2e_fail "cut.data: --force did not exit 0"; }
grep -q 'warning' "$E2E_TMP/err" || e2e_fail "cut.data: --force gave no warning"
before=$(grep -c PERF_RECORD_SAMPLE "$E2E_TMP/forced")
[ "$before" -gt 5 ] || e2e_fail "cut.data: --force printed only $before samples"
e2e_run "$PYSTITCH" script --force -i "$E2E_TMP/cut.data" >/dev/null 2>&1 ||
	e2e_fail "cut.data: script --force did not exit 0"
cases=$((cases + 1))

# hostile record sizes: the first record's size field set to 4, then past
# the end of the data section
cp "$fp" "$E2E_TMP/size4.data"
patch "$E2E_TMP/size4.data" $((data_offset + 6)) '\004\000'
expect_bad "$E2E_TMP/size4.data" 'smaller than its 8-byte header'
cp "$fp" "$E2E_TMP/bigrec.data"
last=$((data_offset + data_size - 8))
patch "$E2E_TMP/bigrec.data" "$last" '\011\000\000\000\000\000\377\377'
expect_bad "$E2E_TMP/bigrec.data" 'runs past the end of the data section'
# an unknown record type
cp "$fp" "$E2E_TMP/type.data"
patch "$E2E_TMP/type.data" "$data_offset" '\077\000\000\000'
expect_bad "$E2E_TMP/type.data" 'unknown record type 63'
# the attrs section pointing past the end of the file
cp "$fp" "$E2E_TMP/attrs.data"
patch "$E2E_TMP/attrs.data" 24 "$(le64 $((size + 4096)))"
expect_bad "$E2E_TMP/attrs.data" 'attrs section'
# a callchain count of 2^60 in the first sample
# (the offset of a record line comes after perf's timestamp columns)
first_sample=$(sed -n 's/^[0-9 ]*\(0x[0-9a-f]*\) \[0x[0-9a-f]*\]: PERF_RECORD_SAMPLE.*/\1/p' \
	"$fixtures/fp.dump" | head -n 1)
cp "$fp" "$E2E_TMP/chain.data"
# -g samples: header(8) ip(8) pid/tid(8) time(8) period(8), then the
# callchain's nr
patch "$E2E_TMP/chain.data" $((first_sample + 40)) "$(le64 1152921504606846976)"
expect_bad "$E2E_TMP/chain.data" 'callchain of [0-9]+ entries runs past the record'
expect_bad "$E2E_TMP/chain.data" 'callchain' script

# pipe mode cut short
pipe=$fixtures/pipe.data
psize=$(wc -c <"$pipe")
head -c $((psize - 21)) "$pipe" >"$E2E_TMP/pipe-cut.data"
expect_bad "$E2E_TMP/pipe-cut.data" 'truncated'
e2e_run "$PYSTITCH" dump --force -i - <"$E2E_TMP/pipe-cut.data" >/dev/null 2>&1 ||
	e2e_fail "pipe-cut.data: --force from stdin did not exit 0"

# corrupt zstd data inside the compressed fixture
comp=$fixtures/compressed.data
coff=$(sed -n 's/^[0-9 ]*\(0x[0-9a-f]*\) \[0x[0-9a-f]*\]: PERF_RECORD_SAMPLE.*/\1/p' \
	"$fixtures/compressed.dump" | head -n 1)
cp "$comp" "$E2E_TMP/zstd.data"
patch "$E2E_TMP/zstd.data" $((coff + 8)) '\377\377\377\377\377\377\377\377'
expect_bad "$E2E_TMP/zstd.data" 'zstd'

e2e_say "bad_input: $cases damaged inputs rejected with one line and exit status 2"
