/* Unit tests of src/machine: the threads and address spaces that FORK,
 * COMM and EXIT records build, on records a capture can hold, hostile
 * ones included (a fuzzer found the use after free below). */
#include <check.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "machine/machine.h"

static struct ps_event fork_event(uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct ps_event ev = { .type = PERF_RECORD_FORK };

	ev.u.fork = (struct ps_record_fork){ .pid = pid, .ppid = ppid, .tid = tid, .ptid = ptid };
	return ev;
}

START_TEST(test_fork_makes_child)
{
	struct ps_machine *m;
	struct ps_event ev = fork_event(100, 1, 100, 1);
	struct ps_thread *t;

	ck_assert_int_eq(ps_machine_new(&m), 0);
	ck_assert_int_eq(ps_machine_process_event(m, &ev), 0);
	t = ps_machine_thread(m, 100, 100);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->pid, 100);
	ck_assert_int_eq(t->ppid, 1);
	ps_machine_free(m);
}
END_TEST

/* A FORK whose parent tid is a thread of another process (a stale thread,
 * started over as perf does) and whose child tid is that same thread:
 * the thread looked up as the child's predecessor is the one already
 * removed as the stale parent. */
START_TEST(test_fork_child_is_stale_parent)
{
	struct ps_machine *m;
	struct ps_event first = fork_event(100, 1, 100, 1);
	struct ps_event hostile = fork_event(200, 200, 100, 100);
	struct ps_event again = fork_event(300, 200, 300, 100);
	struct ps_thread *t;

	ck_assert_int_eq(ps_machine_new(&m), 0);
	ck_assert_int_eq(ps_machine_process_event(m, &first), 0);
	ck_assert_int_eq(ps_machine_process_event(m, &hostile), 0);
	t = ps_machine_thread(m, 200, 100);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->pid, 200);
	/* and the machine is still whole: another fork from that thread */
	ck_assert_int_eq(ps_machine_process_event(m, &again), 0);
	t = ps_machine_thread(m, 300, 300);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(t->ppid, 100);
	ps_machine_free(m);
}
END_TEST

/* perf_session__register_idle_thread(): tid 0 is "swapper" before any
 * record, for a sample (pid 0) or the kernel MMAP's (pid -1, tid 0); a
 * thread never named is ":tid". */
START_TEST(test_idle_thread_is_swapper)
{
	struct ps_machine *m;
	struct ps_thread *t;

	ck_assert_int_eq(ps_machine_new(&m), 0);
	t = ps_machine_thread(m, -1, 0);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(t->comm, "swapper");
	ck_assert(t->comm_set);
	ck_assert_ptr_eq(ps_machine_thread(m, 0, 0), t);
	ck_assert_int_eq(t->pid, 0);
	t = ps_machine_thread(m, 100, 101);
	ck_assert_str_eq(t->comm, ":101");
	ps_machine_free(m);
}
END_TEST

/* A kernel-mode MMAP of filename at start; returns its object. */
static const struct ps_mapped_object *kernel_mmap(struct ps_machine *m, uint64_t start,
                                                  const char *filename)
{
	struct ps_event ev = { .type = PERF_RECORD_MMAP, .misc = PERF_RECORD_MISC_KERNEL };
	const struct ps_map *map;

	ev.u.mmap = (struct ps_record_mmap){
		.pid = (uint32_t)-1, .start = start, .len = 0x1000, .filename = filename
	};
	ck_assert_int_eq(ps_machine_process_event(m, &ev), 0);
	map = ps_process_find_map(ps_machine_kernel(m), start);
	ck_assert_ptr_nonnull(map);
	return map->object;
}

/* perf's __kmod_path__parse(): the DSO name perf prints for a module. */
START_TEST(test_module_names)
{
	static const struct {
		const char *filename, *name;
	} cases[] = {
		{ "/lib/modules/6.1.0-9-amd64/kernel/sound/pci/hda/snd-hda-intel.ko.xz",
		  "[snd_hda_intel]" },
		{ "/lib/modules/4.9.0-4-amd64/kernel/arch/x86/kvm/kvm.ko", "[kvm]" },
		{ "/lib/modules/6.1/kernel/fs/nfs.ko.gz", "[nfs]" },
		{ "/lib/modules/6.1/extra/aaa.bbb.ko", "[aaa.bbb]" },
		/* zstd is not a compression perf 6.1 knows: not a module name */
		{ "/lib/modules/6.1/kernel/zst-mod.ko.zst", "zst_mod.ko.zst" },
		{ "/lib/modules/6.1-x/kernel/no_suffix", "no_suffix" },
		{ "[qux-mod]", "[qux-mod]" },
		{ "[bpf_prog]", "[bpf_prog]" },
	};
	struct ps_machine *m;
	const struct ps_mapped_object *o;

	ck_assert_int_eq(ps_machine_new(&m), 0);
	o = kernel_mmap(m, 0xffffffff81000000ull, "[kernel.kallsyms]_text");
	ck_assert(o->kernel);
	ck_assert_ptr_null(o->module_name);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		o = kernel_mmap(m, 0xffffffffc0000000ull + 0x10000 * i, cases[i].filename);
		ck_assert(o->kernel);
		ck_assert_ptr_nonnull(o->module_name);
		ck_assert_str_eq(o->module_name, cases[i].name);
		ck_assert_str_eq(o->name, cases[i].filename);
	}
	ps_machine_free(m);
}
END_TEST

/* perf's maps->addr_space: kept across exec and by the process's threads;
 * a new process's copy of its parent's maps starts without it. */
START_TEST(test_unwind_ready)
{
	struct ps_machine *m;
	struct ps_event mmap = { .type = PERF_RECORD_MMAP, .misc = PERF_RECORD_MISC_USER };
	struct ps_event exec = { .type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_COMM_EXEC };
	struct ps_event thread = fork_event(100, 100, 101, 100);
	struct ps_event child = fork_event(200, 100, 200, 100);
	struct ps_process *parent, *p;

	ck_assert_int_eq(ps_machine_new(&m), 0);
	mmap.u.mmap = (struct ps_record_mmap){
		.pid = 100, .tid = 100, .start = 0x400000, .len = 0x1000, .filename = "/bin/x"
	};
	ck_assert_int_eq(ps_machine_process_event(m, &mmap), 0);
	parent = ps_machine_process(m, 100);
	ck_assert(!ps_process_unwind_ready(parent));
	ps_process_set_unwind_ready(parent);
	exec.u.comm = (struct ps_record_comm){ .pid = 100, .tid = 100, .comm = "y" };
	ck_assert_int_eq(ps_machine_process_event(m, &exec), 0);
	ck_assert_int_eq(ps_machine_process_event(m, &thread), 0);
	ck_assert(ps_process_unwind_ready(parent));
	/* a process of its own with a stale flag (pid reuse): cleared */
	p = ps_machine_process(m, 200);
	ps_process_set_unwind_ready(p);
	ck_assert_int_eq(ps_machine_process_event(m, &child), 0);
	/* (the new leader has an address space of its own, see below) */
	p = ps_machine_process(m, 200);
	ck_assert(!ps_process_unwind_ready(p));
	ck_assert_ptr_nonnull(ps_process_find_map(p, 0x400000));
	ck_assert(ps_process_unwind_ready(parent));
	ps_machine_free(m);
}
END_TEST

/* Read in file order, a process's maps and a thread of it can come before
 * the FORK that makes it (the CPUs' buffers are written apart). perf's
 * FORK makes the leader again with maps of its own, a copy of its
 * parent's, while the thread already there keeps the maps it holds, and
 * perf names its frames from them (script --show-round-events). */
START_TEST(test_fork_after_its_records)
{
	struct ps_machine *m;
	struct ps_event mmap = { .type = PERF_RECORD_MMAP2, .misc = PERF_RECORD_MISC_USER };
	struct ps_event leader = fork_event(300, 100, 300, 100);
	struct ps_event again = fork_event(300, 300, 302, 300);
	struct ps_thread *worker, *later;

	ck_assert_int_eq(ps_machine_new(&m), 0);
	mmap.u.mmap = (struct ps_record_mmap){
		.pid = 100, .tid = 100, .start = 0x400000, .len = 0x1000, .filename = "/bin/sh"
	};
	ck_assert_int_eq(ps_machine_process_event(m, &mmap), 0);
	mmap.u.mmap = (struct ps_record_mmap){
		.pid = 300, .tid = 300, .start = 0x500000, .len = 0x1000, .filename = "/bin/prog"
	};
	ck_assert_int_eq(ps_machine_process_event(m, &mmap), 0);
	worker = ps_machine_thread(m, 300, 301);
	ck_assert_ptr_nonnull(ps_process_find_map(ps_machine_thread_process(m, worker), 0x500000));
	ck_assert_int_eq(ps_machine_process_event(m, &leader), 0);
	/* the leader: its parent's maps alone */
	struct ps_process *fresh = ps_machine_thread_process(m, ps_machine_thread(m, 300, 300));
	ck_assert_ptr_eq(fresh, ps_machine_process(m, 300));
	ck_assert_ptr_nonnull(ps_process_find_map(fresh, 0x400000));
	ck_assert_ptr_null(ps_process_find_map(fresh, 0x500000));
	/* the thread made before: the maps it had */
	ck_assert_ptr_eq(ps_machine_thread(m, 300, 301), worker);
	ck_assert_ptr_nonnull(ps_process_find_map(ps_machine_thread_process(m, worker), 0x500000));
	ck_assert_ptr_null(ps_process_find_map(ps_machine_thread_process(m, worker), 0x400000));
	/* a map of that thread goes into its maps, not the leader's */
	mmap.u.mmap = (struct ps_record_mmap){
		.pid = 300, .tid = 301, .start = 0x600000, .len = 0x1000, .filename = "/lib/l.so"
	};
	ck_assert_int_eq(ps_machine_process_event(m, &mmap), 0);
	ck_assert_ptr_nonnull(ps_process_find_map(ps_machine_thread_process(m, worker), 0x600000));
	ck_assert_ptr_null(ps_process_find_map(fresh, 0x600000));
	/* a thread made after: the leader's */
	ck_assert_int_eq(ps_machine_process_event(m, &again), 0);
	later = ps_machine_thread(m, 300, 302);
	ck_assert_ptr_eq(ps_machine_thread_process(m, later), fresh);
	ps_machine_free(m);
}
END_TEST

/* One object per file: a path mapped from two files (a container's and
 * the host's: other device and inode) is two objects, the same file one;
 * each knows the process that mapped it first and that process's mount
 * namespace (PERF_RECORD_NAMESPACES). */
static const struct ps_mapped_object *file_mmap(struct ps_machine *m, uint32_t pid, uint64_t start,
                                                uint32_t maj, uint64_t ino)
{
	struct ps_event ev = { .type = PERF_RECORD_MMAP2, .misc = PERF_RECORD_MISC_USER };
	struct ps_process *p;

	ev.u.mmap = (struct ps_record_mmap){ .pid = pid,
		                             .tid = pid,
		                             .start = start,
		                             .len = 0x1000,
		                             .maj = maj,
		                             .ino = ino,
		                             .prot = 5,
		                             .filename = "/usr/lib/libpython3.12.so.1.0" };
	ck_assert_int_eq(ps_machine_process_event(m, &ev), 0);
	p = ps_machine_process(m, (int32_t)pid);
	ck_assert_ptr_nonnull(p);
	return ps_process_find_map(p, start)->object;
}

START_TEST(test_objects_per_file)
{
	uint64_t namespaces[2 * (MNT_NS_INDEX + 1)] = { 0 };
	struct ps_event ns = { .type = PERF_RECORD_NAMESPACES };
	const struct ps_mapped_object *host, *container, *again;
	struct ps_machine *m;
	uint64_t dev, ino;

	ck_assert_int_eq(ps_machine_new(&m), 0);
	namespaces[2 * MNT_NS_INDEX] = 4;
	namespaces[2 * MNT_NS_INDEX + 1] = 4026532999;
	ns.u.namespaces = (struct ps_record_namespaces){
		.pid = 20,
		.tid = 20,
		.nr_namespaces = MNT_NS_INDEX + 1,
		.nr = MNT_NS_INDEX + 1,
		.dev_ino = namespaces,
	};
	ck_assert_int_eq(ps_machine_process_event(m, &ns), 0);
	ck_assert(ps_process_mount_namespace(ps_machine_process(m, 20), &dev, &ino));
	ck_assert_uint_eq(dev, 4);
	ck_assert_uint_eq(ino, 4026532999);
	ck_assert(!ps_process_mount_namespace(ps_machine_process(m, 10), &dev, &ino));

	host = file_mmap(m, 10, 0x10000, 254, 73);
	container = file_mmap(m, 20, 0x10000, 0, 99);
	again = file_mmap(m, 30, 0x20000, 254, 73);
	ck_assert_ptr_ne(host, container);
	ck_assert_ptr_eq(host, again);
	ck_assert_int_eq(host->mapper_pid, 10);
	ck_assert(!host->has_mnt_ns);
	ck_assert_int_eq(container->mapper_pid, 20);
	ck_assert(container->has_mnt_ns);
	ck_assert_uint_eq(container->mnt_ns_ino, 4026532999);
	ps_machine_free(m);
}
END_TEST

/* A user map of pid's main thread: MMAP2 with these prot bits. */
static void user_mmap(struct ps_machine *m, uint32_t pid, uint64_t start, uint32_t prot,
                      const char *filename)
{
	struct ps_event ev = { .type = PERF_RECORD_MMAP2, .misc = PERF_RECORD_MISC_USER };

	ev.u.mmap = (struct ps_record_mmap){ .pid = pid,
		                             .tid = pid,
		                             .start = start,
		                             .len = 0x1000,
		                             .prot = prot,
		                             .filename = filename };
	ck_assert_int_eq(ps_machine_process_event(m, &ev), 0);
}

static const char *executable(struct ps_machine *m, int32_t pid)
{
	const struct ps_mapped_object *object = ps_process_executable(ps_machine_process(m, pid));

	return object ? object->name : NULL;
}

/* The program a process runs: its first executable file map since its
 * exec, kept by a forked child until it runs one of its own. */
START_TEST(test_executable)
{
	struct ps_event exec = { .type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_COMM_EXEC };
	struct ps_event comm = { .type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_USER };
	struct ps_event child = fork_event(20, 10, 20, 10);
	struct ps_machine *m;

	ck_assert_int_eq(ps_machine_new(&m), 0);
	/* perf's own maps, synthesized before the workload's exec */
	user_mmap(m, 10, 0x10000, PROT_READ | PROT_EXEC, "/usr/bin/perf");
	ck_assert_str_eq(executable(m, 10), "/usr/bin/perf");
	exec.u.comm = (struct ps_record_comm){ .pid = 10, .tid = 10, .comm = "python3" };
	ck_assert_int_eq(ps_machine_process_event(m, &exec), 0);
	ck_assert_ptr_null(executable(m, 10));
	/* not the stack, JIT code, a data map of the program, the vdso */
	user_mmap(m, 10, 0x7ff0000, PROT_READ | PROT_WRITE, "[stack]");
	user_mmap(m, 10, 0x7000, PROT_READ | PROT_EXEC, "//anon");
	user_mmap(m, 10, 0x50000, PROT_READ, "/usr/bin/python3.12");
	user_mmap(m, 10, 0x60000, PROT_READ | PROT_EXEC, "[vdso]");
	ck_assert_ptr_null(executable(m, 10));
	/* the program's code, then its interpreter's and libraries' */
	user_mmap(m, 10, 0x51000, PROT_READ | PROT_EXEC, "/usr/bin/python3.12");
	user_mmap(m, 10, 0x90000, PROT_READ | PROT_EXEC, "/lib/ld-linux-x86-64.so.2");
	user_mmap(m, 10, 0xa0000, PROT_READ | PROT_EXEC, "/lib/libpython3.12.so");
	ck_assert_str_eq(executable(m, 10), "/usr/bin/python3.12");
	/* a new name is no new program */
	comm.u.comm = (struct ps_record_comm){ .pid = 10, .tid = 10, .comm = "worker" };
	ck_assert_int_eq(ps_machine_process_event(m, &comm), 0);
	ck_assert_str_eq(executable(m, 10), "/usr/bin/python3.12");
	/* a forked child runs its parent's, until it execs */
	ck_assert_int_eq(ps_machine_process_event(m, &child), 0);
	ck_assert_str_eq(executable(m, 20), "/usr/bin/python3.12");
	exec.u.comm = (struct ps_record_comm){ .pid = 20, .tid = 20, .comm = "sh" };
	ck_assert_int_eq(ps_machine_process_event(m, &exec), 0);
	user_mmap(m, 20, 0x40000, PROT_READ | PROT_EXEC, "/bin/dash");
	ck_assert_str_eq(executable(m, 20), "/bin/dash");
	ck_assert_str_eq(executable(m, 10), "/usr/bin/python3.12");
	/* a kernel thread: none */
	ck_assert_ptr_null(executable(m, 2));
	ps_machine_free(m);
}
END_TEST

static const struct ps_map *map_of(struct ps_machine *m, int32_t pid, uint64_t addr)
{
	const struct ps_map *map = ps_process_find_map(ps_machine_process(m, pid), addr);

	ck_assert_ptr_nonnull(map);
	return map;
}

/* Maps kept from the program a process ran before its exec (perf keeps
 * them where the new program's do not cover them) are not current: perf
 * record -a sees perf, which links libpython3.11, fork the workload that
 * execs a CPython 3.12, whose interpreter search must not find 3.11. A
 * forked child's inherited maps are current until it execs. */
START_TEST(test_maps_of_the_program_before_exec)
{
	struct ps_event exec = { .type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_COMM_EXEC };
	struct ps_event child = fork_event(20, 10, 20, 10);
	struct ps_process *p;
	struct ps_machine *m;

	ck_assert_int_eq(ps_machine_new(&m), 0);
	user_mmap(m, 10, 0x10000, PROT_READ | PROT_EXEC, "/usr/bin/perf");
	user_mmap(m, 10, 0x20000, PROT_READ | PROT_EXEC, "/lib/libpython3.11.so.1.0");
	ck_assert_int_eq(ps_machine_process_event(m, &child), 0);
	p = ps_machine_process(m, 20);
	ck_assert(ps_process_map_current(p, map_of(m, 20, 0x20000)));
	exec.u.comm = (struct ps_record_comm){ .pid = 20, .tid = 20, .comm = "python3" };
	ck_assert_int_eq(ps_machine_process_event(m, &exec), 0);
	user_mmap(m, 20, 0x30000, PROT_READ | PROT_EXEC, "/opt/lib/libpython3.12.so.1.0");
	ck_assert(!ps_process_map_current(p, map_of(m, 20, 0x20000)));
	ck_assert(ps_process_map_current(p, map_of(m, 20, 0x30000)));
	/* the parent's maps stay its program's */
	ck_assert(ps_process_map_current(ps_machine_process(m, 10), map_of(m, 10, 0x20000)));
	ps_machine_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("machine");
	TCase *tc = tcase_create("fork");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_fork_makes_child);
	tcase_add_test(tc, test_fork_child_is_stale_parent);
	tcase_add_test(tc, test_idle_thread_is_swapper);
	tcase_add_test(tc, test_module_names);
	tcase_add_test(tc, test_unwind_ready);
	tcase_add_test(tc, test_fork_after_its_records);
	tcase_add_test(tc, test_executable);
	tcase_add_test(tc, test_maps_of_the_program_before_exec);
	tcase_add_test(tc, test_objects_per_file);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
