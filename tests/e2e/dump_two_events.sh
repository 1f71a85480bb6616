#!/bin/sh
# dump_two_events: two events in one capture (`-e cpu-clock -e task-clock`)
# add PERF_SAMPLE_IDENTIFIER and need samples matched to attrs by id.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
e2e_record "$E2E_TMP/perf.data" -F 999 -e cpu-clock -e task-clock -- "$E2E_PROGRAMS/loop" 0.3
e2e_compare_dump "$E2E_TMP/perf.data" "$e2e_name" -v min_samples=200
