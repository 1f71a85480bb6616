/* signals: work inside a signal handler, for the native-stack tests.
 * Usage: signals [SECONDS]. A SIGPROF interval timer asks for a signal
 * every millisecond of CPU time (the kernel sends at most one per tick);
 * its handler does about a third of the work, so many samples have stacks
 * that run from the handler through the kernel's signal frame
 * (__restore_rt) back into the interrupted code. Spins for SECONDS of CPU
 * time (default 0.4); prints nothing on stdout.
 * With "nested" as second argument it also, every few milliseconds, makes
 * SIGUSR1 and SIGPROF pending together and unblocks them: the kernel sets
 * up both handlers' frames at once, so the SIGPROF handler runs on top of
 * on_sigusr1 interrupted at its first instruction (an activation whose PC
 * is a function's entry, where the byte before belongs to no function). */
#include <math.h>
#include <signal.h>
#include <stdbool.h>
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

static NOINLINE void on_sigusr1(int signo)
{
	(void)signo;
	handled++;
}

/* both signals pending, then delivered together */
static void deliver_nested(void)
{
	sigset_t both, old;

	sigemptyset(&both);
	sigaddset(&both, SIGUSR1);
	sigaddset(&both, SIGPROF);
	sigprocmask(SIG_BLOCK, &both, &old);
	raise(SIGUSR1);
	raise(SIGPROF);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static NOINLINE double main_work(double x)
{
	for (int i = 0; i < 5000; i++)
		x = x * 0.999 + cos(x + i) * 1e-3;
	return x;
}

static NOINLINE void run(double seconds, bool nested)
{
	struct timespec start;
	double x = 0.5;
	unsigned rounds = 0;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
	do {
		x = main_work(x);
		if (nested && ++rounds % 16 == 0)
			deliver_nested();
	} while (cpu_time_since(&start) < seconds);
	sink = x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.4;
	bool nested = argc > 2 && strcmp(argv[2], "nested") == 0;
	struct itimerval timer = { { 0, 1000 }, { 0, 1000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	struct sigaction action;

	if (seconds < 0) {
		fprintf(stderr, "usage: signals [SECONDS [nested]]\n");
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
	action.sa_handler = on_sigusr1;
	if (sigaction(SIGUSR1, &action, NULL) != 0) {
		perror("signals: SIGUSR1");
		return 1;
	}
	run(seconds, nested);
	setitimer(ITIMER_PROF, &off, NULL);
	return handled > 0 ? 0 : 1;
}
