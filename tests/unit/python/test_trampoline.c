/* Unit tests of the trampolines section of src/python: the decoder of
 * CPython's perf trampoline template (on its bytes per version, endbr64
 * variants, garbage, this program's own ELF and a real libpython when one is
 * installed) and the .eh_frame CFA interpreter (on the CIE and FDE CPython's
 * perf_jit writes, gcc-style programs and damaged blobs). */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <capstone/capstone.h>

#include "python/python_priv.h"

#define ERRMSG_SIZE 256

/* ---- templates ------------------------------------------------------------ */

/* 3.12/3.13: sub $8,%rsp; call *%rcx; add $8,%rsp; ret */
static const uint8_t template_312[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
	                                0x48, 0x83, 0xc4, 0x08, 0xc3 };
/* 3.14: push %rbp; mov %rsp,%rbp; call *%rcx; pop %rbp; ret */
static const uint8_t template_314[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3 };
static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* the same template in this program, between the symbols the decoder
 * looks for, for the ELF reader */
__asm__(".text\n"
        ".globl _Py_trampoline_func_start\n"
        ".globl _Py_trampoline_func_end\n"
        "_Py_trampoline_func_start:\n"
        "\tsub $8, %rsp\n"
        "\tcall *%rcx\n"
        "\tadd $8, %rsp\n"
        "\tret\n"
        "_Py_trampoline_func_end:\n");

struct expect {
	uint64_t offset;
	int64_t cfa_offset;
	bool rbp_saved;
};

static void assert_rule(const struct ps_unwind_rule *rule, int64_t cfa_offset, bool rbp_saved)
{
	ck_assert_int_eq(rule->cfa_base, PS_UNWIND_CFA_SP);
	ck_assert_int_eq(rule->cfa_offset, cfa_offset);
	ck_assert_int_eq(rule->ra_offset, -8);
	ck_assert_int_eq(rule->rbp_saved, rbp_saved);
	if (rbp_saved)
		ck_assert_int_eq(rule->rbp_offset, -16);
}

static void assert_rules(const struct ps_trampoline *t, const struct expect *expect, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ps_unwind_rule rule;

		ck_assert_msg(ps_trampoline_rule_at(t, expect[i].offset, &rule), "offset %llu",
		              (unsigned long long)expect[i].offset);
		assert_rule(&rule, expect[i].cfa_offset, expect[i].rbp_saved);
	}
}

/* the template with endbr64 in front when _i is 1 */
static size_t with_endbr(uint8_t *buf, const uint8_t *code, size_t size, int endbr)
{
	size_t at = 0;

	if (endbr) {
		memcpy(buf, endbr64, sizeof(endbr64));
		at = sizeof(endbr64);
	}
	memcpy(buf + at, code, size);
	return at + size;
}

START_TEST(test_template_312)
{
	uint8_t code[32];
	size_t size = with_endbr(code, template_312, sizeof(template_312), _i);
	uint64_t base = _i ? 4 : 0;
	struct ps_trampoline t;
	char errmsg[ERRMSG_SIZE] = "";

	ck_assert_int_eq(ps_trampoline_decode(code, size, &t, errmsg, sizeof(errmsg)), 0);
	ck_assert_str_eq(errmsg, "");
	ck_assert_uint_eq(t.size, size);
	ck_assert_uint_eq(t.return_offset, base + 6);
	ck_assert_uint_eq(t.code_end, size);
	/* CFA = rsp + 16 at the return site, return address at CFA - 8 */
	assert_rule(&t.return_rule, 16, false);
	const struct expect expect[] = {
		{ base + 0, 8, false }, /* entry */
		{ base + 4, 16, false }, /* the call */
		{ base + 6, 16, false }, /* the return site */
		{ base + 10, 8, false }, /* the ret */
	};
	assert_rules(&t, expect, sizeof(expect) / sizeof(expect[0]));
	if (_i)
		assert_rules(&t, &(struct expect){ 0, 8, false }, 1);
	ck_assert_uint_eq(t.nr_insns, _i ? 5 : 4);

	/* not instruction boundaries, or past the code */
	struct ps_unwind_rule rule;
	ck_assert(!ps_trampoline_rule_at(&t, base + 1, &rule));
	ck_assert(!ps_trampoline_rule_at(&t, base + 5, &rule));
	ck_assert(!ps_trampoline_rule_at(&t, size, &rule));
	ck_assert(!ps_trampoline_rule_at(&t, UINT64_MAX, &rule));
	ck_assert(!ps_trampoline_rule_at(NULL, 0, &rule));
	ck_assert(!ps_trampoline_rule_at(&t, 0, NULL));
}
END_TEST

START_TEST(test_template_314)
{
	uint8_t code[32];
	size_t size = with_endbr(code, template_314, sizeof(template_314), _i);
	uint64_t base = _i ? 4 : 0;
	struct ps_trampoline t;

	ck_assert_int_eq(ps_trampoline_decode(code, size, &t, NULL, 0), 0);
	ck_assert_uint_eq(t.return_offset, base + 6);
	/* CFA = rsp + 16, the caller's rbp at CFA - 16 */
	assert_rule(&t.return_rule, 16, true);
	const struct expect expect[] = {
		{ base + 0, 8, false }, /* entry */
		{ base + 1, 16, true }, /* pushed */
		{ base + 4, 16, true }, /* the call, rbp is the frame pointer */
		{ base + 6, 16, true }, /* the return site */
		{ base + 7, 8, false }, /* popped: the ret */
	};
	assert_rules(&t, expect, sizeof(expect) / sizeof(expect[0]));
}
END_TEST

/* other shapes the simulation understands */
START_TEST(test_template_variants)
{
	struct ps_trampoline t;
	char errmsg[ERRMSG_SIZE];

	/* push %rbp; mov %rsp,%rbp; call *%rcx; leave; ret */
	static const uint8_t leave[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0xc9, 0xc3 };
	ck_assert_int_eq(ps_trampoline_decode(leave, sizeof(leave), &t, errmsg, sizeof(errmsg)), 0);
	assert_rule(&t.return_rule, 16, true);
	assert_rules(&t, &(struct expect){ 7, 8, false }, 1);

	/* push %rbx; sub $16,%rsp; call *%rcx; add $16,%rsp; pop %rbx; ret;
	 * nop; int3 (padding) */
	static const uint8_t pushes[] = { 0x53, 0x48, 0x83, 0xec, 0x10, 0xff, 0xd1, 0x48,
		                          0x83, 0xc4, 0x10, 0x5b, 0xc3, 0x90, 0xcc };
	ck_assert_int_eq(ps_trampoline_decode(pushes, sizeof(pushes), &t, errmsg, sizeof(errmsg)),
	                 0);
	ck_assert_uint_eq(t.return_offset, 7);
	ck_assert_uint_eq(t.code_end, 13);
	ck_assert_uint_eq(t.size, sizeof(pushes));
	assert_rule(&t.return_rule, 32, false);
	struct ps_unwind_rule rule;
	ck_assert(!ps_trampoline_rule_at(&t, 13, &rule));

	/* push %rbp; call rel32; pop %rbp; ret; and a register move that
	 * leaves rsp and rbp alone */
	static const uint8_t direct[] = { 0x55, 0x48, 0x89, 0xf8, 0xe8, 0x00,
		                          0x00, 0x00, 0x00, 0x5d, 0xc3 };
	ck_assert_int_eq(ps_trampoline_decode(direct, sizeof(direct), &t, errmsg, sizeof(errmsg)),
	                 0);
	ck_assert_uint_eq(t.return_offset, 9);
	assert_rule(&t.return_rule, 16, true);
}
END_TEST

static void assert_rejected(const uint8_t *code, size_t size, const char *why)
{
	struct ps_trampoline t;
	char errmsg[ERRMSG_SIZE] = "";

	memset(&t, 0xa5, sizeof(t));
	ck_assert_int_eq(ps_trampoline_decode(code, size, &t, errmsg, sizeof(errmsg)), -EINVAL);
	ck_assert_msg(strstr(errmsg, why) != NULL, "\"%s\" does not say \"%s\"", errmsg, why);
	/* nothing half-done is left behind */
	ck_assert_uint_eq(t.size, 0);
	ck_assert_uint_eq(t.nr_insns, 0);
}

START_TEST(test_template_rejected)
{
	static const uint8_t undecodable[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xff, 0xff };
	assert_rejected(undecodable, sizeof(undecodable), "no x86-64 instruction at offset 4");
	static const uint8_t no_call[] = { 0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	assert_rejected(no_call, sizeof(no_call), "before any call");
	static const uint8_t no_ret[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1 };
	assert_rejected(no_ret, sizeof(no_ret), "does not end with ret");
	static const uint8_t unbalanced[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0xc3 };
	assert_rejected(unbalanced, sizeof(unbalanced), "not restored");
	static const uint8_t jump[] = { 0xeb, 0x00, 0xff, 0xd1, 0xc3 };
	assert_rejected(jump, sizeof(jump), "control flow");
	static const uint8_t two_calls[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1, 0xff,
		                             0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	assert_rejected(two_calls, sizeof(two_calls), "second call");
	/* mov %rsp,%rbp without saving rbp */
	static const uint8_t rbp_lost[] = { 0x48, 0x89, 0xe5, 0xff, 0xd1, 0xc3 };
	assert_rejected(rbp_lost, sizeof(rbp_lost), "overwrites rbp");
	/* and $-16,%rsp */
	static const uint8_t align[] = { 0x48, 0x83, 0xe4, 0xf0, 0xff, 0xd1, 0xc3 };
	assert_rejected(align, sizeof(align), "changes rsp");
	/* mov %rax,(%rsp) */
	static const uint8_t store[] = { 0x48, 0x83, 0xec, 0x08, 0x48, 0x89, 0x04, 0x24,
		                         0xff, 0xd1, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	assert_rejected(store, sizeof(store), "writes to the stack");
	/* add $8,%rsp at entry: the return address would be popped */
	static const uint8_t above[] = { 0x48, 0x83, 0xc4, 0x08, 0xff, 0xd1, 0xc3 };
	assert_rejected(above, sizeof(above), "out of the frame");
	/* code after the ret */
	uint8_t after[sizeof(template_312) + 3];
	memcpy(after, template_312, sizeof(template_312));
	memcpy(after + sizeof(template_312), (const uint8_t[]){ 0x48, 0x89, 0xc0 }, 3);
	assert_rejected(after, sizeof(after), "follows the ret");
	/* pop %rsp; ret 8; push %ax (16-bit) */
	static const uint8_t pop_sp[] = { 0xff, 0xd1, 0x5c, 0xc3 };
	assert_rejected(pop_sp, sizeof(pop_sp), "rsp");
	static const uint8_t ret_imm[] = { 0xff, 0xd1, 0xc2, 0x08, 0x00 };
	assert_rejected(ret_imm, sizeof(ret_imm), "pops arguments");
	static const uint8_t push16[] = { 0x66, 0x50, 0xff, 0xd1, 0x66, 0x58, 0xc3 };
	assert_rejected(push16, sizeof(push16), "64-bit");
	/* pop into rbp what was not rbp */
	static const uint8_t swap_rbp[] = { 0x50, 0xff, 0xd1, 0x5d, 0xc3 };
	assert_rejected(swap_rbp, sizeof(swap_rbp), "overwrites rbp");
	/* leave without a frame pointer */
	static const uint8_t bad_leave[] = { 0x55, 0xff, 0xd1, 0xc9, 0xc3 };
	assert_rejected(bad_leave, sizeof(bad_leave), "frame pointer");

	struct ps_trampoline t;
	char errmsg[ERRMSG_SIZE];
	uint8_t big[PS_TRAMPOLINE_MAX_SIZE + 1] = { 0 };
	ck_assert_int_eq(ps_trampoline_decode(template_312, 0, &t, errmsg, sizeof(errmsg)),
	                 -EINVAL);
	ck_assert_int_eq(ps_trampoline_decode(big, sizeof(big), &t, errmsg, sizeof(errmsg)),
	                 -EINVAL);
	ck_assert_int_eq(ps_trampoline_decode(NULL, 4, &t, errmsg, sizeof(errmsg)), -EINVAL);
	ck_assert_int_eq(ps_trampoline_decode(template_312, 4, NULL, NULL, 0), -EINVAL);
	/* a short error buffer is enough */
	ck_assert_int_eq(ps_trampoline_decode(no_ret, sizeof(no_ret), &t, errmsg, 8), -EINVAL);
	ck_assert_uint_eq(strlen(errmsg), 7);
}
END_TEST

/* xorshift: reproducible garbage */
static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

START_TEST(test_template_garbage)
{
	uint64_t state = 0x243f6a8885a308d3ULL;
	unsigned accepted = 0;

	for (int round = 0; round < 20000; round++) {
		uint8_t code[PS_TRAMPOLINE_MAX_SIZE];
		size_t size = 1 + next_random(&state) % sizeof(code);
		struct ps_trampoline t;
		char errmsg[ERRMSG_SIZE];

		/* half of them mutations of the real templates */
		if (round % 2) {
			size = with_endbr(code, round % 4 == 1 ? template_312 : template_314,
			                  round % 4 == 1 ? sizeof(template_312)
			                                 : sizeof(template_314),
			                  round % 8 < 4);
			code[next_random(&state) % size] = (uint8_t)next_random(&state);
		} else {
			for (size_t i = 0; i < size; i++)
				code[i] = (uint8_t)next_random(&state);
		}
		int rc = ps_trampoline_decode(code, size, &t, errmsg, sizeof(errmsg));
		ck_assert(rc == 0 || rc == -EINVAL);
		if (rc)
			continue;
		/* what is accepted is consistent */
		accepted++;
		ck_assert_uint_le(t.return_offset, t.code_end);
		ck_assert_uint_le(t.code_end, t.size);
		ck_assert_int_ge(t.return_rule.cfa_offset, 8);
		struct ps_unwind_rule rule;
		ck_assert(ps_trampoline_rule_at(&t, 0, &rule));
		ck_assert_int_eq(rule.cfa_offset, 8);
		ck_assert(!rule.rbp_saved);
	}
	/* the mutations keep some templates valid (a changed immediate, say) */
	ck_assert_uint_gt(accepted, 0);
}
END_TEST

/* ---- the template in ELF files ------------------------------------------ */

/* The symbols module's handle on path, as the DSO registry opens it. */
static struct ps_elf *open_elf(const char *path)
{
	char errmsg[ERRMSG_SIZE] = "";
	struct ps_elf *elf = NULL;

	ck_assert_msg(ps_elf_open(path, &elf, errmsg, sizeof(errmsg)) == 0, "%s", errmsg);
	return elf;
}

START_TEST(test_elf_self)
{
	struct ps_trampoline t;
	char errmsg[ERRMSG_SIZE] = "";
	uint8_t code[PS_TRAMPOLINE_MAX_SIZE];
	size_t size;

	struct ps_elf *elf = open_elf("/proc/self/exe");

	/* this program carries a template between the two symbols */
	ck_assert_int_eq(
	        ps_trampoline_read_template(elf, code, sizeof(code), &size, errmsg, sizeof(errmsg)),
	        0);
	ck_assert_uint_eq(size, sizeof(template_312));
	ck_assert_mem_eq(code, template_312, size);
	ck_assert_int_eq(ps_trampoline_from_elf(elf, &t, errmsg, sizeof(errmsg)), 0);
	ck_assert_uint_eq(t.return_offset, 6);
	assert_rule(&t.return_rule, 16, false);

	/* a buffer too small for it */
	ck_assert_int_eq(ps_trampoline_read_template(elf, code, 4, &size, errmsg, sizeof(errmsg)),
	                 -EINVAL);
	ck_assert_uint_eq(size, 0);
	ps_elf_close(elf);
}
END_TEST

START_TEST(test_elf_errors)
{
	struct ps_trampoline t;
	char errmsg[ERRMSG_SIZE] = "";
	Dl_info info;

	struct ps_elf *elf = NULL;

	/* a file that is missing or not ELF is refused by the open, which
	 * the trampoline reader never sees */
	ck_assert_int_eq(ps_elf_open("/nonexistent/libpython3.12.so", &elf, errmsg, sizeof(errmsg)),
	                 -ENOENT);
	ck_assert_ptr_null(elf);
	ck_assert_ptr_nonnull(strstr(errmsg, "/nonexistent/libpython3.12.so"));
	ck_assert_int_lt(ps_elf_open("/proc/self/maps", &elf, errmsg, sizeof(errmsg)), 0);
	ck_assert_ptr_null(elf);
	/* an ELF file without the symbols: the capstone library */
	ck_assert(dladdr((void *)cs_open, &info) && info.dli_fname);
	elf = open_elf(info.dli_fname);
	ck_assert_int_eq(ps_trampoline_from_elf(elf, &t, errmsg, sizeof(errmsg)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(errmsg, "_Py_trampoline_func_start"));
	ck_assert_ptr_nonnull(strstr(errmsg, info.dli_fname));
	ck_assert(!strchr(errmsg, '\n'));
	ck_assert_int_eq(ps_trampoline_from_elf(NULL, &t, NULL, 0), -EINVAL);
	ck_assert_int_eq(ps_trampoline_from_elf(elf, NULL, NULL, 0), -EINVAL);
	ps_elf_close(elf);
}
END_TEST

/* A copy of this program claiming another machine: refused before any
 * symbol is looked at. */
START_TEST(test_elf_other_machine)
{
	char copy[] = "/tmp/pystitch-test-trampoline-XXXXXX";
	char command[512], errmsg[ERRMSG_SIZE] = "";
	struct ps_trampoline t;
	uint16_t machine = EM_AARCH64;
	struct ps_elf *elf;
	int fd = mkstemp(copy);

	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(command, sizeof(command), "cp /proc/%d/exe %s", (int)getpid(), copy);
	ck_assert_int_eq(system(command), 0);
	fd = open(copy, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, &machine, 2, offsetof(Elf64_Ehdr, e_machine)), 2);
	close(fd);
	elf = open_elf(copy);
	unlink(copy);
	ck_assert_int_eq(ps_trampoline_from_elf(elf, &t, errmsg, sizeof(errmsg)), -EOPNOTSUPP);
	ck_assert_ptr_nonnull(strstr(errmsg, "not an x86-64 file"));
	ps_elf_close(elf);
}
END_TEST

/* A copy of this program whose executable sections lose SHF_ALLOC: the
 * template is then read through the PT_LOAD segment holding it. */
static bool copy_without_alloc_sections(const char *copy)
{
	char command[512];
	Elf64_Ehdr ehdr;
	bool ok = true;

	snprintf(command, sizeof(command), "cp /proc/%d/exe %s", (int)getpid(), copy);
	if (system(command) != 0)
		return false;
	int fd = open(copy, O_RDWR);
	if (fd < 0)
		return false;
	if (pread(fd, &ehdr, sizeof(ehdr), 0) != (ssize_t)sizeof(ehdr) ||
	    ehdr.e_shentsize != sizeof(Elf64_Shdr))
		ok = false;
	for (unsigned i = 0; ok && i < ehdr.e_shnum; i++) {
		Elf64_Shdr shdr;
		off_t at = (off_t)(ehdr.e_shoff + (uint64_t)i * sizeof(shdr));

		if (pread(fd, &shdr, sizeof(shdr), at) != (ssize_t)sizeof(shdr)) {
			ok = false;
		} else if (shdr.sh_flags & SHF_EXECINSTR) {
			shdr.sh_flags &= ~(uint64_t)SHF_ALLOC;
			ok = pwrite(fd, &shdr, sizeof(shdr), at) == (ssize_t)sizeof(shdr);
		}
	}
	close(fd);
	return ok;
}

START_TEST(test_elf_segments)
{
	char copy[] = "/tmp/pystitch-test-trampoline-XXXXXX";
	int fd = mkstemp(copy);
	uint8_t code[PS_TRAMPOLINE_MAX_SIZE];
	size_t size;
	char errmsg[ERRMSG_SIZE] = "";

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert(copy_without_alloc_sections(copy));
	struct ps_elf *elf = open_elf(copy);
	int rc =
	        ps_trampoline_read_template(elf, code, sizeof(code), &size, errmsg, sizeof(errmsg));
	ps_elf_close(elf);
	unlink(copy);
	ck_assert_msg(rc == 0, "%s", errmsg);
	ck_assert_uint_eq(size, sizeof(template_312));
	ck_assert_mem_eq(code, template_312, size);
}
END_TEST

/* The pyenv root: `pyenv root`, else $PYENV_ROOT, else ~/.pyenv. */
static void pyenv_root(char *buf, size_t size)
{
	FILE *p = popen("pyenv root 2>/dev/null", "r");

	buf[0] = '\0';
	if (p) {
		if (!fgets(buf, (int)size, p))
			buf[0] = '\0';
		pclose(p);
	}
	buf[strcspn(buf, "\n")] = '\0';
	if (buf[0])
		return;
	const char *env = getenv("PYENV_ROOT");
	const char *home = getenv("HOME");
	if (env && env[0])
		snprintf(buf, size, "%s", env);
	else if (home)
		snprintf(buf, size, "%s/.pyenv", home);
}

/* The same library with .symtab stripped: the symbols come from .dynsym. */
static void assert_dynsym_only(const char *path, const struct ps_trampoline *expected)
{
	char copy[] = "/tmp/pystitch-test-trampoline-XXXXXX";
	char command[2048];
	struct ps_trampoline t;
	char errmsg[ERRMSG_SIZE] = "";
	int fd = mkstemp(copy);

	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(command, sizeof(command), "objcopy --strip-all '%s' %s 2>/dev/null", path, copy);
	if (system(command) != 0) {
		unlink(copy);
		fprintf(stderr, "SKIPPED the .dynsym check: objcopy --strip-all failed\n");
		return;
	}
	struct ps_elf *elf = open_elf(copy);
	int rc = ps_trampoline_from_elf(elf, &t, errmsg, sizeof(errmsg));
	ps_elf_close(elf);
	unlink(copy);
	ck_assert_msg(rc == 0, "%s", errmsg);
	ck_assert_mem_eq(&t, expected, sizeof(t));
}

/* The production path: the DSO's own handle (opened once by the symbols
 * module) gives the same template as a handle of one's own. */
static void assert_through_dso(const char *path, const struct ps_trampoline *expected)
{
	struct ps_symbols_opts opts = { .sz = sizeof(opts) };
	struct ps_symbols *symbols;
	const struct ps_elf *elf;
	struct ps_trampoline t;
	char errmsg[ERRMSG_SIZE] = "";
	struct ps_dso *dso;

	ck_assert_int_eq(ps_symbols_new(&opts, &symbols), 0);
	dso = ps_symbols_dso(symbols, path, NULL, 0);
	ck_assert_ptr_nonnull(dso);
	elf = ps_dso_elf(dso);
	ck_assert_ptr_nonnull(elf);
	ck_assert_ptr_eq(ps_dso_elf(dso), elf);
	ck_assert_str_eq(ps_elf_file(elf), ps_dso_file(dso));
	ck_assert_int_eq(ps_trampoline_from_elf(elf, &t, errmsg, sizeof(errmsg)), 0);
	ck_assert_mem_eq(&t, expected, sizeof(t));
	ps_symbols_free(symbols);
}

START_TEST(test_real_libpython)
{
	char root[1024], pattern[1200];
	glob_t found;
	unsigned tested = 0;

	pyenv_root(root, sizeof(root));
	snprintf(pattern, sizeof(pattern), "%s/versions/3.1[2-9].*/lib/libpython3.1[2-9].so*",
	         root);
	if (glob(pattern, 0, NULL, &found) != 0)
		found.gl_pathc = 0;
	for (size_t i = 0; i < found.gl_pathc; i++) {
		const char *path = found.gl_pathv[i];
		const char *name = strstr(path, "libpython3.");
		struct ps_trampoline t;
		char errmsg[ERRMSG_SIZE] = "";
		uint8_t code[PS_TRAMPOLINE_MAX_SIZE];
		size_t size;

		/* the .so symlink and the file itself are the same */
		int minor = atoi(name + strlen("libpython3."));
		struct ps_elf *elf = open_elf(path);
		int rc = ps_trampoline_from_elf(elf, &t, errmsg, sizeof(errmsg));
		ck_assert_msg(rc == 0, "%s: %s", path, errmsg);
		ck_assert_int_eq(
		        ps_trampoline_read_template(elf, code, sizeof(code), &size, NULL, 0), 0);
		ps_elf_close(elf);
		bool endbr = size >= 4 && memcmp(code, endbr64, sizeof(endbr64)) == 0;
		uint64_t base = endbr ? 4 : 0;
		fprintf(stderr,
		        "test_real_libpython: %s (3.%d): %u bytes, return site %u, "
		        "CFA rsp+%lld, rbp %s\n",
		        path, minor, t.size, t.return_offset, (long long)t.return_rule.cfa_offset,
		        t.return_rule.rbp_saved ? "saved" : "unchanged");
		ck_assert_uint_eq(t.return_offset, base + 6);
		/* 3.14 switched to a frame-pointer template */
		assert_rule(&t.return_rule, 16, minor >= 14);
		if (tested++ == 0) {
			assert_dynsym_only(path, &t);
			assert_through_dso(path, &t);
		}
	}
	globfree(&found);
	if (tested == 0) {
		const char *ci = getenv("CI");

		fprintf(stderr, "SKIPPED test_real_libpython: no libpython3.12+ matches %s\n",
		        pattern);
		ck_assert_msg(!(ci && strcmp(ci, "true") == 0),
		              "CI=true but no libpython3.12+ under %s", pattern);
	}
}
END_TEST

/* ---- eh_frame ----------------------------------------------------------------- */

/* A byte builder for CIEs and FDEs. */
struct blob {
	uint8_t bytes[512];
	size_t len;
	size_t entry; /* start of the open entry */
};

static void put(struct blob *b, const uint8_t *bytes, size_t n)
{
	ck_assert_uint_le(b->len + n, sizeof(b->bytes));
	memcpy(b->bytes + b->len, bytes, n);
	b->len += n;
}

static void put_u8(struct blob *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_u32(struct blob *b, uint32_t v)
{
	put(b, (const uint8_t *)&v, 4);
}

static void put_uleb(struct blob *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		put_u8(b, byte | (v ? 0x80 : 0));
	} while (v);
}

static void put_sleb(struct blob *b, int64_t v)
{
	bool more = true;

	while (more) {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		more = !((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)));
		put_u8(b, byte | (more ? 0x80 : 0));
	}
}

static void entry_begin(struct blob *b)
{
	b->entry = b->len;
	put_u32(b, 0); /* length, patched by entry_end */
}

/* pad with DW_CFA_nop to a multiple of 8, as CPython and gcc do */
static void entry_end(struct blob *b)
{
	while ((b->len - b->entry) % 8)
		put_u8(b, 0);
	uint32_t length = (uint32_t)(b->len - b->entry - 4);
	memcpy(b->bytes + b->entry, &length, 4);
}

/* CIE "zR", code alignment 1, data alignment -8, RA register 16, FDE
 * pointers pcrel|sdata4, then the given initial instructions */
static size_t cie_begin(struct blob *b, const char *augmentation)
{
	size_t at = b->len;

	entry_begin(b);
	put_u32(b, 0); /* CIE id */
	put_u8(b, 1); /* version */
	put(b, (const uint8_t *)augmentation, strlen(augmentation) + 1);
	put_uleb(b, 1);
	put_sleb(b, -8);
	put_u8(b, 16);
	if (augmentation[0] == 'z') {
		put_uleb(b, 1);
		put_u8(b, 0x1b); /* DW_EH_PE_pcrel | DW_EH_PE_sdata4 */
	}
	return at;
}

static void fde_begin(struct blob *b, size_t cie_at, int32_t begin, uint32_t range)
{
	entry_begin(b);
	put_u32(b, (uint32_t)(b->len - cie_at)); /* back to the CIE */
	put_u32(b, (uint32_t)begin);
	put_u32(b, range);
	put_uleb(b, 0); /* augmentation data */
}

/* What CPython's perf_jit writes for an 11-byte trampoline (3.13), built
 * from its description: CIE def_cfa rsp+8, RA at cfa-8; FDE advance_loc 4,
 * def_cfa_offset 16, advance_loc 6, def_cfa_offset 8. */
static void cpython_eh_frame(struct blob *b)
{
	memset(b, 0, sizeof(*b));
	size_t cie = cie_begin(b, "zR");
	put(b, (const uint8_t[]){ 0x0c, 7, 8 }, 3); /* DW_CFA_def_cfa rsp, 8 */
	put(b, (const uint8_t[]){ 0x80 | 16, 1 }, 2); /* DW_CFA_offset RA, 1*-8 */
	entry_end(b);
	/* the initial location is relative to where perf inject puts the
	 * section: after the code, rounded up to 8 */
	fde_begin(b, cie, -(int32_t)(b->len + 8 + 16), 11);
	put(b, (const uint8_t[]){ 0x40 | 4, 0x0e, 16 }, 3); /* advance 4; def_cfa_offset 16 */
	put(b, (const uint8_t[]){ 0x40 | 6, 0x0e, 8 }, 3); /* advance 6; def_cfa_offset 8 */
	entry_end(b);
}

/* The bytes of one unwinding-info record of a jitdump CPython 3.13.0 wrote
 * here (the .eh_frame part, without the .eh_frame_hdr after it). */
static const uint8_t cpython_313_recorded[] = {
	0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x7a, 0x52, 0x00,
	0x01, 0x78, 0x10, 0x01, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0x00, 0x00,
	0x14, 0x00, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00, 0xd0, 0xff, 0xff, 0xff,
	0x0b, 0x00, 0x00, 0x00, 0x00, 0x44, 0x0e, 0x10, 0x46, 0x0e, 0x08, 0x00,
};

static void assert_eh_rule(const uint8_t *data, size_t size, uint64_t code, uint64_t pc,
                           enum ps_unwind_cfa_base base, int64_t cfa_offset, bool rbp_saved)
{
	struct ps_unwind_rule rule;
	char errmsg[ERRMSG_SIZE] = "";
	int rc = ps_eh_frame_rule(data, size, code, pc, &rule, errmsg, sizeof(errmsg));

	ck_assert_msg(rc == 0, "pc +%llu: %s", (unsigned long long)(pc - code), errmsg);
	ck_assert_int_eq(rule.cfa_base, base);
	ck_assert_int_eq(rule.cfa_offset, cfa_offset);
	ck_assert_int_eq(rule.ra_offset, -8);
	ck_assert_int_eq(rule.rbp_saved, rbp_saved);
	if (rbp_saved)
		ck_assert_int_eq(rule.rbp_offset, -16);
}

static void assert_cpython_rows(const uint8_t *data, size_t size)
{
	const uint64_t code = 0x7f0000001000ULL;

	for (uint64_t off = 0; off < 11; off++) {
		/* sub $8,%rsp is 4 bytes; call 2 and add 4 more */
		int64_t cfa = off < 4 ? 8 : off < 10 ? 16 : 8;
		assert_eh_rule(data, size, code, code + off, PS_UNWIND_CFA_SP, cfa, false);
	}
	struct ps_unwind_rule rule;
	char errmsg[ERRMSG_SIZE] = "";
	ck_assert_int_eq(
	        ps_eh_frame_rule(data, size, code, code + 11, &rule, errmsg, sizeof(errmsg)),
	        -ERANGE);
	ck_assert_ptr_nonnull(strstr(errmsg, "outside"));
	ck_assert_int_eq(ps_eh_frame_rule(data, size, code, code - 1, &rule, NULL, 0), -ERANGE);
}

START_TEST(test_eh_frame_cpython)
{
	struct blob b;

	cpython_eh_frame(&b);
	ck_assert_uint_eq(b.len, sizeof(cpython_313_recorded));
	ck_assert_mem_eq(b.bytes, cpython_313_recorded, b.len);
	assert_cpython_rows(b.bytes, b.len);
	assert_cpython_rows(cpython_313_recorded, sizeof(cpython_313_recorded));
	/* the .eh_frame_hdr or a terminator after it is fine */
	put_u32(&b, 0);
	put_u32(&b, 0xdeadbeef);
	assert_cpython_rows(b.bytes, b.len);
}
END_TEST

/* What gcc emits for a frame-pointer function, plus the other opcodes. */
START_TEST(test_eh_frame_gcc_style)
{
	struct blob b = { .len = 0 };
	const uint64_t code = 0x400000;

	size_t cie = cie_begin(&b, "zR");
	put(&b, (const uint8_t[]){ 0x0c, 7, 8, 0x90, 1 }, 5);
	entry_end(&b);
	fde_begin(&b, cie, 0, 64);
	put(&b, (const uint8_t[]){ 0x41, 0x0e, 16, 0x86, 2 }, 5); /* push %rbp */
	put(&b, (const uint8_t[]){ 0x43, 0x0d, 6 }, 3); /* mov %rsp,%rbp: CFA = rbp + 16 */
	put(&b, (const uint8_t[]){ 0x0a }, 1); /* remember_state */
	put(&b, (const uint8_t[]){ 0x02, 8, 0x0c, 7, 8, 0xc6 }, 6); /* leave: rsp+8, restore rbp */
	put(&b, (const uint8_t[]){ 0x41, 0x0b }, 2); /* then restore_state at 13 */
	put(&b, (const uint8_t[]){ 0x03, 8, 0 }, 3); /* advance_loc2 8 */
	put(&b, (const uint8_t[]){ 0x2e, 16 }, 2); /* GNU_args_size */
	put(&b, (const uint8_t[]){ 0x04, 8, 0, 0, 0 }, 5); /* advance_loc4 8 */
	put(&b, (const uint8_t[]){ 0x12, 7, 0x7e }, 3); /* def_cfa_sf rsp, -2*-8 = 16 */
	put(&b, (const uint8_t[]){ 0x13, 0x7f }, 2); /* def_cfa_offset_sf -1*-8 = 8 */
	put(&b, (const uint8_t[]){ 0x05, 6, 2 }, 3); /* offset_extended rbp, 2 */
	put(&b, (const uint8_t[]){ 0x41, 0x06, 6 }, 3); /* restore_extended rbp */
	put(&b, (const uint8_t[]){ 0x41, 0x11, 6, 2 }, 4); /* offset_extended_sf rbp */
	put(&b, (const uint8_t[]){ 0x41, 0x08, 6 }, 3); /* same_value rbp */
	put(&b, (const uint8_t[]){ 0x41, 0x07, 17, 0x08, 17 }, 5); /* xmm0: ignored */
	entry_end(&b);

	assert_eh_rule(b.bytes, b.len, code, code + 0, PS_UNWIND_CFA_SP, 8, false);
	assert_eh_rule(b.bytes, b.len, code, code + 1, PS_UNWIND_CFA_SP, 16, true);
	assert_eh_rule(b.bytes, b.len, code, code + 4, PS_UNWIND_CFA_RBP, 16, true);
	assert_eh_rule(b.bytes, b.len, code, code + 11, PS_UNWIND_CFA_RBP, 16, true);
	assert_eh_rule(b.bytes, b.len, code, code + 12, PS_UNWIND_CFA_SP, 8, false);
	/* restore_state brought back the frame-pointer row */
	assert_eh_rule(b.bytes, b.len, code, code + 13, PS_UNWIND_CFA_RBP, 16, true);
	assert_eh_rule(b.bytes, b.len, code, code + 28, PS_UNWIND_CFA_RBP, 16, true);
	assert_eh_rule(b.bytes, b.len, code, code + 29, PS_UNWIND_CFA_SP, 8, true);
	assert_eh_rule(b.bytes, b.len, code, code + 30, PS_UNWIND_CFA_SP, 8, false);
	assert_eh_rule(b.bytes, b.len, code, code + 31, PS_UNWIND_CFA_SP, 8, true);
	assert_eh_rule(b.bytes, b.len, code, code + 32, PS_UNWIND_CFA_SP, 8, false);
	assert_eh_rule(b.bytes, b.len, code, code + 63, PS_UNWIND_CFA_SP, 8, false);

	/* a CIE without augmentation: FDE pointers are absolute, 8 bytes */
	memset(&b, 0, sizeof(b));
	cie = cie_begin(&b, "");
	put(&b, (const uint8_t[]){ 0x0c, 7, 8, 0x90, 1 }, 5);
	entry_end(&b);
	entry_begin(&b);
	put_u32(&b, (uint32_t)(b.len - cie));
	uint64_t begin = code, range = 16;
	put(&b, (const uint8_t *)&begin, 8);
	put(&b, (const uint8_t *)&range, 8);
	put(&b, (const uint8_t[]){ 0x44, 0x0e, 16 }, 3);
	entry_end(&b);
	assert_eh_rule(b.bytes, b.len, code, code + 5, PS_UNWIND_CFA_SP, 16, false);
}
END_TEST

static void assert_eh_rejected(const uint8_t *data, size_t size, const char *why)
{
	struct ps_unwind_rule rule;
	char errmsg[ERRMSG_SIZE] = "";
	int rc = ps_eh_frame_rule(data, size, 0x1000, 0x1004, &rule, errmsg, sizeof(errmsg));

	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_msg(strstr(errmsg, why) != NULL, "\"%s\" does not say \"%s\"", errmsg, why);
}

/* the CPython blob with one FDE instruction replaced by `insn` */
static void cpython_with(struct blob *b, const uint8_t *insn, size_t n)
{
	memset(b, 0, sizeof(*b));
	size_t cie = cie_begin(b, "zR");
	put(b, (const uint8_t[]){ 0x0c, 7, 8, 0x90, 1 }, 5);
	entry_end(b);
	fde_begin(b, cie, 0, 11);
	put(b, insn, n);
	put(b, (const uint8_t[]){ 0x48, 0x0e, 8 }, 3);
	entry_end(b);
}

START_TEST(test_eh_frame_rejected)
{
	struct blob b;
	struct ps_unwind_rule rule;

	/* opcodes it does not understand */
	static const uint8_t set_loc[] = { 0x01, 0, 0, 0, 0 };
	cpython_with(&b, set_loc, sizeof(set_loc));
	assert_eh_rejected(b.bytes, b.len, "0x01 not understood");
	static const uint8_t val_expression[] = { 0x16, 6, 1, 0 };
	cpython_with(&b, val_expression, sizeof(val_expression));
	assert_eh_rejected(b.bytes, b.len, "not understood");
	static const uint8_t cfa_expression[] = { 0x0f, 1, 0x77 };
	cpython_with(&b, cfa_expression, sizeof(cfa_expression));
	assert_eh_rejected(b.bytes, b.len, "not understood");
	static const uint8_t reg_register[] = { 0x09, 6, 3 };
	cpython_with(&b, reg_register, sizeof(reg_register));
	assert_eh_rejected(b.bytes, b.len, "not understood");
	/* rules it cannot express */
	static const uint8_t rbx_saved[] = { 0x83, 3 };
	cpython_with(&b, rbx_saved, sizeof(rbx_saved));
	assert_eh_rejected(b.bytes, b.len, "register 3 saved");
	static const uint8_t xmm_saved[] = { 0x05, 17, 3 };
	cpython_with(&b, xmm_saved, sizeof(xmm_saved));
	assert_eh_rejected(b.bytes, b.len, "register 17 saved");
	static const uint8_t cfa_rax[] = { 0x0d, 0 };
	cpython_with(&b, cfa_rax, sizeof(cfa_rax));
	assert_eh_rejected(b.bytes, b.len, "CFA from register 0");
	static const uint8_t ra_undefined[] = { 0x07, 16 };
	cpython_with(&b, ra_undefined, sizeof(ra_undefined));
	assert_eh_rejected(b.bytes, b.len, "outermost");
	static const uint8_t ra_same[] = { 0x08, 16 };
	cpython_with(&b, ra_same, sizeof(ra_same));
	assert_eh_rejected(b.bytes, b.len, "not saved");
	static const uint8_t rbp_undefined[] = { 0x07, 6 };
	cpython_with(&b, rbp_undefined, sizeof(rbp_undefined));
	assert_eh_rejected(b.bytes, b.len, "rbp is undefined");
	static const uint8_t restore_state[] = { 0x0b };
	cpython_with(&b, restore_state, sizeof(restore_state));
	assert_eh_rejected(b.bytes, b.len, "without a remembered state");
	uint8_t remember[9];
	memset(remember, 0x0a, sizeof(remember));
	cpython_with(&b, remember, sizeof(remember));
	assert_eh_rejected(b.bytes, b.len, "remembered states");
	static const uint8_t huge_offset[] = { 0x0e, 0xff, 0xff, 0xff, 0xff, 0x7f };
	cpython_with(&b, huge_offset, sizeof(huge_offset));
	assert_eh_rejected(b.bytes, b.len, "out of range");
	static const uint8_t long_leb[] = { 0x0e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		                            0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	cpython_with(&b, long_leb, sizeof(long_leb));
	assert_eh_rejected(b.bytes, b.len, "truncated");
	static const uint8_t truncated_insn[] = { 0x0c, 7 };
	memset(&b, 0, sizeof(b));
	size_t cie = cie_begin(&b, "zR");
	put(&b, (const uint8_t[]){ 0x0c, 7, 8, 0x90, 1 }, 5);
	entry_end(&b);
	fde_begin(&b, cie, 0, 11);
	put(&b, truncated_insn, sizeof(truncated_insn));
	uint32_t length = (uint32_t)(b.len - 24 - 4);
	memcpy(b.bytes + 24, &length, 4);
	assert_eh_rejected(b.bytes, b.len, "truncated CFA instruction");

	/* CIEs it does not accept */
	cpython_eh_frame(&b);
	b.bytes[8] = 2; /* version */
	assert_eh_rejected(b.bytes, b.len, "CIE version 2");
	cpython_eh_frame(&b);
	b.bytes[14] = 15; /* return address register */
	assert_eh_rejected(b.bytes, b.len, "register 15");
	cpython_eh_frame(&b);
	b.bytes[10] = 'X'; /* augmentation "zX" */
	assert_eh_rejected(b.bytes, b.len, "augmentation");
	cpython_eh_frame(&b);
	b.bytes[9] = 'e'; /* augmentation "eR" */
	assert_eh_rejected(b.bytes, b.len, "augmentation");
	cpython_eh_frame(&b);
	b.bytes[16] = 0x9b; /* indirect FDE pointers */
	assert_eh_rejected(b.bytes, b.len, "encoding");
	cpython_eh_frame(&b);
	b.bytes[17] = 0x40 | 1; /* an advance in the CIE */
	assert_eh_rejected(b.bytes, b.len, "in a CIE");
	cpython_eh_frame(&b);
	b.bytes[12] = 0; /* code alignment 0 */
	assert_eh_rejected(b.bytes, b.len, "alignment");

	/* entries */
	cpython_eh_frame(&b);
	memcpy(b.bytes + 24, (const uint8_t[]){ 0xff, 0xff, 0xff, 0xff }, 4);
	assert_eh_rejected(b.bytes, b.len, "64-bit");
	cpython_eh_frame(&b);
	b.bytes[24] = 0x40; /* FDE longer than the blob */
	assert_eh_rejected(b.bytes, b.len, "claims");
	cpython_eh_frame(&b);
	b.bytes[28] = 0x40; /* CIE pointer before the blob */
	assert_eh_rejected(b.bytes, b.len, "leaves the blob");
	cpython_eh_frame(&b);
	b.bytes[28] = 0x04; /* CIE pointer at the FDE itself */
	assert_eh_rejected(b.bytes, b.len, "not at a CIE");
	cpython_eh_frame(&b);
	b.bytes[28] = 0x1a; /* CIE pointer into the CIE's middle */
	assert_eh_rejected(b.bytes, b.len, "");
	cpython_eh_frame(&b);
	assert_eh_rejected(b.bytes, 24, "no FDE");
	assert_eh_rejected(b.bytes, 0, "no FDE");
	assert_eh_rejected(b.bytes, 3, "truncated");
	/* two FDEs */
	struct blob two;
	cpython_eh_frame(&two);
	put(&two, two.bytes + 24, 24);
	memcpy(two.bytes + 52, &(uint32_t){ 52 }, 4);
	assert_eh_rejected(two.bytes, two.len, "more than one FDE");

	ck_assert_int_eq(ps_eh_frame_rule(NULL, 4, 0, 0, &rule, NULL, 0), -EINVAL);
	ck_assert_int_eq(ps_eh_frame_rule(b.bytes, b.len, 0, 0, NULL, NULL, 0), -EINVAL);
}
END_TEST

/* Every truncation and every single-byte change of CPython's blob: an
 * answer or an error, never a read outside the blob (ASan watches). */
START_TEST(test_eh_frame_damaged)
{
	struct blob b;
	const uint64_t code = 0x1000;

	cpython_eh_frame(&b);
	for (size_t len = 0; len < b.len; len++) {
		/* an exact-size copy, so a read past it is an overflow */
		uint8_t *copy = malloc(len ? len : 1);
		struct ps_unwind_rule rule;

		ck_assert_ptr_nonnull(copy);
		memcpy(copy, b.bytes, len);
		/* every cut lands inside an entry or drops the FDE */
		ck_assert_int_eq(ps_eh_frame_rule(copy, len, code, code + 5, &rule, NULL, 0),
		                 -EINVAL);
		free(copy);
	}
	unsigned answered = 0;
	for (size_t at = 0; at < b.len; at++) {
		for (unsigned value = 0; value < 256; value++) {
			uint8_t *copy = malloc(b.len);
			struct ps_unwind_rule rule;
			char errmsg[ERRMSG_SIZE];

			ck_assert_ptr_nonnull(copy);
			memcpy(copy, b.bytes, b.len);
			copy[at] = (uint8_t)value;
			for (uint64_t off = 0; off < 12; off += 5) {
				int rc = ps_eh_frame_rule(copy, b.len, code, code + off, &rule,
				                          errmsg, sizeof(errmsg));
				ck_assert(rc == 0 || rc == -EINVAL || rc == -ERANGE);
				if (rc == 0) {
					answered++;
					ck_assert(rule.cfa_base == PS_UNWIND_CFA_SP ||
					          rule.cfa_base == PS_UNWIND_CFA_RBP);
				}
			}
			free(copy);
		}
	}
	ck_assert_uint_gt(answered, 0);
}
END_TEST

static Suite *suite_trampoline(void)
{
	Suite *s = suite_create("trampoline");
	TCase *tc = tcase_create("template");

	/* _i: 1 with endbr64 in front */
	tcase_add_loop_test(tc, test_template_312, 0, 2);
	tcase_add_loop_test(tc, test_template_314, 0, 2);
	tcase_add_test(tc, test_template_variants);
	tcase_add_test(tc, test_template_rejected);
	tcase_add_test(tc, test_template_garbage);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tc = tcase_create("elf");
	tcase_add_test(tc, test_elf_self);
	tcase_add_test(tc, test_elf_segments);
	tcase_add_test(tc, test_elf_errors);
	tcase_add_test(tc, test_elf_other_machine);
	tcase_add_test(tc, test_real_libpython);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);

	tc = tcase_create("eh_frame");
	tcase_add_test(tc, test_eh_frame_cpython);
	tcase_add_test(tc, test_eh_frame_gcc_style);
	tcase_add_test(tc, test_eh_frame_rejected);
	tcase_add_test(tc, test_eh_frame_damaged);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(suite_trampoline());
	int failed;

	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
