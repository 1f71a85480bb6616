/* bpf_progs SECONDS READY: loads four small BPF socket filters (one plain,
 * one named through BTF, one with a BPF-to-BPF call, and that one with
 * BTF), creates the file READY once they are loaded and holds them for
 * SECONDS, so that a `perf record` run meanwhile stores them in its
 * BPF_PROG_INFO and BPF_BTF features. Exits 77 when the kernel will not
 * load BPF programs (no permission, no BPF syscall), 1 on other errors. */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

/* [1] int, [2] int (void), [3] static func ps_main, [4] static func ps_leaf */
static int load_btf(void)
{
	static const char strings[] = "\0int\0ps_main\0ps_leaf";
	static const uint32_t types[] = {
		1,
		BTF_KIND_INT << 24,
		4,
		BTF_INT_SIGNED << 24 | 32,
		0,
		BTF_KIND_FUNC_PROTO << 24,
		1,
		5,
		BTF_KIND_FUNC << 24,
		2,
		13,
		BTF_KIND_FUNC << 24,
		2,
	};
	struct btf_header header = {
		.magic = BTF_MAGIC,
		.version = BTF_VERSION,
		.hdr_len = sizeof(header),
		.type_len = sizeof(types),
		.str_off = sizeof(types),
		.str_len = sizeof(strings),
	};
	uint8_t blob[sizeof(header) + sizeof(types) + sizeof(strings)];
	union bpf_attr attr;

	memcpy(blob, &header, sizeof(header));
	memcpy(blob + sizeof(header), types, sizeof(types));
	memcpy(blob + sizeof(header) + sizeof(types), strings, sizeof(strings));
	memset(&attr, 0, sizeof(attr));
	attr.btf = (uintptr_t)blob;
	attr.btf_size = sizeof(blob);
	return sys_bpf(BPF_BTF_LOAD, &attr);
}

static int load(const char *name, int calls, int btf_fd)
{
	static const struct bpf_insn flat[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	/* main calls the function at instruction 2 */
	static const struct bpf_insn call[] = {
		{ .code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_CALL, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static const struct bpf_func_info funcs[] = { { .insn_off = 0, .type_id = 3 },
		                                      { .insn_off = 2, .type_id = 4 } };
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uintptr_t)(calls ? call : flat);
	attr.insn_cnt = calls ? 4 : 2;
	attr.license = (uintptr_t) "GPL";
	strncpy(attr.prog_name, name, sizeof(attr.prog_name) - 1);
	if (btf_fd >= 0) {
		attr.prog_btf_fd = (uint32_t)btf_fd;
		attr.func_info_rec_size = sizeof(funcs[0]);
		attr.func_info = (uintptr_t)funcs;
		attr.func_info_cnt = calls ? 2 : 1;
	}
	return sys_bpf(BPF_PROG_LOAD, &attr);
}

int main(int argc, char **argv)
{
	int btf, fd;

	if (argc != 3) {
		fprintf(stderr, "usage: bpf_progs SECONDS READY\n");
		return 1;
	}
	btf = load_btf();
	if (btf < 0 || load("ps_plain", 0, -1) < 0 || load("ps_btf", 0, btf) < 0 ||
	    load("ps_calls", 1, -1) < 0 || load("ps_calls_btf", 1, btf) < 0) {
		int err = errno;

		fprintf(stderr, "bpf_progs: cannot load BPF programs: %s\n", strerror(err));
		return err == EPERM || err == EACCES || err == ENOSYS ? 77 : 1;
	}
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || close(fd) != 0) {
		perror(argv[2]);
		return 1;
	}
	usleep((useconds_t)(atof(argv[1]) * 1e6));
	return 0;
}
