/* What the fuzz targets share: the input as a file, since the library reads
 * most untrusted bytes from files named by path, as the commands do. */
#ifndef PS_FUZZ_COMMON_H
#define PS_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A memfd holding the input, at offset 0, and a path that opens it
 * ("/proc/self/fd/N"); -1 when it cannot be made. */
static inline int fuzz_input_file(const uint8_t *data, size_t size, char *path, size_t path_size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	snprintf(path, path_size, "/proc/self/fd/%d", fd);
	return fd;
}

#endif /* PS_FUZZ_COMMON_H */
