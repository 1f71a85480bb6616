#!/bin/sh
# dump_file_mode: `perf record` of a multi-threaded program into a file:
# `pystitch dump` must print every record as `perf report -D` does, byte for
# byte (threads named by their COMM, samples on both CPUs).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
e2e_record "$E2E_TMP/perf.data" -F 999 -- "$E2E_PROGRAMS/threads" 0.3 3
e2e_compare_dump "$E2E_TMP/perf.data" "$e2e_name" 200
