/* Reading a file descriptor through short reads and interruptions. */
#ifndef PS_BASE_FDIO_H
#define PS_BASE_FDIO_H

#include <errno.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

/* Up to size bytes into buf, fewer only at the end of the input: how
 * many, or -errno when a read fails. */
static inline ssize_t ps_read_full(int fd, void *buf, size_t size)
{
	size_t have = 0;

	while (have < size) {
		ssize_t n = read(fd, (char *)buf + have, size - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		have += (size_t)n;
	}
	return (ssize_t)have;
}

#endif /* PS_BASE_FDIO_H */
