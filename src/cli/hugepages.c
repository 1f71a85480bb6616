/* Transparent huge pages for the heap.
 *
 * A run spends a good part of its time faulting in memory touched once:
 * the symbol tables, kallsyms, and the debug sections libelf decompresses
 * (tens of megabytes for libc's debug file). With 4 KB pages that is over
 * ten thousand page faults, about a sixth of the wall time of a 20,000-
 * sample capture on a VM. Where the kernel gives transparent huge pages
 * only on request (the "madvise" setting, the default of many
 * distributions), glibc (2.35 and later) asks for them for its heap when
 * the glibc.malloc.hugetlb tunable is set, which it reads only at start-up.
 * So pystitch starts itself again, once, with the tunable added to
 * GLIBC_TUNABLES. It does not when the environment already sets that
 * tunable, when PYSTITCH_HUGEPAGES=0, under valgrind (which would stop
 * following the program), or when the kernel's setting is "always" or
 * "never"; if the exec fails it goes on as it is. The output is the same
 * either way. */
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#define TUNABLE "glibc.malloc.hugetlb"
#define THP_SETTING "/sys/kernel/mm/transparent_hugepage/enabled"

static bool glibc_has_tunable(void)
{
	unsigned major = 0, minor = 0;

	if (sscanf(gnu_get_libc_version(), "%u.%u", &major, &minor) != 2)
		return false;
	return major > 2 || (major == 2 && minor >= 35);
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

void ps_cli_use_huge_pages(char **argv)
{
	const char *tunables = getenv("GLIBC_TUNABLES");
	const char *setting = getenv("PYSTITCH_HUGEPAGES");
	const char *preload = getenv("LD_PRELOAD");
	char *value;
	size_t len;

	if ((setting && strcmp(setting, "0") == 0) || (tunables && strstr(tunables, TUNABLE)) ||
	    (preload && strstr(preload, "vgpreload")) || !glibc_has_tunable() || !thp_on_request())
		return;
	len = (tunables ? strlen(tunables) + 1 : 0) + sizeof(TUNABLE "=1");
	value = malloc(len);
	if (!value)
		return;
	snprintf(value, len, "%s%s" TUNABLE "=1", tunables ? tunables : "", tunables ? ":" : "");
	/* the part before the ':' is the old value, to put back */
	if (setenv("GLIBC_TUNABLES", value, 1) == 0) {
		execv("/proc/self/exe", argv);
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
