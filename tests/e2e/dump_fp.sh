#!/bin/sh
# dump_fp: `-g` records frame-pointer callchains (the test programs keep
# frame pointers): `pystitch dump` must print what `perf report -D` prints,
# byte for byte, hex dumps, "FP chain" lines and the thread and DSO of each
# sample included; with --no-hex, the same without the hex dumps. Also in
# the order the records are stored (--file-order), which perf prints with
# --disable-order.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
status=0
e2e_record "$E2E_TMP/perf.data" -F 999 -g -- "$E2E_PROGRAMS/loop" 0.3
e2e_compare_dump "$E2E_TMP/perf.data" "$e2e_name" 100 || status=1
e2e_perf_dump "$E2E_TMP/perf.data" --disable-order
e2e_pystitch_dump "$E2E_TMP/perf.data" --file-order
e2e_compare "$e2e_name (file order)" 100 || status=1
e2e_compare_no_hex "$E2E_TMP/perf.data" "$e2e_name (file order)" --file-order || status=1
exit $status
