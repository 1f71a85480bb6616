/* Build-ids: their hex form (the build-id cache's paths, messages) and
 * perf's rule for whether a recorded id is a file's. */
#include "symbols/symbols_priv.h"

#include <string.h>

void ps_build_id_hex(const uint8_t *id, size_t size, char *buf)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < size; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 15];
	}
	buf[2 * size] = 0;
}

bool ps_build_id_equal(const uint8_t *recorded, size_t recorded_size, const uint8_t *file,
                       size_t file_size)
{
	/* perf allows trailing zeros in a 20-byte recorded id */
	if (recorded_size > file_size && recorded_size == PS_BUILD_ID_MAX) {
		if (memcmp(recorded, file, file_size) != 0)
			return false;
		for (size_t i = file_size; i < recorded_size; i++)
			if (recorded[i])
				return false;
		return true;
	}
	return recorded_size == file_size && memcmp(recorded, file, file_size) == 0;
}
