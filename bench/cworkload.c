/* cworkload: the C workload of bench/compare.sh --workload c. Usage:
 * cworkload [SECONDS [THREADS]]. THREADS workers (default 2, at most 16)
 * each spin for SECONDS of their own CPU time (default 1) through chains
 * of functions the compiler inlines, three to six levels deep, that end in
 * libm (sin, exp, log1p, cbrt) and libc (qsort, memcpy, snprintf, strtod).
 * So a DWARF capture of it has several threads, and most stacks have
 * inline frames both at the leaf and at return addresses in the middle:
 * the case where printing inlined frames costs perf script the most.
 * Prints nothing on stdout. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/programs/wave.h"

#define NOINLINE __attribute__((noinline))
#define MAX_THREADS 16

struct worker {
	pthread_t thread;
	unsigned index;
	double seconds;
	double result;
};

/* thread CPU time: a busy machine stretches the run rather than thinning
 * the samples */
static double cpu_time_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

/* ---- chain 1: numeric, five levels into libm (four in wave.h) ---- */

INLINE double smooth(double *values, int n)
{
	for (int i = 1; i < n; i++)
		values[i] = values[i] * 0.75 + values[i - 1] * 0.25;
	return accumulate(values, n);
}

static NOINLINE double stage_wave(double seed)
{
	double values[96];

	for (int i = 0; i < 96; i++)
		values[i] = seed + i * 0.125;
	return smooth(values, 96);
}

/* ---- chain 2: sorting through qsort with an inlined comparison ---- */

INLINE int compare_keys(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int compare_records(const void *pa, const void *pb)
{
	uint64_t a, b;

	memcpy(&a, pa, sizeof(a));
	memcpy(&b, pb, sizeof(b));
	return compare_keys(a, b);
}

INLINE uint64_t scramble(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	return x ^ (x >> 29);
}

INLINE void fill_records(uint64_t *records, int n, uint64_t seed)
{
	for (int i = 0; i < n; i++)
		records[i] = scramble(seed + (uint64_t)i);
}

INLINE uint64_t sort_and_pick(uint64_t *records, int n, uint64_t seed)
{
	fill_records(records, n, seed);
	qsort(records, (size_t)n, sizeof(*records), compare_records);
	return records[n / 2];
}

static NOINLINE uint64_t stage_sort(uint64_t seed)
{
	uint64_t records[512];

	return sort_and_pick(records, 512, seed);
}

/* ---- chain 3: text through snprintf and strtod ---- */

INLINE size_t format_value(char *buf, size_t size, double x)
{
	return (size_t)snprintf(buf, size, "%.9g;", x);
}

INLINE double parse_back(const char *text)
{
	return strtod(text, NULL);
}

INLINE double round_trip(double x)
{
	char buf[64];

	format_value(buf, sizeof(buf), x);
	return parse_back(buf);
}

INLINE double text_pass(double x, int n)
{
	double sum = 0;

	for (int i = 0; i < n; i++)
		sum += round_trip(x + i * 0.01);
	return sum;
}

static NOINLINE double stage_text(double x)
{
	return text_pass(x, 40);
}

/* ---- chain 4: an inlined caller of a non-inlined leaf ---- */

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

INLINE double stage_roots_inner(double x)
{
	return roots_of(x, 200) * 0.5;
}

INLINE double stage_roots(double x)
{
	return stage_roots_inner(x) + 1.0;
}

/* the loop of each thread inlines stage_roots() and its callees: samples
 * in leaf_root return into an inline chain three levels deep */
static NOINLINE double run(unsigned index, double seconds)
{
	struct timespec start;
	double x = 0.5 + index;
	uint64_t h = index + 1;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	do {
		x = stage_wave(x) * 1e-3;
		h = stage_sort(h);
		x += stage_text(x) * 1e-9;
		x += stage_roots(x) * 1e-6;
		if (!isfinite(x) || fabs(x) > 1e6)
			x = 0.5;
	} while (cpu_time_since(&start) < seconds);
	return x + (double)(h & 0xff);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->result = run(w->index, w->seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker workers[MAX_THREADS];
	double seconds = argc > 1 ? atof(argv[1]) : 1.0, total = 0;
	int threads = argc > 2 ? atoi(argv[2]) : 2;

	if (!(seconds >= 0) || threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "usage: cworkload [SECONDS [THREADS (1-%d)]]\n", MAX_THREADS);
		return 2;
	}
	for (int i = 0; i < threads; i++) {
		workers[i] = (struct worker){ .index = (unsigned)i, .seconds = seconds };
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) != 0) {
			fprintf(stderr, "cworkload: cannot start thread %d\n", i);
			return 1;
		}
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(workers[i].thread, NULL);
		total += workers[i].result;
	}
	/* keeps the work from being optimised away */
	if (total == 42.0)
		fprintf(stderr, "%g\n", total);
	return 0;
}
