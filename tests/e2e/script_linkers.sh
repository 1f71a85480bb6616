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
# lld also writes no CFI for its PLT stubs: libunwind (Debian's perf)
# guesses a stub's frame, libdw (perf built with it) ends the stack there;
# the stacks pystitch unwinds its own way (a process with JIT code, in the
# default mode) go on to main: a program that makes some JIT code and then
# calls through the PLT in a loop.
# shellcheck disable=SC2016 # awk programs in single quotes
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
# ---- PLT stubs without CFI, in a process with JIT code ----
cat >"$build/step.c" <<'EOF'
int step(int x) { return x * 3 + 1; }
EOF
cat >"$build/plt_jit.c" <<'EOF'
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
int step(int x);
static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}
__attribute__((noinline)) static int spin(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s = step(s);
	return s;
}
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	                           -1, 0);
	struct timespec t0;
	volatile int sink = 0;

	if (code == MAP_FAILED)
		return 1;
	code[0] = 0xc3; /* ret: some JIT code, run once */
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 1;
	((void (*)(void))code)();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (since(&t0) < secs)
		sink += spin(100000);
	return sink == 42;
}
EOF
(cd "$build" && clang -O2 -g -fPIC -shared -fuse-ld=lld -o libstep.so step.c &&
	clang -O2 -g -fuse-ld=lld -o plt_jit plt_jit.c -L. -lstep -Wl,-rpath,"$build") ||
	e2e_fail "clang -fuse-ld=lld could not build plt_jit"
E2E_MIN_SAMPLES=300
e2e_record "$E2E_TMP/plt.data" -F 2999 --call-graph dwarf -- "$build/plt_jit" 0.3
e2e_perf_script perf-plt.txt -i "$E2E_TMP/plt.data"
e2e_pystitch_script pystitch-plt-native.txt -i "$E2E_TMP/plt.data" --python=native
e2e_compare_script "lld, plt_jit, --python=native" perf-plt.txt pystitch-plt-native.txt \
	-v min_identical=100 -v min_samples="$E2E_MIN_SAMPLES" || failed=1
e2e_pystitch_script pystitch-plt-merged.txt -i "$E2E_TMP/plt.data"
# the walk of perf built with libdw stops at a sample in a stub: one frame
e2e_pystitch_script pystitch-plt-libdw.txt -i "$E2E_TMP/plt.data" --python=native --libdw-unwind
stub=$("$AWK" 'BEGIN { RS = "" } $1 == "plt_jit" { n = split($0, l, "\n");
	if (n == 2 && l[2] ~ /\(.*\/plt_jit\)$/) c++ } END { print c + 0 }' \
	"$E2E_TMP/pystitch-plt-libdw.txt")
# pystitch's own: every sample in the program or its library reaches main
short=$("$AWK" 'BEGIN { RS = "" } $1 == "plt_jit" { split($0, l, "\n");
	if (l[2] ~ /\(.*\/(plt_jit|libstep\.so)\)$/ && $0 !~ / main\+0x/) c++ } END { print c + 0 }' \
	"$E2E_TMP/pystitch-plt-merged.txt")
e2e_say "$e2e_name: lld, plt_jit: libdw's walk stops at $stub samples in PLT stubs; pystitch's own stacks short of main: $short"
[ "$stub" -gt 0 ] || { e2e_say "$e2e_name: no sample in a PLT stub"; failed=1; }
[ "$short" = 0 ] || { e2e_say "$e2e_name: $short stacks short of main"; failed=1; }
exit $failed
