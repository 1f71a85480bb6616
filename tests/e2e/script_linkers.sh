#!/bin/sh
# script_linkers: programs and shared libraries laid out by other linkers
# than the default one, whose segments do not lie at the same distance
# from their file offsets: lld places the executable segment (and every
# later one) a page beyond its file offset, so a mapping's start less its
# file offset is not the file's base. Built here without frame pointers
# (the stacks need the CFI found at the right address), recorded with
# DWARF and frame-pointer stacks; the plain output and `-F +srcline
# --inline` identical to perf script's. GNU ld with one text segment
# (-z noseparate-code) and gold are checked as well.
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0
E2E_MIN_SAMPLES=100

command -v clang >/dev/null || e2e_skip "clang is not installed"
command -v ld.lld >/dev/null || e2e_skip "lld (ld.lld) is not installed"

programs=$e2e_dir/../programs
build=$E2E_TMP/build
mkdir "$build"

# a PT_LOAD with execute permission whose address and file offset differ:
# the layout the test is about
exec_segment_moved() {
	readelf -lW "$1" | {
		moved=1
		while read -r type offset vaddr _ _ _ flags; do
			case "$type $flags" in
			"LOAD "*E*) [ $((offset)) -eq $((vaddr)) ] || moved=0 ;;
			esac
		done
		return $moved
	}
}

# check NAME PROGRAM ARGS: records PROGRAM ARGS with DWARF and -g stacks
# and compares the outputs
check() {
	ck_name=$1
	shift
	e2e_record "$E2E_TMP/$ck_name-dwarf.data" --call-graph dwarf -- "$@"
	e2e_record "$E2E_TMP/$ck_name-fp.data" -g -- "$@"
	e2e_script_diff "$ck_name, dwarf" 100 "$E2E_TMP/$ck_name-dwarf.data" || failed=1
	e2e_script_diff "$ck_name, dwarf, +srcline --inline" 100 "$E2E_TMP/$ck_name-dwarf.data" \
		-F +srcline --inline || failed=1
	e2e_script_diff "$ck_name, fp" 100 "$E2E_TMP/$ck_name-fp.data" || failed=1
}

# build NAME LINKER_FLAGS: deep.c, and shlib.c calling libpsworker.so,
# both linked by the linker LINKER_FLAGS choose
build() {
	bd_dir=$build/$1
	mkdir "$bd_dir"
	# shellcheck disable=SC2086 # the linker flags
	{ clang -g -O2 -fomit-frame-pointer $2 -o "$bd_dir/deep" "$programs/deep.c" -lm &&
		clang -g -O2 -fomit-frame-pointer -fPIC -shared $2 -Wl,-soname,libpsworker.so \
			-o "$bd_dir/libpsworker.so" "$programs/psworker.c" -lm &&
		clang -g -O2 -fomit-frame-pointer $2 -I"$programs" -o "$bd_dir/shlib" \
			"$programs/shlib.c" "$bd_dir/libpsworker.so" -Wl,-rpath,"$bd_dir" -lm; } ||
		e2e_fail "clang $2 could not build the programs"
}

build lld -fuse-ld=lld
for f in deep shlib libpsworker.so; do
	exec_segment_moved "$build/lld/$f" ||
		e2e_fail "lld laid out $f with its executable segment at its file offset"
done
check "lld, deep" "$build/lld/deep" 0.3
check "lld, shlib" "$build/lld/shlib" 0.3

build noseparate "-fuse-ld=bfd -Wl,-z,noseparate-code"
check "ld -z noseparate-code, shlib" "$build/noseparate/shlib" 0.3
if command -v ld.gold >/dev/null; then
	build gold -fuse-ld=gold
	check "gold, shlib" "$build/gold/shlib" 0.3
else
	e2e_say "$e2e_name: no gold (ld.gold) here: its programs are left out"
fi
exit $failed
