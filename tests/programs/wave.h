/* The numeric chain of inlined functions, four levels down to libm, that
 * tests/programs/inlining.c and bench/cworkload.c both spin in: every
 * level is always_inline, so stacks in sin/cos/exp return into inlined
 * call sites. */
#ifndef PS_TEST_PROGRAMS_WAVE_H
#define PS_TEST_PROGRAMS_WAVE_H

#include <math.h>

#define INLINE static inline __attribute__((always_inline))

INLINE double square(double x)
{
	return x * x;
}

INLINE double wave(double x)
{
	return sin(x) + square(cos(x * 0.5));
}

INLINE double damped(double x, int i)
{
	return wave(x + i) * exp(-square(x) * 1e-4);
}

INLINE double accumulate(const double *values, int n)
{
	double sum = 0;

	for (int i = 0; i < n; i++)
		sum += damped(values[i], i);
	return sum;
}

#endif /* PS_TEST_PROGRAMS_WAVE_H */
