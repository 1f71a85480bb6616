/* Runs a fuzz target's LLVMFuzzerTestOneInput() on the files named on the
 * command line, without libFuzzer: `make check` replays every committed
 * seed and reproducer (fuzz/corpus/TARGET/) through the target it was found
 * with, in the plain and the sanitizer builds (tests/fuzz/replay.sh). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t size = 0, cap = 0, n;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	do {
		if (size == cap) {
			uint8_t *grown = realloc(data, cap = cap ? 2 * cap : 65536);
			if (!grown) {
				fprintf(stderr, "%s: out of memory\n", path);
				free(data);
				fclose(f);
				return 1;
			}
			data = grown;
		}
		n = fread(data + size, 1, cap - size, f);
		size += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		failed |= replay(argv[i]);
	return failed;
}
