/* Unit tests of src/machine: what the model frees once threads and
 * processes have ended (EXIT records and the grace period after them),
 * and what it keeps as perf does: an exited thread for the samples still
 * to come of it, the leader of a live process, a thread whose life goes
 * on after its EXIT record. Leaks and uses after free are the sanitizers'
 * to catch (make check under ASan). */
#include <check.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "machine/machine.h"

#define MS 1000000ull

struct told {
	unsigned died, gone;
	int32_t gone_pid;
	char gone_comm[32];
	bool gone_had_maps;
};

static void on_died(void *ctx, struct ps_process *process)
{
	struct told *told = ctx;

	(void)process;
	told->died++;
}

static void on_gone(void *ctx, struct ps_process *process, const char *comm)
{
	struct told *told = ctx;

	told->gone++;
	told->gone_pid = ps_process_pid(process);
	strncpy(told->gone_comm, comm ? comm : "(null)", sizeof(told->gone_comm) - 1);
	told->gone_had_maps = ps_process_next_map(process, NULL) != NULL;
}

static const struct ps_machine_hooks hooks = { .died = on_died, .gone = on_gone };

static struct ps_machine *machine_new(struct told *told)
{
	struct ps_machine *m;

	ck_assert_int_eq(ps_machine_new(&m), 0);
	memset(told, 0, sizeof(*told));
	ps_machine_set_hooks(m, &hooks, told);
	return m;
}

static void apply(struct ps_machine *m, struct ps_event ev, uint64_t time)
{
	ev.timestamp = time;
	ck_assert_int_eq(ps_machine_process_event(m, &ev), 0);
}

static struct ps_event fork_event(uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct ps_event ev = { .type = PERF_RECORD_FORK };

	ev.u.fork = (struct ps_record_fork){ .pid = pid, .ppid = ppid, .tid = tid, .ptid = ptid };
	return ev;
}

static struct ps_event exit_event(uint32_t pid, uint32_t tid)
{
	struct ps_event ev = fork_event(pid, pid, tid, tid);

	ev.type = PERF_RECORD_EXIT;
	return ev;
}

static struct ps_event comm_event(uint32_t pid, uint32_t tid, const char *comm, bool exec)
{
	struct ps_event ev = { .type = PERF_RECORD_COMM };

	if (exec)
		ev.misc = PERF_RECORD_MISC_COMM_EXEC;
	ev.u.comm = (struct ps_record_comm){ .pid = pid, .tid = tid, .comm = comm };
	return ev;
}

static struct ps_event mmap_event(uint32_t pid, uint32_t tid, uint64_t start, const char *file)
{
	struct ps_event ev = { .type = PERF_RECORD_MMAP2, .misc = PERF_RECORD_MISC_USER };

	ev.u.mmap = (struct ps_record_mmap){
		.pid = pid, .tid = tid, .start = start, .len = 0x1000, .prot = 5, .filename = file
	};
	return ev;
}

/* Any record that only moves the capture's time on. */
static void tick(struct ps_machine *m, uint64_t time)
{
	struct ps_event ev = { .type = PERF_RECORD_THROTTLE };

	apply(m, ev, time);
}

/* A short process: forked by 1, exec'd, one map, its EXIT at exit_time. */
static void short_process(struct ps_machine *m, uint32_t pid, uint64_t fork_time,
                          uint64_t exit_time)
{
	apply(m, fork_event(pid, 1, pid, 1), fork_time);
	apply(m, comm_event(pid, pid, "true", true), fork_time + 1);
	apply(m, mmap_event(pid, pid, 0x400000, "/usr/bin/true"), fork_time + 2);
	apply(m, exit_event(pid, pid), exit_time);
}

/* The samples perf still finds an exited thread for (the grace period)
 * find it, with its name and maps; after that it is freed, its maps
 * told to the gone hook first. */
START_TEST(test_exited_process_kept_then_freed)
{
	struct told told;
	struct ps_machine *m = machine_new(&told);
	struct ps_thread *t;

	ps_machine_set_exit_grace(m, 100 * MS);
	apply(m, fork_event(1, 0, 1, 0), 0);
	short_process(m, 100, 1 * MS, 2 * MS);
	ck_assert_uint_eq(told.died, 1);
	ck_assert_uint_eq(told.gone, 0);
	tick(m, 50 * MS);
	t = ps_machine_find_thread(m, 100);
	ck_assert_ptr_nonnull(t);
	ck_assert(t->exited);
	ck_assert_ptr_eq(ps_machine_thread(m, 100, 100), t);
	ck_assert_str_eq(t->comm, "true");
	ck_assert_ptr_nonnull(ps_process_find_map(ps_machine_thread_process(m, t), 0x400000));
	tick(m, 102 * MS - 1);
	ck_assert_ptr_nonnull(ps_machine_find_thread(m, 100));
	tick(m, 102 * MS);
	ck_assert_ptr_null(ps_machine_find_thread(m, 100));
	ck_assert_uint_eq(told.gone, 1);
	ck_assert_int_eq(told.gone_pid, 100);
	ck_assert_str_eq(told.gone_comm, "true");
	ck_assert(told.gone_had_maps);
	ck_assert_uint_eq(ps_machine_stats(m)->processes_freed, 1);
	ck_assert_uint_eq(ps_machine_stats(m)->threads_freed, 1);
	ps_machine_free(m);
}
END_TEST

/* N short processes one after another: what the model keeps at once does
 * not grow with N. */
START_TEST(test_kept_does_not_grow)
{
	struct told told;
	struct ps_machine *m = machine_new(&told);
	const struct ps_machine_stats *st = ps_machine_stats(m);

	ps_machine_set_exit_grace(m, 10 * MS);
	apply(m, fork_event(1, 0, 1, 0), 0);
	for (uint32_t i = 0; i < 10000; i++)
		short_process(m, 1000 + i, (1 + i) * MS, (1 + i) * MS + 500000);
	ck_assert_uint_eq(st->processes_made, 10002); /* with the idle task's and 1 */
	ck_assert_uint_ge(st->processes_freed, 9980);
	ck_assert_uint_le(st->processes_peak, 16);
	ck_assert_uint_le(st->threads_peak, 16);
	ck_assert_uint_eq(told.gone, st->processes_freed);
	ps_machine_free(m);
}
END_TEST

/* The grace period runs from the last thread's EXIT; a thread that exits
 * while its process lives on goes after the grace period, the leader
 * stays while the process lives: a thread made later finds the process's
 * maps through it. */
START_TEST(test_threads_of_a_live_process)
{
	struct told told;
	struct ps_machine *m = machine_new(&told);
	struct ps_process *p;

	ps_machine_set_exit_grace(m, 10 * MS);
	apply(m, fork_event(1, 0, 1, 0), 0);
	apply(m, fork_event(200, 1, 200, 1), 1 * MS);
	apply(m, comm_event(200, 200, "server", true), 1 * MS);
	apply(m, mmap_event(200, 200, 0x400000, "/usr/bin/server"), 2 * MS);
	p = ps_machine_process(m, 200);
	apply(m, fork_event(200, 200, 201, 200), 3 * MS);
	apply(m, fork_event(200, 200, 202, 200), 3 * MS);
	/* the leader leaves (pthread_exit), so does a worker */
	apply(m, exit_event(200, 200), 4 * MS);
	apply(m, exit_event(200, 201), 5 * MS);
	ck_assert_uint_eq(told.died, 0);
	tick(m, 100 * MS);
	ck_assert_ptr_null(ps_machine_find_thread(m, 201));
	ck_assert_ptr_nonnull(ps_machine_find_thread(m, 200));
	ck_assert_ptr_eq(ps_machine_process(m, 200), p);
	/* the last worker starts another */
	apply(m, fork_event(200, 200, 203, 202), 101 * MS);
	apply(m, comm_event(200, 203, "worker", false), 101 * MS);
	ck_assert_ptr_eq(ps_machine_thread_process(m, ps_machine_thread(m, 200, 203)), p);
	ck_assert_ptr_nonnull(ps_process_find_map(p, 0x400000));
	/* then both end: the process goes a grace period after the last */
	apply(m, exit_event(200, 202), 102 * MS);
	apply(m, exit_event(200, 203), 105 * MS);
	ck_assert_uint_eq(told.died, 1);
	tick(m, 113 * MS);
	ck_assert_ptr_nonnull(ps_machine_find_thread(m, 203));
	ck_assert_uint_eq(told.gone, 0);
	tick(m, 115 * MS);
	ck_assert_ptr_null(ps_machine_find_thread(m, 200));
	ck_assert_ptr_null(ps_machine_find_thread(m, 202));
	ck_assert_ptr_null(ps_machine_find_thread(m, 203));
	ck_assert_uint_eq(told.gone, 1);
	ck_assert_int_eq(told.gone_pid, 200);
	/* the leader's name, though it was not the last to go */
	ck_assert_str_eq(told.gone_comm, "server");
	ps_machine_free(m);
}
END_TEST

/* A FORK that reuses the tid of an exited thread within the grace period
 * replaces it, as perf does; the old process is freed with its last
 * thread, and the new one has maps of its own. */
START_TEST(test_pid_reused)
{
	struct told told;
	struct ps_machine *m = machine_new(&told);
	struct ps_process *old, *fresh;

	apply(m, fork_event(1, 0, 1, 0), 0);
	short_process(m, 300, 1 * MS, 2 * MS);
	old = ps_machine_process(m, 300);
	ck_assert_ptr_nonnull(ps_process_find_map(old, 0x400000));
	apply(m, fork_event(300, 1, 300, 1), 3 * MS);
	ck_assert_uint_eq(told.gone, 1);
	ck_assert_int_eq(told.gone_pid, 300);
	ck_assert_str_eq(told.gone_comm, "true");
	fresh = ps_machine_process(m, 300);
	ck_assert(!ps_machine_find_thread(m, 300)->exited);
	apply(m, mmap_event(300, 300, 0x500000, "/usr/bin/other"), 4 * MS);
	ck_assert_ptr_null(ps_process_find_map(fresh, 0x400000));
	ck_assert_ptr_nonnull(ps_process_find_map(fresh, 0x500000));
	ck_assert_uint_eq(ps_machine_stats(m)->processes_freed, 1);
	ps_machine_free(m);
}
END_TEST

/* An exec from a thread other than the leader: the kernel ends the
 * leader (its EXIT record) and the thread goes on under the leader's tid
 * (a COMM record). A record of a thread's life after its EXIT keeps it,
 * and its process, past the grace period. */
START_TEST(test_life_after_exit)
{
	struct told told;
	struct ps_machine *m = machine_new(&told);
	struct ps_thread *t;

	ps_machine_set_exit_grace(m, 10 * MS);
	apply(m, fork_event(1, 0, 1, 0), 0);
	short_process(m, 400, 1 * MS, 2 * MS);
	ck_assert_uint_eq(told.died, 1);
	apply(m, comm_event(400, 400, "newprog", true), 3 * MS);
	apply(m, mmap_event(400, 400, 0x600000, "/usr/bin/newprog"), 4 * MS);
	tick(m, 1000 * MS);
	t = ps_machine_find_thread(m, 400);
	ck_assert_ptr_nonnull(t);
	ck_assert(!t->exited);
	ck_assert_str_eq(t->comm, "newprog");
	ck_assert_ptr_nonnull(ps_process_find_map(ps_machine_thread_process(m, t), 0x600000));
	ck_assert_uint_eq(told.gone, 0);
	/* and it ends for good */
	apply(m, exit_event(400, 400), 1001 * MS);
	tick(m, 1011 * MS);
	ck_assert_ptr_null(ps_machine_find_thread(m, 400));
	ck_assert_uint_eq(told.gone, 1);
	ps_machine_free(m);
}
END_TEST

/* Without timestamps the capture's time is unknown: nothing is freed; and
 * a grace period of UINT64_MAX keeps every thread, as perf does. */
START_TEST(test_kept_without_time)
{
	struct told told;
	struct ps_machine *m = machine_new(&told);

	apply(m, fork_event(1, 0, 1, 0), UINT64_MAX);
	short_process(m, 500, UINT64_MAX - 2, UINT64_MAX);
	ck_assert_uint_eq(told.died, 1);
	ck_assert_ptr_nonnull(ps_machine_find_thread(m, 500));
	ps_machine_free(m);

	m = machine_new(&told);
	ps_machine_set_exit_grace(m, UINT64_MAX);
	apply(m, fork_event(1, 0, 1, 0), 0);
	short_process(m, 500, 1 * MS, 2 * MS);
	tick(m, UINT64_MAX - 1);
	ck_assert_ptr_nonnull(ps_machine_find_thread(m, 500));
	ck_assert_uint_eq(told.gone, 0);
	ps_machine_free(m);
}
END_TEST

/* A leader made again (its FORK read after records of its process): the
 * address space the earlier threads hold is freed with the last of them,
 * and the consumers' state with it. */
static unsigned states_freed;

static void free_state(void *state)
{
	states_freed++;
	free(state);
}

START_TEST(test_replaced_address_space)
{
	struct told told;
	struct ps_machine *m = machine_new(&told);
	struct ps_process *early;

	ps_machine_set_exit_grace(m, 10 * MS);
	states_freed = 0;
	apply(m, fork_event(1, 0, 1, 0), 0);
	apply(m, mmap_event(600, 601, 0x700000, "/usr/bin/early"), 1 * MS);
	early = ps_machine_thread_process(m, ps_machine_thread(m, 600, 601));
	ps_process_set_state(early, PS_PROCESS_SLOT_UNWIND, malloc(16), free_state);
	apply(m, fork_event(600, 1, 600, 1), 2 * MS);
	ck_assert_ptr_ne(ps_machine_process(m, 600), early);
	ck_assert_uint_eq(states_freed, 0);
	apply(m, exit_event(600, 601), 3 * MS);
	tick(m, 20 * MS);
	ck_assert_uint_eq(states_freed, 1);
	ck_assert_uint_eq(told.gone, 1);
	ck_assert_str_eq(told.gone_comm, ":601");
	ck_assert_ptr_nonnull(ps_machine_find_thread(m, 600));
	ps_machine_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("machine lifetime");
	TCase *tc = tcase_create("exit");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_exited_process_kept_then_freed);
	tcase_add_test(tc, test_kept_does_not_grow);
	tcase_add_test(tc, test_threads_of_a_live_process);
	tcase_add_test(tc, test_pid_reused);
	tcase_add_test(tc, test_life_after_exit);
	tcase_add_test(tc, test_kept_without_time);
	tcase_add_test(tc, test_replaced_address_space);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
