#!/bin/sh
# fixtures: the committed captures in fixtures/ (made by fixtures/regenerate.sh
# and checked against `perf report -D` then) still decode to the committed
# `pystitch dump` and `pystitch info -P` output. Needs no perf, so parsing stays
# tested where perf is missing. Dumped from the fixtures directory, as they
# were made: each record's first line names the capture as -i gave it.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
fixtures=${abs_top_srcdir:-$e2e_dir/../..}/fixtures
[ -x "$PYSTITCH" ] || e2e_fail "no pystitch binary at $PYSTITCH"
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/pystitch-$e2e_name.XXXXXX") || e2e_fail "mktemp"
trap e2e_cleanup EXIT

checked=0
for data in "$fixtures"/*.data; do
	name=$(basename "$data" .data)
	(cd "$fixtures" && e2e_run "$PYSTITCH" dump -i "$name.data") >"$E2E_TMP/$name.dump" 2>"$E2E_TMP/err" ||
		{ e2e_show "$E2E_TMP/err"; e2e_fail "$name: pystitch dump failed"; }
	diff -u "$fixtures/$name.dump" "$E2E_TMP/$name.dump" >"$E2E_TMP/diff" ||
		{ e2e_show "$E2E_TMP/diff" 30; e2e_fail "$name: dump differs from fixtures/$name.dump"; }
	e2e_run "$PYSTITCH" info -P -i "$data" | grep -v '^# captured on' >"$E2E_TMP/$name.info"
	diff -u "$fixtures/$name.info" "$E2E_TMP/$name.info" >"$E2E_TMP/diff" ||
		{ e2e_show "$E2E_TMP/diff" 30; e2e_fail "$name: info differs from fixtures/$name.info"; }
	# the same bytes on standard input, where the capture's name is
	# "(stdin)" (a pipe-mode capture is "pipe" either way)
	e2e_run "$PYSTITCH" dump -i - <"$data" |
		sed "s/^\(0x[0-9a-f]*\|0\)@(stdin) \[/\1@$name.data [/" | cmp -s - "$fixtures/$name.dump" ||
		e2e_fail "$name: dump from stdin differs"
	# stacks print without error, one block per sample
	samples=$(grep -c 'PERF_RECORD_SAMPLE' "$fixtures/$name.dump")
	e2e_run "$PYSTITCH" script -i "$data" >"$E2E_TMP/$name.script" 2>"$E2E_TMP/err" ||
		{ e2e_show "$E2E_TMP/err"; e2e_fail "$name: pystitch script failed"; }
	headers=$(grep -c -v -E '^(	|$)' "$E2E_TMP/$name.script")
	[ "$headers" -eq "$samples" ] ||
		e2e_fail "$name: script printed $headers samples, the capture has $samples"
	checked=$((checked + 1))
done
[ "$checked" -ge 5 ] || e2e_fail "only $checked fixtures found in $fixtures"
e2e_say "fixtures: $checked captures decode as committed"
