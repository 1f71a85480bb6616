/* spawner: test program for whole-machine captures, the way a build or a
 * shell loop fills a machine with short processes. Usage: spawner COUNT
 * [PER_SECOND [PROGRAM [ARG...]]]: runs PROGRAM (default /bin/true) COUNT
 * times, one after the other (fork, exec, wait), at most PER_SECOND
 * times a second (default 0: as fast as it can), so that at most one of
 * them lives at a time whatever COUNT is, and COUNT / PER_SECOND is how
 * long it runs. Exits 1 when a run fails. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait until start + seconds. */
static void wait_until(double start, double seconds)
{
	double left = start + seconds - now();
	struct timespec pause;

	if (left <= 0)
		return;
	pause.tv_sec = (time_t)left;
	pause.tv_nsec = (long)((left - (double)pause.tv_sec) * 1e9);
	nanosleep(&pause, NULL);
}

int main(int argc, char **argv)
{
	char *fallback[] = { "/bin/true", NULL };
	char **program = argc > 3 ? argv + 3 : fallback;
	long count = argc > 1 ? atol(argv[1]) : 100;
	long per_second = argc > 2 ? atol(argv[2]) : 0;
	double start = now();

	if (count < 0 || per_second < 0) {
		fprintf(stderr, "usage: spawner COUNT [PER_SECOND [PROGRAM [ARG...]]]\n");
		return 2;
	}
	for (long i = 0; i < count; i++) {
		int status;
		pid_t pid;

		if (per_second)
			wait_until(start, (double)i / (double)per_second);
		pid = fork();
		if (pid < 0) {
			perror("spawner: fork");
			return 1;
		}
		if (pid == 0) {
			execv(program[0], program);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "spawner: %s failed\n", program[0]);
			return 1;
		}
	}
	return 0;
}
