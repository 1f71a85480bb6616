/* threads: multi-threaded test program for the end-to-end tests.
 * Usage: threads [SECONDS [THREADS]]. Starts THREADS workers (default 3,
 * at most 16) that each spin for SECONDS of CPU time (default 0.3) in libm,
 * so a capture holds samples, FORK and EXIT records of several threads.
 * Prints nothing on stdout. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
#define MAX_THREADS 16

struct worker {
	pthread_t thread;
	int index;
	double seconds;
	double result;
};

/* CPU time, not wall time: a loaded machine stretches the run instead of
 * thinning the samples (cpu-clock samples follow CPU time). */
static double cpu_time_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

/* Named as a C++ compiler would name pystitch::work_chunk(int, double), so
 * that captures hold a mangled name (perf script --demangle, --no-demangle). */
static NOINLINE double work_chunk(int index, double x) __asm__("_ZN8pystitch10work_chunkEid");
static NOINLINE double work_chunk(int index, double x)
{
	double sum = 0;

	for (int i = 0; i < 5000; i++)
		sum += index % 2 ? sin(x + i) : cos(x - i);
	return sum;
}

static void *worker_main(void *arg)
{
	struct worker *worker = arg;
	struct timespec start;
	double x = worker->index;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	do
		x = work_chunk(worker->index, x) * 1e-3;
	while (cpu_time_since(&start) < worker->seconds);
	worker->result = x;
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.3;
	int nr_threads = argc > 2 ? atoi(argv[2]) : 3;
	struct worker workers[MAX_THREADS];
	double total = 0;

	if (seconds < 0 || nr_threads < 1 || nr_threads > MAX_THREADS) {
		fprintf(stderr, "usage: threads [SECONDS [THREADS]]\n");
		return 2;
	}
	for (int i = 0; i < nr_threads; i++) {
		workers[i] = (struct worker){ .index = i, .seconds = seconds };
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	for (int i = 0; i < nr_threads; i++) {
		pthread_join(workers[i].thread, NULL);
		total += workers[i].result;
	}
	return isnan(total) ? 1 : 0;
}
