#!/bin/sh
# script_split_dwarf: programs built with -gsplit-dwarf (the functions'
# DWARF in .dwo files, a skeleton unit with ranges and the line table in
# the program), compiled here by gcc and clang in DWARF 4 and 5, recorded
# with DWARF and frame-pointer stacks: `-F +srcline --inline` and the
# plain output identical to perf script's. perf's addr2line (bfd) reads
# the skeleton as a unit (lines, no functions) and does not read the .dwo
# files; gcc's DWARF 5 skeleton has a range list indexing .debug_addr,
# which bfd cannot read: it stops reading units there, so a program whose
# first unit is such a skeleton gets no lines from its later units
# either (the two-unit programs, built in both orders).
. "$(dirname "$0")/lib.sh"
e2e_setup
failed=0
E2E_MIN_SAMPLES=100

for cc in gcc clang; do
	command -v $cc >/dev/null || e2e_skip "$cc is not installed"
done

src=$e2e_dir/../programs/inlining.c
mkdir "$E2E_TMP/build"
cat >"$E2E_TMP/build/first.c" <<'EOF'
#include <stdlib.h>
int other(int);
static inline int twice(int x) { return x * 2 + (x & 3); }
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	long n = (long)(secs * 3e8), s = 0;
	for (long i = 0; i < n; i++)
		s += twice(other((int)i));
	return (int)(s & 1);
}
EOF
cat >"$E2E_TMP/build/second.c" <<'EOF'
static inline int inner(int x) { return x * 3 + 1; }
__attribute__((noinline)) int other(int x)
{
	return inner(x) ^ (x >> 2);
}
EOF

# check NAME PROGRAM ARGS: records PROGRAM ARGS with DWARF and -g stacks
# and compares the outputs
check() {
	ck_name=$1
	shift
	e2e_record "$E2E_TMP/$ck_name-dwarf.data" --call-graph dwarf -- "$@"
	e2e_record "$E2E_TMP/$ck_name-fp.data" -g -- "$@"
	for ck_kind in dwarf fp; do
		e2e_script_diff "$ck_name, $ck_kind, +srcline --inline" 100 \
			"$E2E_TMP/$ck_name-$ck_kind.data" -F +srcline --inline || failed=1
		e2e_script_diff "$ck_name, $ck_kind" 100 "$E2E_TMP/$ck_name-$ck_kind.data" || failed=1
	done
}

n=0
for flags in "gcc -g" "gcc -gdwarf-4" "clang -g" "clang -gdwarf-4"; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # the compiler and its flags
	(cd "$E2E_TMP/build" && $flags -O2 -gsplit-dwarf -o "inlining$n" "$src" -lm) ||
		e2e_fail "$flags -gsplit-dwarf could not build inlining.c"
	ls "$E2E_TMP/build/"*.dwo >/dev/null 2>&1 || e2e_fail "$flags -gsplit-dwarf wrote no .dwo file"
	check "inlining.c, $flags -gsplit-dwarf" "$E2E_TMP/build/inlining$n" 0.2
done

# two units, one split (gcc's DWARF 5 skeleton) and one not, in both orders
(cd "$E2E_TMP/build" && gcc -O2 -g -gsplit-dwarf -c first.c && gcc -O2 -g -c second.c &&
	gcc -o split-first first.o second.o && gcc -o split-second second.o first.o) ||
	e2e_fail "gcc could not build the two-unit programs"
check "split unit first" "$E2E_TMP/build/split-first" 0.2
check "split unit second" "$E2E_TMP/build/split-second" 0.2
exit $failed
