#!/bin/sh
# dump_pipe_mode: `perf record -o -` writes the pipe format (attrs, features
# and event names as records); `pystitch dump` of the saved stream must match
# `perf report -D`.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
e2e_record - -F 999 -- "$E2E_PROGRAMS/loop" 0.3
e2e_compare_dump "$E2E_RECORDED" "$e2e_name" -v min_samples=100
