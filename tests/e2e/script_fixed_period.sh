#!/bin/sh
# script_fixed_period: captures of a fixed-period event (`perf record -c N`:
# no PERF_SAMPLE_PERIOD in sample_type), to a file and to a pipe, with and
# without call chains: perf prints the attr's sample_period as every
# sample's period, and so must pystitch. `-F 999 --no-period` (no PERIOD
# bit, the attr holding a frequency) prints the frequency, as perf does.
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0
E2E_MIN_SAMPLES=100

# fp_check LABEL FILE PERIOD: every sample identical to perf's, and perf's
# period column is PERIOD (so the test cannot pass on a capture that
# carries its periods)
fp_check() {
	e2e_script_diff "$1" 100 "$2" || failed=1
	# shellcheck disable=SC2016 # an awk program
	fp_seen=$("$AWK" '{ for (i = 1; i < NF; i++) if ($(i + 1) ~ /^cpu-clock/) { print $i; break } }' \
		"$E2E_TMP/$E2E_PERF_OUT" | sort -u)
	[ "$fp_seen" = "$3" ] || e2e_fail "$1: perf printed the periods '$fp_seen', not $3 alone"
	# and `pystitch dump` prints it for every sample, as perf report -D
	fp_dump=$(e2e_run "$PYSTITCH" dump --no-hex -i "$2" | grep 'PERF_RECORD_SAMPLE' | grep -c -v " period: $3 addr: ")
	[ "$fp_dump" = 0 ] || e2e_fail "$1: pystitch dump prints $fp_dump samples without 'period: $3'"
}

e2e_record "$E2E_TMP/file.data" -e cpu-clock -c 100003 -- "$E2E_PROGRAMS/loop" 0.3
fp_check "file mode, -c 100003" "$E2E_TMP/file.data" 100003

e2e_record - -e cpu-clock -c 100003 -- "$E2E_PROGRAMS/loop" 0.3
fp_check "pipe mode, -c 100003" "$E2E_RECORDED" 100003

e2e_record "$E2E_TMP/fp.data" -e cpu-clock -c 200003 -g -- "$E2E_PROGRAMS/deep" 0.3
fp_check "file mode, -c 200003 -g" "$E2E_TMP/fp.data" 200003

e2e_record "$E2E_TMP/freq.data" -e cpu-clock -F 999 --no-period -- "$E2E_PROGRAMS/loop" 0.3
fp_check "file mode, -F 999 --no-period" "$E2E_TMP/freq.data" 999
exit $failed
