/* psworker: the project's own shared library (libpsworker.so) for the
 * native-stack tests. Its functions call libm, call libc's qsort() with a
 * comparator of their own (libc calling back into the library), and call
 * back into the program, so stacks cross program -> library -> libc/libm
 * -> library -> program. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "psworker.h"

#define NOINLINE __attribute__((noinline))

static NOINLINE int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double psw_sort_spread(double *values, size_t n)
{
	qsort(values, n, sizeof(values[0]), compare_doubles);
	return values[n - 1] - values[0];
}

double psw_norm(const double *values, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum = hypot(sum, values[i]) + exp(-fabs(values[i]));
	return sum;
}

double psw_transform(double *values, size_t n, double (*fn)(double))
{
	double sum = 0;

	for (size_t i = 0; i < n; i++) {
		values[i] = fn(values[i]);
		sum += values[i];
	}
	return sum;
}

unsigned long psw_checksum(const void *data, size_t size)
{
	unsigned char copy[512];
	unsigned long h = 5381;

	while (size > 0) {
		size_t chunk = size < sizeof(copy) ? size : sizeof(copy);
		memcpy(copy, data, chunk);
		for (size_t i = 0; i < chunk; i++)
			h = h * 33 + copy[i];
		data = (const unsigned char *)data + chunk;
		size -= chunk;
	}
	return h;
}
