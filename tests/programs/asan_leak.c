/* asan_leak: an AddressSanitizer test program for the end-to-end tests.
 * Usage: asan_leak [SECONDS]. Allocates and frees through the sanitizer's
 * allocator for SECONDS of CPU time (default 0.3), having left a share of
 * its first blocks unreachable, so that LeakSanitizer reports them at exit.
 * To symbolize the report the sanitizer runtime maps parts of its own
 * library and of debug files, some below the library: the base Debian
 * perf's libunwind looks the library up from moves under the stacks being
 * unwound. Prints nothing on stdout; run it with LSAN_OPTIONS=exitcode=0
 * to have it exit 0 after its report. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define BLOCKS 200000

static volatile long sink;
static void *kept[BLOCKS];

static double cpu_time_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

static NOINLINE long churn(size_t size)
{
	unsigned char *p = malloc(size);
	long sum = 0;

	if (!p)
		return 0;
	memset(p, (int)(size & 0xff), size);
	for (size_t i = 0; i < size; i += 64)
		sum += p[i];
	free(p);
	return sum;
}

/* blocks of a few call sites, so the report has several stacks */
static NOINLINE void *keep_a(void)
{
	return malloc(48);
}

static NOINLINE void *keep_b(void)
{
	return calloc(1, 80);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.3;
	struct timespec start;

	for (int i = 0; i < BLOCKS; i++) {
		kept[i] = i & 1 ? keep_a() : keep_b();
		if (i % 3 == 0)
			kept[i] = NULL; /* leaked */
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
	do {
		for (size_t size = 16; size < 32768; size += 997)
			sink += churn(size);
	} while (cpu_time_since(&start) < seconds);
	return 0;
}
