/* loop: CPU-bound test program for the end-to-end tests.
 * Usage: loop [SECONDS [DEPTH]]. Spins for SECONDS of CPU time (default 0.3)
 * through a short recursion and a few non-inlined functions that call libm,
 * so samples land in the program, in libm and now and then in the kernel.
 * Prints nothing on stdout (tests record it with `perf record -o -`). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile double sink;

/* CPU time, not wall time: a loaded machine stretches the run instead of
 * thinning the samples (cpu-clock samples follow CPU time). */
static double cpu_time_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

/* Always inlined, so DWARF-aware tools see an inline frame here. */
static inline __attribute__((always_inline)) double inline_leaf(double x)
{
	return sin(x) * cos(x) + sqrt(fabs(x));
}

static NOINLINE double leaf_a(double x)
{
	return inline_leaf(x) + exp(-fabs(x));
}

static NOINLINE double leaf_b(double x)
{
	return inline_leaf(x * 0.5) + log1p(fabs(x));
}

/* Pseudo-random bytes for the stack: DWARF stack copies of loop then
 * compress badly, so `perf record -z` has to split its output into several
 * PERF_RECORD_COMPRESSED records and records straddle two of them. */
static NOINLINE void scramble(volatile uint64_t *noise, size_t count, uint64_t *state)
{
	uint64_t value = *state;

	for (size_t i = 0; i < count; i++) {
		value ^= value << 13;
		value ^= value >> 7;
		value ^= value << 17;
		noise[i] = value;
	}
	*state = value;
}

/* The innermost loop. Its frame holds the noise, right above the leaves. */
static NOINLINE double spin(double x)
{
	static uint64_t noise_state = 0x9e3779b97f4a7c15ULL;
	volatile uint64_t noise[256];
	double result = 0;

	for (int i = 0; i < 2000; i++) {
		if (i % 32 == 0)
			scramble(noise, 256, &noise_state);
		result += (i & 1) ? leaf_a(x + i) : leaf_b(x - i);
	}
	return result + (double)(noise[0] & 1);
}

static NOINLINE double recurse(int depth, double x)
{
	double result;

	if (depth <= 0)
		return spin(x);
	result = recurse(depth - 1, x + 1.0);
	sink = result; /* keeps the call from becoming a tail call */
	return result * 0.5;
}

static NOINLINE void run(double seconds, int depth)
{
	struct timespec start;
	double x = 0.25;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
	do {
		x = recurse(depth, x);
		if (!isfinite(x) || fabs(x) > 1e6)
			x = 0.25;
	} while (cpu_time_since(&start) < seconds);
	sink = x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.3;
	int depth = argc > 2 ? atoi(argv[2]) : 4;

	if (seconds < 0 || depth < 0 || depth > 10000) {
		fprintf(stderr, "usage: loop [SECONDS [DEPTH]]\n");
		return 2;
	}
	run(seconds, depth);
	return 0;
}
