#!/bin/sh
# script_pipe: captures that reach pystitch through a pipe or were written
# to one: `perf record -o -` (the pipe format) read from the saved file and
# from stdin, and an ordinary perf.data read from stdin
# (`cat perf.data | pystitch script -i -`). Every sample must be identical
# to what `perf script` prints for the same data.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0
E2E_MIN_SAMPLES=100

e2e_record - -F 999 --call-graph dwarf -- "$E2E_PROGRAMS/inlining" 0.3
mv "$E2E_RECORDED" "$E2E_TMP/pipe-dwarf.data"
e2e_script_diff "pipe-mode dwarf capture" 100 "$E2E_TMP/pipe-dwarf.data" || failed=1
E2E_STDIN=$E2E_TMP/pipe-dwarf.data
e2e_pystitch_script pystitch-pipe-dwarf-stdin.txt -i -
E2E_STDIN=
e2e_compare_script "pipe-mode dwarf capture on stdin" "$E2E_PERF_OUT" \
	pystitch-pipe-dwarf-stdin.txt -v min_samples=100 || failed=1

e2e_record - -F 999 -g -- "$E2E_PROGRAMS/threads" 0.3
e2e_script_diff "pipe-mode -g capture" 100 "$E2E_RECORDED" || failed=1

e2e_record "$E2E_TMP/file.data" -F 999 --call-graph dwarf -- "$E2E_PROGRAMS/shlib" 0.3
e2e_perf_script perf-file.txt -i "$E2E_TMP/file.data"
E2E_STDIN=$E2E_TMP/file.data
e2e_pystitch_script pystitch-file-stdin.txt -i -
E2E_STDIN=
e2e_compare_script "perf.data on stdin" perf-file.txt pystitch-file-stdin.txt -v min_samples=100 ||
	failed=1
exit $failed
