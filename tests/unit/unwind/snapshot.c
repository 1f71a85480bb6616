/* Snapshots of the test process's own registers and stack, and its
 * /proc/self/maps as a find_map table (see snapshot.h). */
#define _GNU_SOURCE
#include "snapshot.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SNAP_MAX_STACK (1u << 20)

/* Frames must stay where the source puts them: no inlining, no clones. */
#if defined(__clang__)
#define KEEP_FRAME __attribute__((noinline))
#else
#define KEEP_FRAME __attribute__((noinline, noclone))
#endif

/* ---- taking a snapshot ------------------------------------------------ */

struct capture_ctx {
	struct snapshot *snap;
	uint64_t stack_top; /* end of the [stack] mapping */
	enum snap_mode mode;
};

/* The signal handler finds its context here; the tests run one at a time
 * in their own process. */
static struct capture_ctx *signal_ctx;

/* Copy [sp, sp + n) with rep movsb: the stack holds sanitizer redzones,
 * which an instrumented memcpy would report. */
static void copy_stack(uint8_t *dst, uint64_t sp, uint64_t n)
{
	void *d = dst;
	const void *s = (const void *)(uintptr_t)sp;

	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

KEEP_FRAME static void capture(struct capture_ctx *ctx)
{
	struct snapshot *snap = ctx->snap;
	uint64_t r[24];

	/* every register perf records, then the address of label 1 as IP:
	 * at that label the stack and the CFI row are those of the stores */
	__asm__ volatile("movq %%rax, 0(%[r])\n\t"
	                 "movq %%rbx, 8(%[r])\n\t"
	                 "movq %%rcx, 16(%[r])\n\t"
	                 "movq %%rdx, 24(%[r])\n\t"
	                 "movq %%rsi, 32(%[r])\n\t"
	                 "movq %%rdi, 40(%[r])\n\t"
	                 "movq %%rbp, 48(%[r])\n\t"
	                 "movq %%rsp, 56(%[r])\n\t"
	                 "movq %%r8, 128(%[r])\n\t"
	                 "movq %%r9, 136(%[r])\n\t"
	                 "movq %%r10, 144(%[r])\n\t"
	                 "movq %%r11, 152(%[r])\n\t"
	                 "movq %%r12, 160(%[r])\n\t"
	                 "movq %%r13, 168(%[r])\n\t"
	                 "movq %%r14, 176(%[r])\n\t"
	                 "movq %%r15, 184(%[r])\n\t"
	                 "leaq 1f(%%rip), %%rax\n\t"
	                 "movq %%rax, 64(%[r])\n"
	                 "1:\n\t"
	                 :
	                 : [r] "r"(r)
	                 : "rax", "memory");

	for (int i = 0; i <= SNAP_REG_IP; i++)
		snap->regs[i] = r[i];
	for (int i = 0; i < 8; i++)
		snap->regs[SNAP_REG_IP + 1 + i] = r[SNAP_REG_R8 + i];
	snap->ip = r[SNAP_REG_IP];
	snap->sp = r[SNAP_REG_SP];
	snap->ra[0] = (uint64_t)(uintptr_t)__builtin_return_address(0);

	uint64_t n = ctx->stack_top - snap->sp;
	if (n > SNAP_MAX_STACK)
		n = SNAP_MAX_STACK;
	snap->stack = malloc(n);
	if (snap->stack) {
		copy_stack(snap->stack, snap->sp, n);
		snap->stack_size = n;
	}
}

/* The empty asm after each call keeps it from becoming a tail call. */
KEEP_FRAME static void level1(struct capture_ctx *ctx)
{
	capture(ctx);
	ctx->snap->ra[1] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static void on_signal(int sig)
{
	struct capture_ctx *ctx = signal_ctx;

	level1(ctx);
	ctx->snap->signal_ra = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

/* nocfi_call(ctx, fn, &ra): stores its return address, then calls fn(ctx)
 * from a frame-pointer frame with 32 bytes of locals. No .cfi directives,
 * so .eh_frame does not describe it. */
void ps_test_nocfi_call(struct capture_ctx *ctx, void (*fn)(struct capture_ctx *), uint64_t *ra);
__asm__(".text\n"
        ".type ps_test_nocfi_call, @function\n"
        "ps_test_nocfi_call:\n"
        "\tmovq (%rsp), %rax\n"
        "\tmovq %rax, (%rdx)\n"
        "\tpushq %rbp\n"
        "\tmovq %rsp, %rbp\n"
        "\tsubq $32, %rsp\n"
        "\tcall *%rsi\n"
        "\tleave\n"
        "\tret\n"
        ".size ps_test_nocfi_call, .-ps_test_nocfi_call\n");

/* rbx_call(ctx, fn): pushes rbx, takes its CFA from rbx as it aligns the
 * stack, and calls fn(ctx) through rbx_hop, whose CFI leaves rbx out. */
void ps_test_rbx_call(struct capture_ctx *ctx, void (*fn)(struct capture_ctx *));
__asm__(".text\n"
        ".type ps_test_rbx_hop, @function\n"
        "ps_test_rbx_hop:\n"
        "\t.cfi_startproc\n"
        "\tsubq $8, %rsp\n"
        "\t.cfi_def_cfa_offset 16\n"
        "\tcall *%rsi\n"
        "\taddq $8, %rsp\n"
        "\t.cfi_def_cfa_offset 8\n"
        "\tret\n"
        "\t.cfi_endproc\n"
        ".size ps_test_rbx_hop, .-ps_test_rbx_hop\n"
        ".type ps_test_rbx_call, @function\n"
        "ps_test_rbx_call:\n"
        "\t.cfi_startproc\n"
        "\tpushq %rbx\n"
        "\t.cfi_def_cfa_offset 16\n"
        "\t.cfi_offset %rbx, -16\n"
        "\tmovq %rsp, %rbx\n"
        "\t.cfi_def_cfa_register %rbx\n"
        "\tandq $-32, %rsp\n"
        "\tcall ps_test_rbx_hop\n"
        "\tmovq %rbx, %rsp\n"
        "\t.cfi_def_cfa_register %rsp\n"
        "\tpopq %rbx\n"
        "\t.cfi_def_cfa_offset 8\n"
        "\tret\n"
        "\t.cfi_endproc\n"
        ".size ps_test_rbx_call, .-ps_test_rbx_call\n");

/* CPython's trampoline templates, called as tramp(arg, NULL, NULL, fn) to
 * run fn(arg): the fourth argument arrives in rcx. */
static const uint8_t template_312[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
	                                0x48, 0x83, 0xc4, 0x08, 0xc3 };
static const uint8_t template_314[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3 };
#define TEMPLATE_RETURN_SITE 6 /* both: the instruction after the call */

typedef void (*trampoline_fn)(struct capture_ctx *, void *, void *, void (*)(void));

/* ps_test_tramp_target: what the trampoline calls. It notes the
 * callee-saved registers, the SP after the return into the trampoline and
 * the trampoline's return address (16 bytes above its own in both
 * templates), then jumps to ps_test_tramp_next, so it leaves no frame. */
extern uint64_t ps_test_tramp_saved[8];
extern void (*ps_test_tramp_next)(struct capture_ctx *);
uint64_t ps_test_tramp_saved[8];
void (*ps_test_tramp_next)(struct capture_ctx *);
void ps_test_tramp_target(void);
__asm__(".text\n"
        ".type ps_test_tramp_target, @function\n"
        "ps_test_tramp_target:\n"
        "\tmovq %rbx, ps_test_tramp_saved+0(%rip)\n"
        "\tmovq %rbp, ps_test_tramp_saved+8(%rip)\n"
        "\tmovq %r12, ps_test_tramp_saved+16(%rip)\n"
        "\tmovq %r13, ps_test_tramp_saved+24(%rip)\n"
        "\tmovq %r14, ps_test_tramp_saved+32(%rip)\n"
        "\tmovq %r15, ps_test_tramp_saved+40(%rip)\n"
        "\tleaq 8(%rsp), %rax\n"
        "\tmovq %rax, ps_test_tramp_saved+48(%rip)\n"
        "\tmovq 16(%rsp), %rax\n"
        "\tmovq %rax, ps_test_tramp_saved+56(%rip)\n"
        "\tjmp *ps_test_tramp_next(%rip)\n"
        ".size ps_test_tramp_target, .-ps_test_tramp_target\n");

static void call_through_trampoline(struct capture_ctx *ctx)
{
	struct snapshot *snap = ctx->snap;
	const uint8_t *code = ctx->mode == SNAP_TRAMPOLINE ? template_312 : template_314;
	size_t size = ctx->mode == SNAP_TRAMPOLINE ? sizeof(template_312) : sizeof(template_314);
	long page = sysconf(_SC_PAGESIZE);
	void *mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	                 -1, 0);

	if (mem == MAP_FAILED)
		return;
	memcpy(mem, code, size);
	if (mprotect(mem, (size_t)page, PROT_READ | PROT_EXEC) != 0) {
		munmap(mem, (size_t)page);
		return;
	}
	snap->tramp = mem;
	snap->tramp_return = (uint64_t)(uintptr_t)mem + TEMPLATE_RETURN_SITE;
	ps_test_tramp_next = level1;
	((trampoline_fn)mem)(ctx, NULL, NULL, ps_test_tramp_target);
	snap->tramp_ra = ps_test_tramp_saved[7];
	/* packed like regs: BX=1 BP=6 SP=7 IP=8, R12..R15 at 9 + 4.. */
	memcpy(snap->at_return_regs, snap->regs, sizeof(snap->regs));
	snap->at_return_regs[1] = ps_test_tramp_saved[0];
	snap->at_return_regs[6] = ps_test_tramp_saved[1];
	for (int i = 0; i < 4; i++)
		snap->at_return_regs[SNAP_REG_IP + 1 + 4 + i] = ps_test_tramp_saved[2 + i];
	snap->at_return_regs[SNAP_REG_SP] = ps_test_tramp_saved[6];
	snap->at_return_regs[SNAP_REG_IP] = snap->tramp_return;
}

KEEP_FRAME static void level2(struct capture_ctx *ctx)
{
	if (ctx->mode == SNAP_SIGNAL) {
		signal_ctx = ctx;
		signal(SIGUSR1, on_signal);
		raise(SIGUSR1);
		signal(SIGUSR1, SIG_DFL);
	} else if (ctx->mode == SNAP_NO_CFI) {
		ps_test_nocfi_call(ctx, level1, &ctx->snap->nocfi_ra);
	} else if (ctx->mode == SNAP_TRAMPOLINE || ctx->mode == SNAP_TRAMPOLINE_FP) {
		call_through_trampoline(ctx);
	} else if (ctx->mode == SNAP_RBX_CFA) {
		ps_test_rbx_call(ctx, level1);
	} else {
		level1(ctx);
	}
	ctx->snap->ra[2] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

KEEP_FRAME static void level3(struct capture_ctx *ctx)
{
	level2(ctx);
	ctx->snap->ra[3] = (uint64_t)(uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static bool stack_top(uint64_t *top)
{
	struct test_maps tm;
	/* not the address of a local: sanitizers may move locals to the heap */
	uint64_t here = (uint64_t)(uintptr_t)__builtin_frame_address(0);

	if (!test_maps_load(&tm))
		return false;
	struct test_map *m = test_maps_find(&tm, here);
	if (m)
		*top = m->end;
	test_maps_free(&tm);
	return m != NULL;
}

bool snapshot_take(struct snapshot *snap, enum snap_mode mode)
{
	struct capture_ctx ctx = { .snap = snap, .mode = mode };

	memset(snap, 0, sizeof(*snap));
	if (!stack_top(&ctx.stack_top))
		return false;
	level3(&ctx);
	return snap->stack != NULL;
}

void snapshot_free(struct snapshot *snap)
{
	free(snap->stack);
	snap->stack = NULL;
	if (snap->tramp)
		munmap(snap->tramp, (size_t)sysconf(_SC_PAGESIZE));
	snap->tramp = NULL;
}

long snapshot_ra_offset(const struct snapshot *snap, int level)
{
	/* the lowest slot above the previous level's that holds the value */
	long from = level > 0 ? snapshot_ra_offset(snap, level - 1) + 8 : 0;

	if (from < 0)
		return -1;
	for (uint64_t off = (uint64_t)from; off + 8 <= snap->stack_size; off += 8) {
		uint64_t word;

		memcpy(&word, snap->stack + off, 8);
		if (word == snap->ra[level])
			return (long)off;
	}
	return -1;
}

struct ps_unwind_sample snapshot_sample(const struct snapshot *snap)
{
	return (struct ps_unwind_sample){
		.pid = 1,
		.tid = 1,
		.regs_abi = 2,
		.regs_mask = SNAP_REGS_MASK,
		.nr_regs = SNAP_NR_REGS,
		.regs = snap->regs,
		.stack = snap->stack,
		.stack_size = snap->stack_size,
	};
}

struct ps_unwind_sample snapshot_sample_at_return(const struct snapshot *snap,
                                                  uint64_t regs[SNAP_NR_REGS])
{
	struct ps_unwind_sample sample = snapshot_sample(snap);
	uint64_t sp = snap->at_return_regs[SNAP_REG_SP];

	memcpy(regs, snap->at_return_regs, SNAP_NR_REGS * sizeof(regs[0]));
	sample.regs = regs;
	if (sp < snap->sp || sp - snap->sp > snap->stack_size)
		return sample;
	sample.stack = snap->stack + (sp - snap->sp);
	sample.stack_size = snap->stack_size - (sp - snap->sp);
	return sample;
}

/* ---- mappings ------------------------------------------------------------ */

bool test_maps_load(struct test_maps *tm)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];

	memset(tm, 0, sizeof(*tm));
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, pgoff;
		char perms[8];
		int name_at = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end,
		           perms, &pgoff, &name_at) < 4)
			continue;
		struct test_map *grown = realloc(tm->maps, (tm->nr + 1) * sizeof(*grown));
		if (!grown)
			break;
		tm->maps = grown;
		char *name = strdup(name_at ? line + name_at : "");
		if (!name)
			break;
		name[strcspn(name, "\n")] = '\0';
		tm->maps[tm->nr++] = (struct test_map){
			.start = start,
			.end = end,
			.pgoff = pgoff,
			.name = name,
			.path = name[0] == '/' ? name : NULL,
			.exec = perms[2] == 'x',
		};
	}
	fclose(f);
	return tm->nr > 0;
}

void test_maps_free(struct test_maps *tm)
{
	for (size_t i = 0; i < tm->nr; i++)
		free(tm->maps[i].name);
	free(tm->maps);
	tm->maps = NULL;
	tm->nr = 0;
}

struct test_map *test_maps_find(struct test_maps *tm, uint64_t addr)
{
	for (size_t i = 0; i < tm->nr; i++)
		if (addr >= tm->maps[i].start && addr < tm->maps[i].end)
			return &tm->maps[i];
	return NULL;
}

bool test_find_map(void *ctx, uint64_t addr, struct ps_unwind_map *out)
{
	struct test_maps *tm = ctx;
	struct test_map *m = test_maps_find(tm, addr);

	tm->lookups++;
	if (!m || (tm->hide && tm->hide >= m->start && tm->hide < m->end))
		return false;
	*out = (struct ps_unwind_map){
		.start = m->start,
		.end = m->end,
		.pgoff = m->pgoff,
		.path = m->path,
		.debug_path = m->debug_path,
		.name = m->name,
		.exec = m->exec,
		.libunwind_base = m->libunwind_base,
	};
	return true;
}

uint64_t test_maps_generation(void *ctx)
{
	const struct test_maps *tm = ctx;

	return tm->generation;
}

uint64_t snapshot_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}
