/* Transparent huge pages for the heap, when PYSTITCH_HUGEPAGES=1 asks.
 *
 * A run faults in memory it touches once: the symbol tables, kallsyms,
 * and the debug sections it decompresses (tens of megabytes for libc's
 * debug file). Where the kernel gives transparent huge pages only on
 * request (the "madvise" setting, the default of many distributions),
 * glibc (2.35 and later) asks for them for its heap when the
 * glibc.malloc.hugetlb tunable is set, which it reads only at start-up.
 * Then 2 MB pages take the place of 512 faults of 4 KB each.
 *
 * It is not the default, because it is not faster where it was measured:
 * on a 2-CPU VM, run after run, the CPU time was the same with and
 * without, and after 3 s idle it was 11-27% less without them (c
 * capture 0.16 s against 0.22 s). That VM has a virtio balloon that
 * gives free memory back to its host, which hands a page back only when
 * it is touched again; a huge page is made of exactly such free 2 MB
 * blocks, and zeroing one touches 512 pages the host must fault in. The
 * restart itself costs a second start (about 3 ms of loading libraries).
 *
 * Asked for, pystitch starts itself again, once, with the tunable added
 * to GLIBC_TUNABLES. It does not when the environment already sets that
 * tunable, under valgrind (which would stop following the program), when
 * the kernel's setting is "always" or "never", for a set-id or capability
 * binary (glibc strips tunables from such a start: a second start could
 * not tell it had been done), or when the program was started by naming
 * the dynamic loader (its own path is then the loader's); a marker in the
 * environment makes the restart happen once whatever the child sees. If
 * the exec fails it goes on as it is. The output is the same either way.
 *
 * The restart execs the path the program was started by (AT_EXECFN) when
 * that is still the running file, so that it keeps its name in ps, top
 * and perf's own captures (exec'ing /proc/self/exe would name it "exe");
 * otherwise /proc/self/exe, and the name is put back with PR_SET_NAME. */
#include <stdio.h>
#ifdef __GLIBC__ /* defined by the headers above */
#include <gnu/libc-version.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define TUNABLE "glibc.malloc.hugetlb"
#define THP_SETTING "/sys/kernel/mm/transparent_hugepage/enabled"
#define RESTARTED "PYSTITCH_HUGEPAGES_RESTARTED"

static bool glibc_has_tunable(void)
{
#ifdef __GLIBC__
	unsigned major = 0, minor = 0;

	if (sscanf(gnu_get_libc_version(), "%u.%u", &major, &minor) != 2)
		return false;
	return major > 2 || (major == 2 && minor >= 35);
#else
	return false;
#endif
}

/* Whether the kernel gives huge pages only to memory that asks. */
static bool thp_on_request(void)
{
	char line[128];
	FILE *f = fopen(THP_SETTING, "r");
	bool yes;

	if (!f)
		return false;
	yes = fgets(line, sizeof(line), f) && strstr(line, "[madvise]");
	fclose(f);
	return yes;
}

/* The file to exec again: the one the program was started by, when it
 * still is the running file. */
static const char *own_path(void)
{
	const char *started = (const char *)getauxval(AT_EXECFN);
	struct stat running, named;

	if (started && stat("/proc/self/exe", &running) == 0 && stat(started, &named) == 0 &&
	    running.st_dev == named.st_dev && running.st_ino == named.st_ino)
		return started;
	return "/proc/self/exe";
}

void ps_cli_use_huge_pages(char **argv)
{
	const char *tunables = getenv("GLIBC_TUNABLES");
	const char *setting = getenv("PYSTITCH_HUGEPAGES");
	const char *preload = getenv("LD_PRELOAD");
	const char *restarted = getenv(RESTARTED);
	char name[16] = ""; /* a comm is at most 15 bytes */
	char *value;
	size_t len;

	if (restarted) {
		/* this is the restart: the marker holds the name it had */
		if (*restarted)
			prctl(PR_SET_NAME, restarted, 0, 0, 0);
		unsetenv(RESTARTED);
		return;
	}
	if (!setting || strcmp(setting, "1") != 0 || (tunables && strstr(tunables, TUNABLE)) ||
	    (preload && strstr(preload, "vgpreload")) || getauxval(AT_SECURE) ||
	    getauxval(AT_BASE) == 0 || !glibc_has_tunable() || !thp_on_request())
		return;
	len = (tunables ? strlen(tunables) + 1 : 0) + sizeof(TUNABLE "=1");
	value = malloc(len);
	if (!value)
		return;
	snprintf(value, len, "%s%s" TUNABLE "=1", tunables ? tunables : "", tunables ? ":" : "");
	/* the part before the ':' is the old value, to put back */
	if (setenv("GLIBC_TUNABLES", value, 1) == 0) {
		prctl(PR_GET_NAME, name, 0, 0, 0);
		if (setenv(RESTARTED, name, 1) == 0) {
			execv(own_path(), argv);
			unsetenv(RESTARTED);
		}
		/* still here: go on without */
		if (tunables) {
			value[len - sizeof(TUNABLE "=1") - 1] = '\0';
			setenv("GLIBC_TUNABLES", value, 1);
		} else {
			unsetenv("GLIBC_TUNABLES");
		}
	}
	free(value);
}
