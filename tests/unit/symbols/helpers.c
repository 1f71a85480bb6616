/* Builds the fixture ELF with the C compiler and binutils found on PATH
 * (CC overrides cc), and reads expected values from it with libelf. */
#include "helpers.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PS_TEST_SRCDIR
#define PS_TEST_SRCDIR "tests/unit/symbols"
#endif

struct fixture fixture;

void fmt(char *buf, size_t size, const char *format, ...)
{
	va_list ap;
	int n;

	va_start(ap, format);
	n = vsnprintf(buf, size, format, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		fprintf(stderr, "symbols tests: text too long for its buffer: %s\n", buf);
		abort();
	}
}

static bool run(struct fixture *f, const char *command)
{
	int status = system(command);

	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fmt(f->why, sizeof(f->why), "command failed: %s", command);
		return false;
	}
	return true;
}

static bool read_build_id(const char *path, uint8_t *out, size_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	bool found = false;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !found && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		Elf_Data *data;
		GElf_Nhdr nhdr;
		size_t offset = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data &&
		       (offset = gelf_getnote(data, offset, &nhdr, &name_off, &desc_off)) > 0) {
			if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_descsz <= 20) {
				memcpy(out, (char *)data->d_buf + desc_off, nhdr.n_descsz);
				*size = nhdr.n_descsz;
				found = true;
				break;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

bool fixture_build(struct fixture *f)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char command[2048];

	memset(f, 0, sizeof(*f));
	fmt(f->dir, sizeof(f->dir), "/tmp/ps-symbols-test-XXXXXX");
	if (!mkdtemp(f->dir)) {
		fmt(f->why, sizeof(f->why), "mkdtemp: %s", strerror(errno));
		return false;
	}
	fmt(f->so, sizeof(f->so), "%s/libfixture.so", f->dir);
	fmt(f->stripped, sizeof(f->stripped), "%s/libfixture.stripped.so", f->dir);
	fmt(f->debug, sizeof(f->debug), "%s/libfixture.debug", f->dir);
	fmt(command, sizeof(command),
	    "%s -O2 -g -fPIC -shared -nostdlib -Wl,--build-id=sha1 -o %s %s/fixture.c", cc, f->so,
	    PS_TEST_SRCDIR);
	if (!run(f, command))
		return false;
	fmt(command, sizeof(command),
	    "objcopy --only-keep-debug %s %s && objcopy --strip-all %s %s", f->so, f->debug, f->so,
	    f->stripped);
	if (!run(f, command))
		return false;
	if (!read_build_id(f->so, f->build_id, &f->build_id_size)) {
		fmt(f->why, sizeof(f->why), "%s has no build-id", f->so);
		return false;
	}
	f->ok = true;
	return true;
}

void fixture_remove(struct fixture *f)
{
	char command[512];

	if (f->dir[0] && strncmp(f->dir, "/tmp/ps-symbols-test-", 21) == 0) {
		fmt(command, sizeof(command), "rm -rf '%s'", f->dir);
		if (system(command) != 0)
			fprintf(stderr, "could not remove %s\n", f->dir);
	}
}

uint64_t fixture_symbol(const char *name, uint64_t *size)
{
	int fd = open(fixture.so, O_RDONLY);
	uint64_t result = UINT64_MAX;
	Elf_Scn *scn = NULL;
	Elf *elf;

	ck_assert_int_ge(fd, 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	while (result == UINT64_MAX && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			n = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0) {
				size_t phnum = 0;

				result = sym.st_value;
				if (size)
					*size = sym.st_size;
				elf_getphdrnum(elf, &phnum);
				for (size_t p = 0; p < phnum; p++) {
					GElf_Phdr phdr;

					if (gelf_getphdr(elf, (int)p, &phdr) &&
					    phdr.p_type == PT_LOAD &&
					    sym.st_value >= phdr.p_vaddr &&
					    sym.st_value < phdr.p_vaddr + phdr.p_memsz) {
						result = sym.st_value -
						         (phdr.p_vaddr - phdr.p_offset);
						break;
					}
				}
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return result;
}

bool elf_section(const char *path, const char *name, uint64_t *offset, uint64_t *size,
                 uint64_t *entsize)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	size_t names;
	bool found = false;
	Elf *elf;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_getshdrstrndx(elf, &names) == 0) {
		while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr shdr;
			const char *n;

			if (!gelf_getshdr(scn, &shdr))
				continue;
			n = elf_strptr(elf, names, shdr.sh_name);
			if (n && strcmp(n, name) == 0) {
				*offset = shdr.sh_offset;
				*size = shdr.sh_size;
				*entsize = shdr.sh_entsize;
				found = true;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

void make_dir(char *out, size_t size, const char *name)
{
	char command[1024];

	fmt(out, size, "%s/%s", fixture.dir, name);
	fmt(command, sizeof(command), "mkdir -p '%s'", out);
	ck_assert_int_eq(system(command), 0);
}

void copy_file(const char *from, const char *to)
{
	char command[2048];

	fmt(command, sizeof(command), "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'", to, from, to);
	ck_assert_int_eq(system(command), 0);
}

void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

void capture_log(void *ctx, enum ps_log_level level, const char *msg)
{
	struct log_capture *log = ctx;

	if (level == PS_LOG_WARN)
		log->warnings++;
	fmt(log->last, sizeof(log->last), "%s", msg);
	if (strlen(log->all) + strlen(msg) + 2 < sizeof(log->all)) {
		strcat(log->all, msg);
		strcat(log->all, "\n");
	}
}

struct ps_frame_name resolve_plain(struct ps_dso *dso, uint64_t addr)
{
	struct ps_frame_name frames[8];
	size_t n = ps_dso_resolve(dso, addr, false, frames, 8);

	ck_assert_msg(n == 1, "0x%llx: expected one frame, got %zu", (unsigned long long)addr, n);
	return frames[0];
}
