#!/bin/sh
# dump_dwarf: `--call-graph dwarf` samples carry user registers and a copy of
# the user stack (most of the hex dump): `pystitch dump` must print what
# `perf report -D` prints, byte for byte (FP chain, user regs, ustack,
# data_src, the thread and DSO of each sample, [vdso] among them).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
e2e_record "$E2E_TMP/perf.data" -F 999 --call-graph dwarf -- "$E2E_PROGRAMS/loop" 0.3
e2e_compare_dump "$E2E_TMP/perf.data" "$e2e_name" 100
