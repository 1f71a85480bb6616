#!/bin/sh
# pprof_start_time: the profile's start time (time_nanos) from a capture
# of a test program: the capture file's modification time less the time
# its samples span, within the recording's own wall-clock window; the same
# from an archive of it. When the figures give no time that pprof holds
# (a damaged last sample time near 2^64 or 2^63, an archive whose MANIFEST
# says mtime 9223372036854775807 or 0), pprof still writes the profile,
# without a start time and with one warning saying why — never a wrapped
# value (the ASan+UBSan build of make check fails on signed overflow).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
command -v zstd >/dev/null 2>&1 || e2e_skip "zstd is not installed: cannot rewrite an archive"
failed=0

data=$E2E_TMP/loop.data
before=$(date +%s)
e2e_record "$data" -F 999 -g -- "$E2E_PROGRAMS/loop" 0.3
after=$(date +%s)

# pprof NAME INPUT: writes $E2E_TMP/NAME.pb.gz, stderr in NAME.err;
# prints the start time in seconds (0 when the profile has none).
pprof() {
	e2e_run "$PYSTITCH" pprof --buildid-dir "$E2E_TMP/buildid-cache" -i "$2" -o "$E2E_TMP/$1.pb.gz" 2>"$E2E_TMP/$1.err" || {
		pp_status=$?
		e2e_show "$E2E_TMP/$1.err"
		e2e_fail "pystitch pprof -i $2 failed (exit status $pp_status)"
	}
	nanos=$(python3 "$e2e_dir/pprof_time.py" time "$E2E_TMP/$1.pb.gz") ||
		e2e_fail "cannot read the start time of $1.pb.gz"
	echo $((nanos / 1000000000))
}

# expect_none NAME INPUT: a profile with no start time, one warning.
expect_none() {
	start=$(pprof "$1" "$2")
	if [ "$start" != 0 ]; then
		e2e_say "$e2e_name: $1: start time $start s, expected none"
		failed=1
		return
	fi
	if [ "$(wc -l <"$E2E_TMP/$1.err")" -ne 1 ] ||
		! grep -q '^pystitch: warning: the profile has no start time: ' "$E2E_TMP/$1.err"; then
		e2e_say "$e2e_name: $1: expected one warning about the start time, stderr was:"
		e2e_show "$E2E_TMP/$1.err"
		failed=1
		return
	fi
	e2e_say "$e2e_name: $1: no start time, $(cat "$E2E_TMP/$1.err")"
}

# expect_window NAME INPUT: a start time within the recording's window.
expect_window() {
	start=$(pprof "$1" "$2")
	if [ "$start" -lt $((before - 1)) ] || [ "$start" -gt "$after" ]; then
		e2e_say "$e2e_name: $1: start time $start s, recorded between $before and $after"
		failed=1
	fi
	if [ -s "$E2E_TMP/$1.err" ]; then
		e2e_say "$e2e_name: $1: unexpected messages:"
		e2e_show "$E2E_TMP/$1.err"
		failed=1
	fi
	e2e_say "$e2e_name: $1: start time $start s (recorded $before-$after)"
}

expect_window capture "$data"

# a damaged clock: the last sample's time near 2^64, then past 2^63
for label_time in wrapped:18446744073709551000 huge:9223372036854775900; do
	label=${label_time%%:*}
	python3 "$e2e_dir/pprof_time.py" sample-time "$data" "$E2E_TMP/$label.data" \
		"${label_time#*:}" || e2e_fail "cannot damage the sample time"
	touch -r "$data" "$E2E_TMP/$label.data"
	expect_none "$label" "$E2E_TMP/$label.data"
done

# archives: the same start time in whole seconds; a MANIFEST's mtime that
# no time after 1970 in nanoseconds can hold, or one before the samples
e2e_run "$PYSTITCH" archive --buildid-dir "$E2E_TMP/buildid-cache" -i "$data" -o "$E2E_TMP/loop.pst" >/dev/null 2>"$E2E_TMP/archive.err" || {
	e2e_show "$E2E_TMP/archive.err"
	e2e_fail "pystitch archive failed"
}
expect_window archived "$E2E_TMP/loop.pst"
for label_mtime in far:9223372036854775807 epoch:0; do
	label=${label_mtime%%:*}
	python3 "$e2e_dir/pprof_time.py" manifest-mtime "$E2E_TMP/loop.pst" "$E2E_TMP/$label.pst" \
		"${label_mtime#*:}" || e2e_fail "cannot rewrite the archive's MANIFEST"
	expect_none "$label" "$E2E_TMP/$label.pst"
done
exit $failed
