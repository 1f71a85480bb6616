/* Where the kernel's symbols come from, as perf 6.1 decides
 * (dso__load_kernel_sym), and the running kernel's from perf record's copy
 * of /proc/kallsyms.
 *
 * perf script reads /proc/kallsyms when the capture's kernel is the
 * running one, and so does pystitch. The kernel formats that file line by
 * line on every read: about 30 ms of system time for 120,000 symbols,
 * more than a quarter of a 23,000-sample C capture's whole run. perf
 * record keeps a copy of it in the build-id cache
 * ([kernel.kallsyms]/<build-id>/kallsyms), a plain file.
 *
 * The kernel's own lines (kallsyms_num_syms of them, before any module's)
 * come from tables built into the kernel image, at addresses that differ
 * from one boot to the next only by the KASLR offset. So when the copy's
 * first lines, through the first kernel address, are the running
 * kernel's, its kernel lines are the running kernel's too. Module, BPF,
 * ftrace and kprobe lines follow them and change as the machine runs:
 * they still come from /proc/kallsyms, read whole the first time a module
 * is asked about (dso_kernel.c). On x86-64 module text and data, BPF,
 * ftrace and kprobes lie above the kernel image (the module area starts
 * where the kernel image's area ends), so the kernel's table made from
 * its own lines is the one made from the whole file, unless a module's
 * per-CPU variables lie among the kernel's (modules_outside_kernel()
 * looks); elsewhere (arm64's modules may lie below the kernel) the copy
 * is not used. */
#include "symbols/symbols_priv.h"
#include "base/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROC_KALLSYMS "/proc/kallsyms"

/* enough for the per-CPU symbols some kernels list first (a few hundred
 * lines at small absolute addresses) and the first kernel text lines */
#define HEAD_BYTES (64u << 10)

/* Up to size bytes from the start of path; -1 when it cannot be read. */
static ssize_t read_head(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t have;

	if (fd < 0)
		return -1;
	have = ps_read_full(fd, buf, size);
	close(fd);
	return have < 0 ? -1 : have;
}

/* Whether buf's whole lines hold a kernel address ("ffff..."): the lines
 * compared go past the absolute per-CPU ones, to the relocated kernel. */
static bool has_kernel_address(const char *buf, size_t len)
{
	size_t at = 0;

	while (at < len) {
		const char *newline = memchr(buf + at, '\n', len - at);

		if (len - at >= 4 && memcmp(buf + at, "ffff", 4) == 0)
			return true;
		if (!newline)
			break;
		at = (size_t)(newline - buf) + 1;
	}
	return false;
}

/* Whether copy starts as live does, through live's first kernel
 * addresses: the same kernel booted at the same place. */
static bool same_boot(const char *live, const char *copy)
{
	char *live_head = malloc(HEAD_BYTES), *copy_head = malloc(HEAD_BYTES);
	ssize_t live_len = -1, copy_len = -1;
	size_t compared;
	bool same = false;

	if (live_head && copy_head) {
		live_len = read_head(live, live_head, HEAD_BYTES);
		copy_len = read_head(copy, copy_head, HEAD_BYTES);
	}
	if (live_len > 0 && copy_len > 0) {
		if ((size_t)live_len < HEAD_BYTES) {
			/* live ended: so must the copy, at the same byte */
			compared = live_len == copy_len ? (size_t)live_len : 0;
		} else {
			/* live's whole lines */
			for (compared = (size_t)live_len; compared > 0; compared--)
				if (live_head[compared - 1] == '\n')
					break;
		}
		same = compared > 0 && (size_t)copy_len >= compared &&
		       memcmp(live_head, copy_head, compared) == 0 &&
		       has_kernel_address(live_head, compared);
	}
	free(live_head);
	free(copy_head);
	return same;
}

/* Whether no module's lines can fall among the kernel's own. With
 * CONFIG_KALLSYMS_ALL a module's per-CPU variables are listed at its
 * per-CPU address: x86-64 kernels before 6.15 put that below the kernel
 * (their per-CPU area starts at 0), later ones inside the kernel image's
 * range, where perf's table ends the kernel's map at them
 * (split_groups() in kallsyms.c). A module's per-CPU section is in
 * /sys/module/NAME/sections/.data..percpu (its address readable by root
 * only). Every other line of a module, and BPF's, ftrace's and kprobes',
 * lies in the module area, above the kernel image. */
static bool modules_outside_kernel(const struct ps_kernel_live *live)
{
	FILE *modules = fopen(live->modules, "r");
	char line[1024];
	bool outside = true;

	if (!modules)
		return errno == ENOENT; /* a kernel without modules */
	while (outside && fgets(line, sizeof(line), modules)) {
		size_t name_len = strcspn(line, " \n");
		char dir[4096], path[4096 + 32], value[64];
		unsigned long long addr;
		struct stat st;
		char *end;
		FILE *section;
		int n;

		n = snprintf(dir, sizeof(dir), "%s/%.*s/sections", live->sys_module, (int)name_len,
		             line);
		/* unknown: a name cut by fgets(), no sysfs, no sections */
		if (name_len == 0 || name_len > 255 || n < 0 || (size_t)n >= sizeof(dir) ||
		    stat(dir, &st) != 0) {
			outside = false;
			break;
		}
		snprintf(path, sizeof(path), "%s/.data..percpu", dir);
		section = fopen(path, "r");
		if (!section) {
			outside = errno == ENOENT; /* no per-CPU variables */
			continue;
		}
		addr = 0;
		if (fgets(value, sizeof(value), section)) {
			addr = strtoull(value, &end, 16);
			if (end == value)
				addr = 0;
		}
		fclose(section);
		/* 0: hidden (kernel.kptr_restrict), so unknown */
		outside = addr != 0 && addr < UINT64_C(0xffff800000000000);
	}
	fclose(modules);
	return outside;
}

/* The live files, the real ones where live names none. */
static struct ps_kernel_live live_files(const struct ps_kernel_live *live)
{
	struct ps_kernel_live files = { PROC_KALLSYMS, "/sys/kernel/notes", "/proc/modules",
		                        "/sys/module" };

	if (live && live->kallsyms)
		files.kallsyms = live->kallsyms;
	if (live && live->notes)
		files.notes = live->notes;
	if (live && live->modules)
		files.modules = live->modules;
	if (live && live->sys_module)
		files.sys_module = live->sys_module;
	return files;
}

int ps_kernel_symbols_from_copy(const struct ps_kernel_live *live, const char *copy,
                                struct ps_kernel_symbols **out,
                                struct ps_kernel_load_result *result)
{
	struct ps_kernel_live files = live_files(live);

	*out = NULL;
	memset(result, 0, sizeof(*result));
#if defined(__x86_64__)
	if (!same_boot(files.kallsyms, copy))
		return -ESTALE;
	if (!modules_outside_kernel(&files))
		return -EXDEV;
	return ps_kernel_symbols_read_core(copy, out, result);
#else
	(void)files;
	(void)copy;
	return -ENOTSUP;
#endif
}

/* The build-id of the kernel whose notes are at path. */
static bool host_kernel_build_id(const char *path, uint8_t *id, size_t *size)
{
	uint8_t notes[4096];
	struct ps_cursor c;
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return false;
	n = fread(notes, 1, sizeof(notes), f);
	fclose(f);
	c = ps_cursor_make(notes, n, false);
	while (ps_cursor_left(&c) >= 12) {
		uint32_t namesz = ps_cursor_u32(&c), descsz = ps_cursor_u32(&c);
		uint32_t type = ps_cursor_u32(&c);
		const uint8_t *name = ps_cursor_take(&c, ((size_t)namesz + 3) & ~(size_t)3);
		const uint8_t *desc = ps_cursor_take(&c, ((size_t)descsz + 3) & ~(size_t)3);

		if (!name || !desc)
			return false;
		if (type == 3 && namesz == 4 && memcmp(name, "GNU", 4) == 0) {
			*size = descsz < PS_BUILD_ID_MAX ? descsz : PS_BUILD_ID_MAX;
			memcpy(id, desc, *size);
			return true;
		}
	}
	return false;
}

/* Whether the capture's kernel is the running one (perf's is_host). */
static bool running_kernel(const struct ps_kernel_source *source)
{
	struct ps_kernel_live files = live_files(source->live);
	uint8_t host[PS_BUILD_ID_MAX];
	size_t host_size = 0;

	return source->build_id_size && host_kernel_build_id(files.notes, host, &host_size) &&
	       ps_build_id_equal(source->build_id, source->build_id_size, host, host_size);
}

/* perf record's copy of kallsyms in the build-id cache */
static bool cache_copy_path(const struct ps_kernel_source *source, char *path, size_t size)
{
	char hex[2 * PS_BUILD_ID_MAX + 1];
	int n;

	ps_build_id_hex(source->build_id, source->build_id_size, hex);
	n = snprintf(path, size, "%s/[kernel.kallsyms]/%s/kallsyms", source->buildid_dir, hex);
	return n >= 0 && (size_t)n < size;
}

/* Which file perf 6.1 reads kernel symbols from (dso__load_kernel_sym
 * without the vmlinux_path search and kcore): --kallsyms, else -k, else
 * none under a --symfs, else /proc/kallsyms when the capture's kernel is
 * the running one (or its build-id is unknown), else the build-id cache's
 * copy of kallsyms (running: running_kernel()'s answer). Into path
 * (*vmlinux: an ELF file, else kallsyms text); -errno with the reason in
 * result->err when there is none. */
static int kernel_file(const struct ps_kernel_source *source, bool running, char *path, size_t size,
                       bool *vmlinux, struct ps_kernel_load_result *result)
{
	const char *file;
	int n;

	*vmlinux = false;
	if (source->kallsyms) {
		file = source->kallsyms;
	} else if (source->vmlinux) {
		*vmlinux = true;
		file = source->vmlinux;
		/* dso__load_vmlinux(): a relative path is under --symfs */
		if (file[0] != '/' && source->symfs && source->symfs[0]) {
			n = snprintf(path, size, "%s/%s", source->symfs, file);
			if (n < 0 || (size_t)n >= size) {
				snprintf(result->err, sizeof(result->err), "vmlinux path too long");
				return -ENAMETOOLONG;
			}
			return 0;
		}
	} else if (source->symfs && source->symfs[0]) {
		/* perf does not use local files when a symfs was given (nor the
		 * build-id cache's kallsyms, which it looks for after them) */
		snprintf(result->err, sizeof(result->err),
		         "no kernel symbols (--symfs given, no --kallsyms)");
		return -ENOENT;
	} else if (!source->build_id_size || running) {
		file = live_files(source->live).kallsyms;
	} else {
		if (!cache_copy_path(source, path, size)) {
			snprintf(result->err, sizeof(result->err), "build-id cache path too long");
			return -ENAMETOOLONG;
		}
		return 0;
	}
	if (strlen(file) >= size) {
		snprintf(result->err, sizeof(result->err), "kernel symbols: path too long");
		return -ENAMETOOLONG;
	}
	memcpy(path, file, strlen(file) + 1);
	return 0;
}

int ps_kernel_symbols_load(const struct ps_kernel_source *source, struct ps_kernel_symbols **out,
                           struct ps_kernel_load_result *result)
{
	bool running = running_kernel(source), vmlinux;
	char path[4096];
	int rc;

	*out = NULL;
	memset(result, 0, sizeof(*result));
	rc = kernel_file(source, running, path, sizeof(path), &vmlinux, result);
	if (rc < 0)
		return rc;
	if (vmlinux)
		return ps_kernel_symbols_read_vmlinux(path, source->files, source->build_id,
		                                      source->build_id_size, out, result);
	/* the running kernel's: its own part from perf record's copy when
	 * that is of this boot (above), the capture's kernel is the running
	 * one (as told, --kallsyms /proc/kallsyms may name another), and the
	 * files read are not looked up elsewhere or kept (an archive) */
	if (!source->whole && strcmp(path, live_files(source->live).kallsyms) == 0 &&
	    source->buildid_dir && running &&
	    (!source->files || (!source->files->resolve && !source->files->used))) {
		char copy[4096];

		if (cache_copy_path(source, copy, sizeof(copy)) &&
		    ps_kernel_symbols_from_copy(source->live, copy, out, result) == 0)
			return 0;
		memset(result, 0, sizeof(*result));
	}
	return ps_kernel_symbols_read_kallsyms(path, source->files, out, result);
}

bool ps_kernel_symbols_same_load(const struct ps_kernel_source *a, const struct ps_kernel_source *b)
{
	struct ps_kernel_load_result result;
	char path_a[4096], path_b[4096];
	bool vmlinux_a, vmlinux_b;

	if (kernel_file(a, running_kernel(a), path_a, sizeof(path_a), &vmlinux_a, &result) < 0 ||
	    kernel_file(b, running_kernel(b), path_b, sizeof(path_b), &vmlinux_b, &result) < 0)
		return false;
	/* a vmlinux's symbols are checked against the build-id */
	return vmlinux_a == vmlinux_b && a->whole == b->whole && strcmp(path_a, path_b) == 0 &&
	       (!vmlinux_a ||
	        (a->build_id_size == b->build_id_size &&
	         (!a->build_id_size || memcmp(a->build_id, b->build_id, a->build_id_size) == 0)));
}
