/* sleeper: test program that blocks often, for scheduler tracepoints.
 * Usage: sleeper [ITERATIONS [MICROSECONDS]]. Does a little work, then
 * sleeps MICROSECONDS (default 1000), ITERATIONS times (default 50), so every
 * iteration causes at least one sched:sched_switch. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

static NOINLINE void busy(unsigned long rounds)
{
	unsigned long value = 1;

	for (unsigned long i = 0; i < rounds; i++)
		value = value * 6364136223846793005UL + 1442695040888963407UL;
	sink = value;
}

int main(int argc, char **argv)
{
	int iterations = argc > 1 ? atoi(argv[1]) : 50;
	long micros = argc > 2 ? atol(argv[2]) : 1000;
	struct timespec pause;

	if (iterations < 0 || micros < 0 || micros >= 1000000) {
		fprintf(stderr, "usage: sleeper [ITERATIONS [MICROSECONDS]]\n");
		return 2;
	}
	pause.tv_sec = 0;
	pause.tv_nsec = micros * 1000;
	for (int i = 0; i < iterations; i++) {
		busy(20000);
		nanosleep(&pause, NULL);
	}
	return 0;
}
