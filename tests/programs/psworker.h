/* psworker.h: the interface of libpsworker.so (see psworker.c). */
#ifndef PS_TESTS_PSWORKER_H
#define PS_TESTS_PSWORKER_H

#include <stddef.h>

/* Sorts values with qsort() and returns max - min. */
double psw_sort_spread(double *values, size_t n);
/* A libm-heavy norm of values. */
double psw_norm(const double *values, size_t n);
/* values[i] = fn(values[i]); returns their sum. */
double psw_transform(double *values, size_t n, double (*fn)(double));
/* A hash of size bytes, copied through memcpy(). */
unsigned long psw_checksum(const void *data, size_t size);

#endif
