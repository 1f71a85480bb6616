#!/bin/sh
# script_static: statically linked programs (glibc and libm inside; non-PIE,
# so addresses print as file offsets of an ET_EXEC file) recorded with
# --call-graph dwarf and with -g; `pystitch script` against `perf script`
# on the same file (DWARF: at least 99.5% identical, -g: all identical).
# loop_static is plain `gcc -static`, which leaves out .eh_frame_hdr (so
# Debian perf's libunwind finds no unwind tables in it); loop_static_ehhdr
# is linked with --eh-frame-hdr.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0
E2E_MIN_SAMPLES=200
for program in loop_static loop_static_ehhdr; do
	e2e_record "$E2E_TMP/$program-dwarf.data" -F 999 --call-graph dwarf -- "$E2E_PROGRAMS/$program" 0.3
	e2e_script_diff "$program dwarf" 99.5 "$E2E_TMP/$program-dwarf.data" || failed=1
done
e2e_record "$E2E_TMP/fp.data" -F 999 -g -- "$E2E_PROGRAMS/loop_static" 0.3
e2e_script_diff "loop_static -g" 100 "$E2E_TMP/fp.data" || failed=1
exit $failed
