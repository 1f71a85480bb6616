#!/bin/sh
# info_synthetic: `pystitch info` (and -I) prints byte for byte what `perf
# report --header-only` (-I) prints on the synthetic captures of
# tests/unit/output/test_info (written with --write): what this machine
# cannot record, such as a hybrid CPU's topology, PMU capabilities (none at
# all, and two PMUs with and without caps), CPU PMU capabilities, several
# NUMA and memory nodes, CPU lists in every form perf reads, BPF programs named through BTF of either byte
# order, a big-endian capture, and the sound features perf 6.1 refuses
# (after which it reads no feature), in a file and in a pipe.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
e2e_setup
writer=$abs_top_builddir/tests/unit/output/test_info
[ -x "$writer" ] || e2e_fail "no $writer (make check builds it)"
mkdir "$E2E_TMP/synthetic" || e2e_fail "cannot make a directory"
"$writer" --write "$E2E_TMP/synthetic" || e2e_fail "test_info --write failed"
status=0
count=0
for data in "$E2E_TMP"/synthetic/*.data; do
	name=$(basename "$data" .data)
	e2e_compare_info "$data" "$name" || status=1
	e2e_compare_info "$data" "$name" -I || status=1
	count=$((count + 1))
done
[ $count -ge 11 ] || e2e_fail "test_info wrote $count captures, not the 11 expected"
exit $status
