/* How modules that read files besides the capture (symbols, perf maps,
 * jitdumps) find them: through an optional resolver (an archive's
 * contents in place of the file system) and an optional observer (the
 * archive writer learning what was read). Both NULL: the file system. */
#ifndef PS_BASE_FILE_HOOKS_H
#define PS_BASE_FILE_HOOKS_H

#include <stddef.h>

#include "pystitch/pystitch.h"

struct ps_file_hooks {
	/* The local file holding path's contents, or NULL when path does
	 * not exist there. The string lives as long as the resolver. */
	const char *(*resolve)(void *ctx, const char *path);
	/* With a resolver: the index-th path it knows, NULL past the last
	 * (how the folders of perf maps are listed in an archive). */
	const char *(*path_at)(void *ctx, size_t index);
	void *resolve_ctx;
	ps_file_used_fn used;
	void *used_ctx;
};

/* The file to open for path: path itself without a resolver. */
static inline const char *ps_file_local(const struct ps_file_hooks *hooks, const char *path)
{
	return hooks && hooks->resolve ? hooks->resolve(hooks->resolve_ctx, path) : path;
}

static inline void ps_file_note_used(const struct ps_file_hooks *hooks, const char *path,
                                     const char *file, enum ps_file_kind kind)
{
	if (hooks && hooks->used)
		hooks->used(hooks->used_ctx, path, file, kind);
}

#endif /* PS_BASE_FILE_HOOKS_H */
