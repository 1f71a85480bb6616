/* inlining: heavy inlining at -O2 with debug info, for the native-stack
 * tests. Usage: inlining [SECONDS]. Hot loops sit in chains of three to
 * five functions that the compiler inlines (always_inline ones and plain
 * static ones called from one place), and the innermost of them call libm,
 * so DWARF-unwound stacks have inline frames at the leaf and in the middle
 * (the return address into an inlined call site). Spins for SECONDS of
 * CPU time (default 0.4); prints nothing on stdout. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wave.h"

#define NOINLINE __attribute__((noinline))

static volatile double sink;

static double cpu_time_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

/* ---- chain 1: five levels down to libm (the first four in wave.h) ---- */

static double smooth(double *values, int n)
{
	for (int i = 1; i < n; i++)
		values[i] = values[i] * 0.75 + values[i - 1] * 0.25;
	return accumulate(values, n);
}

static NOINLINE double kernel_wave(double seed)
{
	double values[64];

	for (int i = 0; i < 64; i++)
		values[i] = seed + i * 0.125;
	return smooth(values, 64);
}

/* ---- chain 2: integer hashing, inlined without the attribute ---- */

static inline uint64_t rotate(uint64_t x, int bits)
{
	return (x << bits) | (x >> (64 - bits));
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= rotate(v * 0x9e3779b97f4a7c15ULL, 31);
	return rotate(h, 27) * 5 + 0x52dce729;
}

static inline uint64_t hash_block(const uint64_t *block, int n, uint64_t h)
{
	for (int i = 0; i < n; i++)
		h = mix(h, block[i]);
	return h;
}

static NOINLINE uint64_t kernel_hash(uint64_t seed)
{
	uint64_t block[128];
	uint64_t h = seed;

	for (int i = 0; i < 128; i++)
		block[i] = seed + (uint64_t)i * 0x100000001b3ULL;
	for (int round = 0; round < 40; round++)
		h = hash_block(block, 128, h);
	return h;
}

/* ---- chain 3: an inlined caller of a non-inlined function ---- */

static NOINLINE double leaf_root(double x)
{
	return sqrt(fabs(x)) + cbrt(x) + log1p(fabs(x));
}

INLINE double roots_of(double x, int n)
{
	double sum = 0;

	for (int i = 0; i < n; i++)
		sum += leaf_root(x + i);
	return sum;
}

INLINE double stage_roots(double x)
{
	return roots_of(x, 300) * 0.5;
}

/* run() inlines stage_roots() and roots_of(): a sample in leaf_root has
 * its return address in an inline chain two levels deep. */
static NOINLINE void run(double seconds)
{
	struct timespec start;
	double x = 0.5;
	uint64_t h = 1;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
	do {
		x = kernel_wave(x) * 1e-3;
		h = kernel_hash(h);
		x += stage_roots(x) * 1e-6;
		if (!isfinite(x) || fabs(x) > 1e6)
			x = 0.5;
	} while (cpu_time_since(&start) < seconds);
	sink = x + (double)(h & 0xff);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.4;

	if (seconds < 0) {
		fprintf(stderr, "usage: inlining [SECONDS]\n");
		return 2;
	}
	run(seconds);
	return 0;
}
