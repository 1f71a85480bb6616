/* What `pystitch record` reads of processes in /proc: their pid in their
 * own pid namespace, whether they share this process's mounts (and so
 * its /tmp), their parent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record_priv.h"

pid_t record_namespace_pid(pid_t pid)
{
	char path[64], line[256];
	pid_t inner = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *save = NULL;

			for (char *w = strtok_r(line + 6, " \t\n", &save); w;
			     w = strtok_r(NULL, " \t\n", &save))
				inner = (pid_t)atoi(w);
			break;
		}
	}
	fclose(f);
	return inner;
}

bool record_same_mount_namespace(pid_t pid)
{
	char path[64], theirs[64] = "", ours[64] = "";
	ssize_t a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	a = readlink(path, theirs, sizeof(theirs) - 1);
	b = readlink("/proc/self/ns/mnt", ours, sizeof(ours) - 1);
	return a > 0 && b > 0 && a == b && memcmp(theirs, ours, (size_t)a) == 0;
}

pid_t record_parent_pid(pid_t pid)
{
	char path[64], line[512], *close_paren;
	int parent = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	/* "PID (COMM) STATE PPID ...": the comm may hold spaces and ')' */
	if (fgets(line, sizeof(line), f) && (close_paren = strrchr(line, ')')) &&
	    sscanf(close_paren + 1, " %*c %d", &parent) != 1)
		parent = -1;
	fclose(f);
	return (pid_t)parent;
}
