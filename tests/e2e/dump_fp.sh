#!/bin/sh
# dump_fp: `-g` records frame-pointer callchains (the test programs keep
# frame pointers); every sample's "FP chain" detail lines must equal perf's.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
e2e_record "$E2E_TMP/perf.data" -F 999 -g -- "$E2E_PROGRAMS/loop" 0.3
e2e_compare_dump "$E2E_TMP/perf.data" "$e2e_name" -v min_samples=100 -v details_fatal=SAMPLE
