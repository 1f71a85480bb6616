/* deep: deep recursion for the native-stack tests.
 * Usage: deep [SECONDS [DEPTH]]. Recurses DEPTH levels (default 240)
 * through two functions that call each other, each frame holding 96 bytes
 * of locals, and works at every level on the way down and more at the
 * bottom. Most samples therefore lie deeper than an 8 KiB DWARF stack copy
 * reaches (`--call-graph dwarf` stacks get cut) and deeper than perf's
 * 127-frame limit. Built with and without frame pointers. Spins for
 * SECONDS of CPU time (default 0.4); prints nothing on stdout. */
#include <math.h>
#include <stddef.h>
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

/* The bottom of the recursion: the bulk of the work, through libm. Its
 * frame size changes from call to call (see level_work). */
static NOINLINE double bottom(double x)
{
	static unsigned calls;
	size_t pad = 16 * (size_t)(1 + calls++ % 11);
	volatile char *scratch = __builtin_alloca(pad);
	double sum = 0;

	for (int i = 0; i < 4000; i++) {
		sum += sin(x + i) * exp(-fabs(x - i) * 1e-3);
		scratch[(size_t)i % pad] = (char)i;
	}
	return sum;
}

/* A little work at each level, so samples land at every depth. Its frame
 * grows with the depth in steps of 16 bytes, so where the stack copy ends
 * relative to the callers' frames varies from sample to sample: sometimes
 * a return address sits in the copy's last word (a frame Debian's perf
 * loses), sometimes just past the copy. */
static NOINLINE double level_work(int depth, double x)
{
	volatile char *scratch = __builtin_alloca(16 * (size_t)(depth % 13));
	double sum = x;

	for (int i = 0; i < 40 + depth % 7; i++) {
		sum = sum * 0.999 + sqrt((double)(i + depth));
		if (depth % 13)
			scratch[i % (16 * (depth % 13))] = (char)i;
	}
	return sum;
}

static NOINLINE double descend_odd(int depth, double x);

static NOINLINE double descend_even(int depth, double x)
{
	volatile double pad[12]; /* makes each frame bigger */
	double result;

	pad[depth % 12] = level_work(depth, x);
	if (depth <= 0)
		return bottom(x) + pad[0];
	result = descend_odd(depth - 1, x + 0.5);
	sink = result; /* keeps the call from becoming a tail call */
	return result * 0.5 + pad[depth % 12];
}

static NOINLINE double descend_odd(int depth, double x)
{
	volatile double pad[12];
	double result;

	pad[depth % 12] = level_work(depth, x);
	if (depth <= 0)
		return bottom(x) + pad[0];
	result = descend_even(depth - 1, x - 0.25);
	sink = result;
	return result * 0.5 + pad[depth % 12];
}

static NOINLINE void run(double seconds, int depth)
{
	struct timespec start;
	double x = 0.25;
	int round = 0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
	do {
		/* vary the depth a little so stacks are cut at different places */
		x = descend_even(depth - round % 5, x);
		if (!isfinite(x) || fabs(x) > 1e6)
			x = 0.25;
		round++;
	} while (cpu_time_since(&start) < seconds);
	sink = x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.4;
	int depth = argc > 2 ? atoi(argv[2]) : 240;

	if (seconds < 0 || depth < 5 || depth > 100000) {
		fprintf(stderr, "usage: deep [SECONDS [DEPTH]]\n");
		return 2;
	}
	run(seconds, depth);
	return 0;
}
