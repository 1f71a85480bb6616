#!/bin/sh
# compare_selftest: the comparison tools must pass equal outputs and catch
# each kind of mismatch. Runs from committed text (a trimmed `perf report -D`
# of a `-g` capture, and a perf report --header-only), so it needs no perf.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
perf_dump=$e2e_dir/selftest-perf-dump.txt
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-$e2e_name.XXXXXX") || e2e_fail "cannot create a temporary directory"
trap e2e_cleanup EXIT
failures=0

# expect pass|fail DESCRIPTION [MIN_SAMPLES] < PYSTITCH_OUTPUT: e2e_compare
# of the committed perf text with PYSTITCH_OUTPUT.
expect() {
	want=$1
	what=$2
	cp "$perf_dump" "$E2E_TMP/perf-dump.txt"
	cat >"$E2E_TMP/pystitch-dump.txt"
	if PS_E2E_KEEP=1 e2e_compare selftest "${3:-1}" >"$E2E_TMP/out.txt" 2>&1; then
		got=pass
	else
		got=fail
	fi
	if [ $got = "$want" ]; then
		e2e_say "ok: dump: $what ($got)"
	else
		e2e_say "NOT OK: dump: $what: expected $want, got $got:"
		sed 's/^/    /' "$E2E_TMP/out.txt"
		failures=$((failures + 1))
	fi
}

expect pass "identical output" 3 <"$perf_dump"
expect fail "too few samples" 4 <"$perf_dump"
sed 's/^\.  0010:  fc 00/.  0010:  fd 00/' "$perf_dump" | expect fail "a byte of a hex dump differs"
sed 's#dso: /usr/lib/x86_64-linux-gnu/libm.so.6#dso: <not found>#' "$perf_dump" |
	expect fail "a sample's DSO line differs"
sed 's/^479169197322 0x4f0/0x4f0/' "$perf_dump" | expect fail "a sample's timestamp is missing"
sed '/^ \.\.\. thread: loop:6140$/d' "$perf_dump" | expect fail "a thread line is missing"
# shellcheck disable=SC2016 # an awk program
"$AWK" '{ printf "%s%s", (NR > 1 ? "\n" : ""), $0 }' "$perf_dump" | expect fail "no newline at the end"
sed 's/^$/ /' "$perf_dump" | expect fail "a blank line is not empty"

# e2e_strip_hex: perf's text without its hex dumps, and nothing else gone
e2e_strip_hex <"$perf_dump" >"$E2E_TMP/no-hex.txt"
hex_lines=$(grep -c -E '^\.$|^\. \.\.\. raw event: size [0-9]+ bytes$|^\.  [0-9a-f]{4}:  ' "$perf_dump")
events=$(grep -c -E '^(0x[0-9a-f]+|0)@.* \[0x[0-9a-f]+\]: event: [0-9]+$' "$perf_dump")
if grep -q -E '^\.$|^\. \.\.\. raw event|^\.  [0-9a-f]{4}:  ' "$E2E_TMP/no-hex.txt" ||
	[ $(($(wc -l <"$perf_dump") - hex_lines - events)) != "$(wc -l <"$E2E_TMP/no-hex.txt")" ] ||
	! grep -q '^\.\.\.\.\.  1: 00007f7b79665334$' "$E2E_TMP/no-hex.txt"; then
	e2e_say "NOT OK: e2e_strip_hex left a hex line or took another one ($hex_lines hex lines and $events ends of hex dumps in $(wc -l <"$perf_dump") lines, $(wc -l <"$E2E_TMP/no-hex.txt") left)"
	failures=$((failures + 1))
else
	e2e_say "ok: e2e_strip_hex takes the $hex_lines lines of $events hex dumps and their $events empty lines, and nothing else"
fi

if [ $failures -ne 0 ]; then
	e2e_say "$e2e_name: $failures checks of the comparison tools went wrong"
	exit 1
fi
e2e_say "$e2e_name: the comparison tools pass equal outputs and catch every planted mismatch"
