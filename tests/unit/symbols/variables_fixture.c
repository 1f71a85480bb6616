/* Built (-O0 -g) and run by test_variables.c: prints where the variables of
 * probe() are, seen from inside it, for the test to check what its DWARF
 * says of them: for the inner block and after it, a PC there, the offset of
 * `local` from the frame's CFA and its value; the offset of `arg`; and the
 * value of `pinned`, which lives in r12. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

/* The address of the next instruction, file-relative. */
#define HERE(pc) __asm__ volatile("lea 0(%%rip), %0" : "=r"(pc))

static uintptr_t base;

__attribute__((noinline)) static long probe(long arg)
{
	long local = arg * 3;
	register long pinned __asm__("r12") = arg + 5;
	uintptr_t cfa = (uintptr_t)__builtin_frame_address(0) + 16, pc;

	__asm__ volatile("" : : "r"(pinned));
	{
		long local = arg * 7; /* shadows the outer one */

		HERE(pc);
		printf("inner %lu %ld %ld\n", (unsigned long)(pc - base),
		       (long)((uintptr_t)&local - cfa), local);
	}
	HERE(pc);
	printf("outer %lu %ld %ld\n", (unsigned long)(pc - base), (long)((uintptr_t)&local - cfa),
	       local);
	printf("arg %ld %ld\n", (long)((uintptr_t)&arg - cfa), arg);
	printf("pinned %ld\n", pinned);
	return local + pinned;
}

int main(void)
{
	Dl_info info;

	if (!dladdr((void *)main, &info))
		return 1;
	base = (uintptr_t)info.dli_fbase;
	return probe(2) > 0 ? 0 : 1;
}
