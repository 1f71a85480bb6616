/* signals: work inside a signal handler, for the native-stack tests.
 * Usage: signals [SECONDS]. A SIGPROF interval timer asks for a signal
 * every millisecond of CPU time (the kernel sends at most one per tick);
 * its handler does about a third of the work, so many samples have stacks
 * that run from the handler through the kernel's signal frame
 * (__restore_rt) back into the interrupted code. Spins for SECONDS of CPU
 * time (default 0.4); prints nothing on stdout. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile double sink;
static volatile sig_atomic_t handled;

static double cpu_time_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

static NOINLINE double handler_work(int rounds)
{
	double sum = 0;

	for (int i = 0; i < rounds; i++)
		sum += sqrt((double)i) * sin((double)i * 0.01);
	return sum;
}

static NOINLINE void on_sigprof(int signo)
{
	(void)signo;
	sink = handler_work(120000);
	handled++;
}

static NOINLINE double main_work(double x)
{
	for (int i = 0; i < 5000; i++)
		x = x * 0.999 + cos(x + i) * 1e-3;
	return x;
}

static NOINLINE void run(double seconds)
{
	struct timespec start;
	double x = 0.5;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
	do
		x = main_work(x);
	while (cpu_time_since(&start) < seconds);
	sink = x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.4;
	struct itimerval timer = { { 0, 1000 }, { 0, 1000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	struct sigaction action;

	if (seconds < 0) {
		fprintf(stderr, "usage: signals [SECONDS]\n");
		return 2;
	}
	memset(&action, 0, sizeof(action));
	action.sa_handler = on_sigprof;
	sigemptyset(&action.sa_mask);
	action.sa_flags = SA_RESTART;
	if (sigaction(SIGPROF, &action, NULL) != 0 || setitimer(ITIMER_PROF, &timer, NULL) != 0) {
		perror("signals: SIGPROF timer");
		return 1;
	}
	run(seconds);
	setitimer(ITIMER_PROF, &off, NULL);
	return handled > 0 ? 0 : 1;
}
