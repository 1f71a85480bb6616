/* shlib: calls through the project's shared library libpsworker.so and
 * through libc and libm, for the native-stack tests.
 * Usage: shlib [SECONDS]. Spins for SECONDS of CPU time (default 0.4);
 * prints nothing on stdout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "psworker.h"

#define NOINLINE __attribute__((noinline))
#define COUNT 2048

static volatile double sink;

static double cpu_time_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

/* Called back from libpsworker.so. */
static NOINLINE double reshape(double x)
{
	return tanh(x) + atan2(x, 1.5) + pow(fabs(x) + 1.0, 0.3);
}

static NOINLINE void fill(double *values, size_t n, unsigned *state)
{
	for (size_t i = 0; i < n; i++) {
		*state = *state * 1103515245u + 12345u;
		values[i] = (double)(*state >> 8) / (double)(1u << 24) * 8.0 - 4.0;
	}
}

static NOINLINE double round_trip(double *values, unsigned *state)
{
	char text[COUNT * 4];
	double result;

	fill(values, COUNT, state);
	result = psw_transform(values, COUNT, reshape);
	result += psw_sort_spread(values, COUNT);
	result += psw_norm(values, COUNT);
	for (size_t i = 0; i + 1 < sizeof(text); i++)
		text[i] = (char)('a' + (*state >> (i % 24)) % 26);
	text[sizeof(text) - 1] = 0;
	result += (double)(psw_checksum(text, strlen(text)) & 0xffff);
	return result;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.4;
	double *values;
	unsigned state = 12345;
	struct timespec start;
	double total = 0;

	if (seconds < 0) {
		fprintf(stderr, "usage: shlib [SECONDS]\n");
		return 2;
	}
	values = malloc(COUNT * sizeof(*values));
	if (!values)
		return 1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
	do
		total += round_trip(values, &state);
	while (cpu_time_since(&start) < seconds);
	sink = total;
	free(values);
	return 0;
}
