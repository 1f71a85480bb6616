#!/bin/sh
# script_fp: `perf record -g` (frame-pointer call chains recorded by the
# kernel) of the native test programs, the ones built without frame
# pointers included, run one after the other from a shell in one capture;
# then `pystitch script` against `perf script` on that file: every sample,
# of every program, must be identical. (One capture is enough here: -g
# stacks need no unwinding, so the shell's inherited mappings do not
# matter, unlike for script_dwarf.)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
programs="loop deep deep_nofp inlining threads shlib signals"
# shellcheck disable=SC2086 # a list of names
e2e_record "$E2E_TMP/fp.data" -F 999 -g -- /bin/sh -c "$(e2e_program_sequence 0.3 $programs)"
E2E_BY_COMM=1 E2E_MIN_SAMPLES=1000 e2e_script_diff "-g" 100 "$E2E_TMP/fp.data"
status=$?
# shellcheck disable=SC2086
e2e_expect_programs "$E2E_PERF_OUT" 100 $programs
exit $status
