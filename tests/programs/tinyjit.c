/* A tiny JIT for script_jit_runtimes.sh: it copies two functions of x86-64
 * machine code into executable memory, describes them in a jitdump
 * (DIR/jit-PID.dump, DIR the working directory by default: V8's
 * --perf-prof writes it there, CPython's -X perf_jit and .NET's into
 * /tmp) and runs C code through them for the given seconds. `perf inject
 * --jit` turns the jitdump into one ELF file per function next to it
 * (DIR/jitted-PID-0.so and -1.so), whose code lies at file offset and
 * address 0x80.
 *
 *   tinyjit SECONDS [eh|eh-unmapped|none [DIR]]
 *
 * With "eh" each function's entry carries its unwinding information (an
 * .eh_frame and its .eh_frame_hdr, laid out after the code as perf's
 * genelf places them: the data V8's --perf-prof-unwinding-info writes),
 * and perf adds it to the code's mapping (the entry's mapped_size). With
 * "eh-unmapped" the mapping stays the code's (mapped_size 0): perf's
 * libunwind reads the tables where memory holds none. Without, perf
 * guesses those frames with frame pointers.
 *
 * The stacks: burn (C) <- hop (JIT, 17 bytes) <- step (C) <- long_hop
 * (JIT, its call 0x100 bytes in) <- main, and hop's own samples in a loop
 * before its push. Every address of hop, and the return address of
 * long_hop, lies in the last 0x80 bytes of its function.
 * Prints nothing. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if !defined(__x86_64__)
int main(void)
{
	fputs("tinyjit: x86-64 only\n", stderr);
	return 2;
}
#else

#define JIT_MAGIC 0x4A695444u /* "JiTD" */
#define JIT_CODE_LOAD 0
#define JIT_CODE_UNWINDING_INFO 4
#define LONG_HOP_PAD 0x100

typedef void (*hop_fn)(void (*fn)(void));

static int dump_fd = -1;
static uint64_t code_index;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void write_all(const void *buf, size_t size)
{
	const char *p = buf;

	while (size > 0) {
		ssize_t n = write(dump_fd, p, size);
		if (n <= 0) {
			perror("tinyjit: writing the jitdump");
			exit(1);
		}
		p += n;
		size -= (size_t)n;
	}
}

/* ---- unwinding information, as genelf lays it out ---------------------
 * The ELF file has the code at 0x80 and the .eh_frame at the next 8-byte
 * boundary after it, the .eh_frame_hdr right after the .eh_frame; the
 * encoded pointers are relative to those places. */

struct blob {
	uint8_t bytes[256];
	size_t len;
};

static void put(struct blob *b, const void *bytes, size_t n)
{
	if (b->len + n > sizeof(b->bytes)) {
		fputs("tinyjit: unwinding information too large\n", stderr);
		exit(1);
	}
	memcpy(b->bytes + b->len, bytes, n);
	b->len += n;
}

static void put_u8(struct blob *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_u32(struct blob *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put_i32_at(struct blob *b, size_t at, int32_t v)
{
	memcpy(b->bytes + at, &v, 4);
}

/* the rows of `<spin>; push %rbp; mov %rsp,%rbp; <body>; pop %rbp; ret`
 * whose push lies at push_at and pop at pop_at: CFA rsp+8, rsp+16 after
 * the push, rbp+16 after the mov, rsp+8 after the pop */
static void fde_rows(struct blob *b, size_t push_at, size_t pop_at)
{
	uint16_t to_mov = (uint16_t)(push_at + 1);
	uint16_t to_ret = (uint16_t)(pop_at + 1 - (push_at + 4));

	put_u8(b, 0x03); /* DW_CFA_advance_loc2 */
	put(b, &to_mov, 2);
	put_u8(b, 0x0e); /* DW_CFA_def_cfa_offset 16 */
	put_u8(b, 16);
	put_u8(b, 0x80 | 6); /* DW_CFA_offset rbp, 2 * -8 */
	put_u8(b, 2);
	put_u8(b, 0x40 | 3); /* DW_CFA_advance_loc 3 */
	put_u8(b, 0x0d); /* DW_CFA_def_cfa_register rbp */
	put_u8(b, 6);
	put_u8(b, 0x03); /* DW_CFA_advance_loc2 */
	put(b, &to_ret, 2);
	put_u8(b, 0x0c); /* DW_CFA_def_cfa rsp, 8 */
	put_u8(b, 7);
	put_u8(b, 8);
}

static void pad_entry(struct blob *b, size_t start)
{
	while ((b->len - start) % 8)
		put_u8(b, 0); /* DW_CFA_nop */
	put_i32_at(b, start, (int32_t)(b->len - start - 4));
}

/* .eh_frame (a CIE, one FDE, a terminator) and .eh_frame_hdr for code of
 * code_size bytes whose push is at push_at and pop at pop_at; *hdr_size
 * is the header's */
static void unwinding_info(struct blob *b, size_t code_size, size_t push_at, size_t pop_at,
                           size_t *hdr_size)
{
	uint64_t eh_frame = (code_size + 7) & ~(uint64_t)7; /* from the code's start */
	size_t cie = b->len;

	put_u32(b, 0); /* length, set below */
	put_u32(b, 0); /* CIE id */
	put_u8(b, 1); /* version */
	put(b, "zR", 3);
	put_u8(b, 1); /* code alignment */
	put_u8(b, 0x78); /* data alignment -8 */
	put_u8(b, 16); /* return address: rip */
	put_u8(b, 1); /* augmentation data length */
	put_u8(b, 0x1b); /* FDE pointers: pcrel sdata4 */
	put_u8(b, 0x0c); /* DW_CFA_def_cfa rsp, 8 */
	put_u8(b, 7);
	put_u8(b, 8);
	put_u8(b, 0x80 | 16); /* DW_CFA_offset rip, 1 * -8 */
	put_u8(b, 1);
	pad_entry(b, cie);

	size_t fde = b->len;
	put_u32(b, 0); /* length */
	put_u32(b, (uint32_t)(fde + 4 - cie)); /* CIE pointer */
	size_t pc_begin = b->len;
	put_u32(b, 0); /* pc_begin, set below */
	put_u32(b, (uint32_t)code_size);
	put_u8(b, 0); /* augmentation data length */
	fde_rows(b, push_at, pop_at);
	pad_entry(b, fde);
	put_i32_at(b, pc_begin, (int32_t)(0 - (int64_t)(eh_frame + pc_begin)));
	put_u32(b, 0); /* terminator */

	/* the header: version, encodings, eh_frame_ptr, count, table */
	size_t hdr = b->len;
	uint64_t hdr_addr = eh_frame + hdr;
	put_u8(b, 1);
	put_u8(b, 0x1b); /* eh_frame_ptr: pcrel sdata4 */
	put_u8(b, 0x03); /* fde_count: udata4 */
	put_u8(b, 0x3b); /* table: datarel sdata4 */
	put_u32(b, (uint32_t)(int32_t)(0 - (int64_t)(hdr + 4))); /* to the .eh_frame */
	put_u32(b, 1);
	put_u32(b, (uint32_t)(int32_t)(0 - (int64_t)hdr_addr)); /* the code's start */
	put_u32(b, (uint32_t)(int32_t)((int64_t)fde - (int64_t)hdr));
	*hdr_size = b->len - hdr;
}

/* ---- the jitdump ---------------------------------------------------- */

static void out_u32(uint32_t v)
{
	write_all(&v, sizeof(v));
}

static void out_u64(uint64_t v)
{
	write_all(&v, sizeof(v));
}

static void record_header(uint32_t id, size_t size, uint64_t timestamp)
{
	out_u32(id);
	out_u32((uint32_t)size);
	out_u64(timestamp);
}

static void describe(const char *name, const void *code, size_t size, size_t push_at, size_t pop_at,
                     bool eh, bool mapped)
{
	uint64_t timestamp = now_ns();

	if (eh) {
		struct blob b = { .len = 0 };
		size_t hdr_size;

		unwinding_info(&b, size, push_at, pop_at, &hdr_size);
		size_t padded = (b.len + 7) & ~(size_t)7;

		record_header(JIT_CODE_UNWINDING_INFO, 16 + 3 * 8 + padded, timestamp);
		/* the unwinding data's size, its header's, and how much of it
		 * perf adds to the code's mapping (all) */
		out_u64(b.len);
		out_u64(hdr_size);
		out_u64(mapped ? b.len : 0);
		write_all(b.bytes, padded);
	}
	record_header(JIT_CODE_LOAD, 16 + 2 * 4 + 4 * 8 + strlen(name) + 1 + size, timestamp);
	out_u32((uint32_t)getpid());
	out_u32((uint32_t)syscall(SYS_gettid));
	out_u64((uintptr_t)code); /* vma */
	out_u64((uintptr_t)code); /* code_addr */
	out_u64(size);
	out_u64(code_index++);
	write_all(name, strlen(name) + 1);
	write_all(code, size);
}

static void open_dump(const char *dir)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/jit-%d.dump", dir, (int)getpid());
	dump_fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (dump_fd < 0) {
		perror("tinyjit: creating the jitdump");
		exit(1);
	}
	out_u32(JIT_MAGIC);
	out_u32(1); /* version */
	out_u32(40); /* the header's size */
	out_u32(EM_X86_64);
	out_u32(0);
	out_u32((uint32_t)getpid());
	out_u64(now_ns());
	out_u64(0); /* flags */
	/* an executable mapping of the dump is how perf finds it */
	if (mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC, MAP_PRIVATE, dump_fd,
	         0) == MAP_FAILED) {
		perror("tinyjit: mapping the jitdump");
		exit(1);
	}
}

/* ---- the program ---------------------------------------------------- */

static volatile double sink;
static hop_fn hop;

__attribute__((noinline)) static void burn(void)
{
	double x = sink;

	for (int i = 0; i < 20000; i++)
		x = x * 1.0000001 + 0.5;
	sink = x;
}

__attribute__((noinline)) static void step(void)
{
	hop(burn);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

int main(int argc, char **argv)
{
	/* mov $20000,%ecx; 1: dec %ecx; jnz 1b (hop's samples before its
	 * push, where the CIE's rule holds); push %rbp; mov %rsp,%rbp;
	 * call *%rdi; pop %rbp; ret */
	static const uint8_t spin[] = { 0xb9, 0x20, 0x4e, 0x00, 0x00, 0xff, 0xc9, 0x75, 0xfc };
	static const uint8_t prologue[] = { 0x55, 0x48, 0x89, 0xe5 };
	static const uint8_t tail[] = { 0xff, 0xd7, 0x5d, 0xc3 };
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	bool eh = argc > 2 && strncmp(argv[2], "eh", 2) == 0;
	bool mapped = argc > 2 && strcmp(argv[2], "eh") == 0;
	const char *dir = argc > 3 ? argv[3] : ".";
	uint8_t *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED || !(seconds > 0 && seconds < 3600)) {
		fputs("usage: tinyjit SECONDS [eh|eh-unmapped|none [DIR]]\n", stderr);
		return 2;
	}
	/* hop at 0x40, long_hop at 0x100 (its call after 0x100 nops) */
	uint8_t *short_code = mem + 0x40, *long_code = mem + 0x100, *p = long_code;
	memcpy(short_code, spin, sizeof(spin));
	memcpy(short_code + sizeof(spin), prologue, sizeof(prologue));
	memcpy(short_code + sizeof(spin) + sizeof(prologue), tail, sizeof(tail));
	memcpy(p, prologue, sizeof(prologue));
	p += sizeof(prologue);
	memset(p, 0x90, LONG_HOP_PAD);
	p += LONG_HOP_PAD;
	memcpy(p, tail, sizeof(tail));
	p += sizeof(tail);
	size_t short_size = sizeof(spin) + sizeof(prologue) + sizeof(tail);
	size_t long_size = (size_t)(p - long_code);
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) != 0) {
		perror("tinyjit: mprotect");
		return 1;
	}
	open_dump(dir);
	describe("tinyjit::hop", short_code, short_size, sizeof(spin), short_size - 2, eh, mapped);
	describe("tinyjit::long_hop", long_code, long_size, 0, long_size - 2, eh, mapped);

	hop = (hop_fn)(uintptr_t)short_code;
	hop_fn long_hop = (hop_fn)(uintptr_t)long_code;
	uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
	while (now_ns() < end)
		long_hop(step);
	close(dump_fd);
	return 0;
}
#endif
