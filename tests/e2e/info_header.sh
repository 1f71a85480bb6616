#!/bin/sh
# info_header: `pystitch info` must agree with `perf report --header-only` on
# hostname, os release, arch, nrcpus, cmdline and the event names, for a file
# capture and for a pipe capture (whose features arrive as records).
. "$(dirname "$0")/lib.sh"
e2e_setup
status=0
e2e_record "$E2E_TMP/perf.data" -F 999 -e cpu-clock -e task-clock -- "$E2E_PROGRAMS/loop" 0.1
e2e_compare_info "$E2E_TMP/perf.data" "$e2e_name (file)" || status=1
e2e_record - -F 999 -- "$E2E_PROGRAMS/loop" 0.1
e2e_compare_info "$E2E_RECORDED" "$e2e_name (pipe)" || status=1
exit $status
