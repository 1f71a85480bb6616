/* Output files written without harming what their path names (the
 * public ps_output_file_*, pystitch/output.h): symbolic links followed,
 * regular files replaced through an unnamed file linked into place at the
 * end, everything else written through.
 */
#define _GNU_SOURCE 1 /* O_TMPFILE, AT_EMPTY_PATH */
#include "pystitch/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* as the kernel's own limit on links followed in one lookup */
#define MAX_LINKS 40
/* tries at a fresh temporary name before giving up */
#define MAX_NAME_TRIES 100

struct ps_output_file {
	int fd; /* write here; -1 when closed */
	bool own_fd; /* false: the caller's descriptor (ps_output_file_open_fd) */
	/* commit links the written file to target (a regular file, or a
	 * path that did not exist) */
	bool replace;
	char *target; /* path with its symbolic links resolved */
	char *temporary; /* the named temporary, without unnamed files */
	int error; /* of the first failed write */
};

static char *join(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);
	char *out = malloc(alen + 1 + blen + 1);

	if (!out)
		return NULL;
	memcpy(out, a, alen);
	out[alen] = '/';
	memcpy(out + alen + 1, b, blen + 1);
	return out;
}

/* The length of path's directory part ("a/b" -> 1), 0 for none ("b"). */
static size_t dir_length(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path) : 0;
}

static char *read_link(const char *path)
{
	for (size_t size = 256; size <= 65536; size *= 2) {
		char *buf = malloc(size);
		ssize_t n;

		if (!buf)
			return NULL;
		n = readlink(path, buf, size);
		if (n < 0) {
			free(buf);
			return NULL;
		}
		if ((size_t)n < size) {
			buf[n] = '\0';
			return buf;
		}
		free(buf);
	}
	errno = ENAMETOOLONG;
	return NULL;
}

/* Follow path's symbolic links to what they end at: *out (malloc'd), and
 * *exists with its status in *st, or !*exists when nothing is there. */
static int resolve_links(const char *path, char **out, struct stat *st, bool *exists)
{
	char *cur = strdup(path);

	if (!cur)
		return -ENOMEM;
	for (int hops = 0;; hops++) {
		char *link, *next;

		if (lstat(cur, st) != 0) {
			if (errno != ENOENT) {
				int err = -errno;
				free(cur);
				return err;
			}
			*exists = false;
			*out = cur;
			return 0;
		}
		if (!S_ISLNK(st->st_mode)) {
			*exists = true;
			*out = cur;
			return 0;
		}
		if (hops == MAX_LINKS) {
			free(cur);
			return -ELOOP;
		}
		link = read_link(cur);
		if (!link) {
			int err = errno == ENOMEM || !errno ? -ENOMEM : -errno;
			free(cur);
			return err;
		}
		/* a relative link is relative to the link's own directory */
		if (link[0] == '/' || !strchr(cur, '/'))
			next = link;
		else {
			next = join(cur, dir_length(cur), link);
			free(link);
		}
		free(cur);
		if (!next)
			return -ENOMEM;
		cur = next;
	}
}

/* The umask, read from /proc rather than set and restored, which would
 * race with other threads; 077 (files stay private) when it cannot be
 * read. */
static mode_t current_umask(void)
{
	FILE *status = fopen("/proc/self/status", "re");
	char line[128];
	unsigned mask = 077;
	bool found = false;

	if (status) {
		while (!found && fgets(line, sizeof(line), status))
			found = sscanf(line, "Umask: %o", &mask) == 1;
		fclose(status);
	}
	return (mode_t)mask & 0777;
}

/* target + ".XXXXXX" with six random letters. */
static char *temporary_name(const char *target)
{
	static const char letters[] =
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t len = strlen(target);
	unsigned char random[6];
	char *name = malloc(len + 8);

	if (!name)
		return NULL;
	if (getrandom(random, sizeof(random), 0) != (ssize_t)sizeof(random)) {
		/* without randomness a counter of tries still moves on */
		static const unsigned char fallback[6] = { 1, 2, 3, 5, 8, 13 };
		memcpy(random, fallback, sizeof(random));
		random[0] ^= (unsigned char)getpid();
		random[1] ^= (unsigned char)rand();
	}
	memcpy(name, target, len);
	name[len] = '.';
	for (size_t i = 0; i < sizeof(random); i++)
		name[len + 1 + i] = letters[random[i] % (sizeof(letters) - 1)];
	name[len + 7] = '\0';
	return name;
}

/* Make a file of that name for writing, only if none is there: the fd,
 * or -errno. */
static int create_new(const char *name)
{
	int fd = open(name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);

	return fd < 0 ? -errno : fd;
}

/* A named temporary beside the target, for file systems without unnamed
 * files; of->temporary is set only once the file exists, so that nothing
 * of another's is ever removed in its name. The fd, or -errno. */
static int open_named_temporary(struct ps_output_file *of)
{
	int fd = -EEXIST;

	for (int i = 0; i < MAX_NAME_TRIES && fd == -EEXIST; i++) {
		char *name = temporary_name(of->target);

		if (!name)
			return -ENOMEM;
		fd = create_new(name);
		if (fd >= 0)
			of->temporary = name;
		else
			free(name);
	}
	return fd;
}

/* A file in the target's directory to write into: unnamed where the file
 * system allows, else a named temporary. */
static int open_replacement(struct ps_output_file *of, const struct stat *old, bool exists)
{
	size_t dlen = dir_length(of->target);
	char *dir = dlen ? strndup(of->target, dlen) : strdup(of->target[0] == '/' ? "/" : ".");
	int fd, err;

	if (!dir)
		return -ENOMEM;
	/* a new file gets 0666 less the umask, as open(2) gives it */
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
	err = fd < 0 ? -errno : 0;
	free(dir);
	if (err == -EOPNOTSUPP || err == -EISDIR || err == -EINVAL) {
		fd = open_named_temporary(of);
		err = fd < 0 ? fd : 0;
		if (!err && !exists && fchmod(fd, 0666 & ~current_umask()) != 0)
			err = -errno;
	}
	if (!err && exists) {
		/* the replacement is the same file to everyone but its
		 * content: its owner where we may set it, and its mode */
		if (old->st_uid != geteuid() || old->st_gid != getegid())
			(void)!fchown(fd, old->st_uid, old->st_gid);
		if (fchmod(fd, old->st_mode & 07777) != 0)
			err = -errno;
	}
	of->fd = fd < 0 ? -1 : fd;
	if (err)
		return err; /* the caller aborts: fd closed, temporary removed */
	of->replace = true;
	return 0;
}

/* Close the descriptor and remove what was not kept. */
static void release(struct ps_output_file *of)
{
	if (of->fd >= 0 && of->own_fd)
		close(of->fd);
	if (of->temporary)
		unlink(of->temporary);
	free(of->temporary);
	free(of->target);
	free(of);
}

int ps_output_file_open(const char *path, struct ps_output_file **out)
{
	struct ps_output_file *of = calloc(1, sizeof(*of));
	struct stat st;
	bool exists = false;
	int err;

	*out = NULL;
	if (!of)
		return -ENOMEM;
	of->fd = -1;
	of->own_fd = true;
	err = resolve_links(path, &of->target, &st, &exists);
	if (err) {
		release(of);
		return err;
	}
	if (exists && S_ISDIR(st.st_mode))
		err = -EISDIR;
	else if (!exists || S_ISREG(st.st_mode))
		err = open_replacement(of, &st, exists);
	else {
		/* a device, FIFO or socket: written as it is, never replaced */
		of->fd = open(of->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		err = of->fd < 0 ? -errno : 0;
	}
	if (err) {
		release(of);
		return err;
	}
	*out = of;
	return 0;
}

int ps_output_file_open_fd(int fd, struct ps_output_file **out)
{
	struct ps_output_file *of;

	*out = NULL;
	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	of = calloc(1, sizeof(*of));
	if (!of)
		return -ENOMEM;
	of->fd = fd;
	*out = of;
	return 0;
}

int ps_output_file_write(void *file, const void *data, size_t size)
{
	struct ps_output_file *of = file;
	const char *p = data;

	while (size && !of->error) {
		ssize_t n = write(of->fd, p, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			of->error = n < 0 ? -errno : -EIO;
			break;
		}
		p += n;
		size -= (size_t)n;
	}
	return of->error;
}

int ps_output_file_fd(const struct ps_output_file *file)
{
	return file->fd;
}

/* Give the unnamed file a name: the path of its descriptor in /proc, or
 * the descriptor itself where /proc is not mounted (AT_EMPTY_PATH needs
 * CAP_DAC_READ_SEARCH). */
static int link_unnamed(int fd, const char *name)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno != ENOENT)
		return -errno;
	return linkat(fd, "", AT_FDCWD, name, AT_EMPTY_PATH) == 0 ? 0 : -errno;
}

/* Link the unnamed file at a fresh name beside the target, to be renamed
 * over it: the target is then the old file or the new one, never a part
 * of either. of->temporary is set once that name exists. */
static int link_temporary(struct ps_output_file *of)
{
	int err = -EEXIST;

	for (int i = 0; i < MAX_NAME_TRIES && err == -EEXIST; i++) {
		char *name = temporary_name(of->target);

		if (!name)
			return -ENOMEM;
		err = link_unnamed(of->fd, name);
		if (!err)
			of->temporary = name;
		else
			free(name);
	}
	return err;
}

int ps_output_file_commit(struct ps_output_file *of)
{
	int err = of->error;

	if (!err && of->replace && !of->temporary)
		err = link_temporary(of);
	if (of->own_fd && close(of->fd) != 0 && !err)
		err = -errno;
	of->fd = -1;
	if (!err && of->temporary && rename(of->temporary, of->target) != 0)
		err = -errno;
	if (!err) {
		free(of->temporary);
		of->temporary = NULL; /* renamed: nothing to remove */
	}
	release(of);
	return err;
}

void ps_output_file_abort(struct ps_output_file *of)
{
	if (of)
		release(of);
}
