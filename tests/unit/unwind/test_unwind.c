/* Unit tests of the unwind module: this test program snapshots its own
 * registers and stack a few calls deep, then unwinds the snapshot offline
 * against its own ELF files and compares with the return addresses it
 * recorded on the way down. Also the libunwind quirks at cut stacks, signal
 * frames, module bookkeeping and every error path. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapshot.h"

#define MAX PS_UNWIND_DEFAULT_MAX_FRAMES

struct env {
	struct test_maps maps; /* first: the callbacks' ctx */
	struct snapshot snap;
	struct ps_unwinder *unwinder;
	uint64_t pcs[MAX];
	enum ps_unwind_stop stop;
	/* what test_frame_rule answers: rule for PCs in [rule_low, rule_high) */
	uint64_t rule_low, rule_high;
	struct ps_unwind_rule rule;
	unsigned rule_calls;
	uint64_t rule_last_pc;
};

static bool test_frame_rule(void *ctx, uint64_t pc, struct ps_unwind_rule *out)
{
	struct env *e = ctx;

	e->rule_calls++;
	e->rule_last_pc = pc;
	if (pc < e->rule_low || pc >= e->rule_high)
		return false;
	*out = e->rule;
	return true;
}

static void env_open_opts(struct env *e, enum snap_mode mode, const struct ps_unwind_opts *opts)
{
	static const struct ps_unwind_callbacks callbacks = { .find_map = test_find_map };

	memset(e, 0, sizeof(*e));
	ck_assert(snapshot_take(&e->snap, mode));
	ck_assert(test_maps_load(&e->maps));
	ck_assert_int_eq(ps_unwinder_new(&callbacks, &e->maps, opts, &e->unwinder), 0);
}

/* with a frame_rule callback */
static void env_open_rule(struct env *e, bool quirks, enum snap_mode mode)
{
	static const struct ps_unwind_callbacks callbacks = { .find_map = test_find_map,
		                                              .frame_rule = test_frame_rule };
	struct ps_unwind_opts opts = { .sz = sizeof(opts),
		                       .style = quirks ? PS_UNWIND_PERF_LIBUNWIND
		                                       : PS_UNWIND_PERF_LIBDW };

	memset(e, 0, sizeof(*e));
	ck_assert(snapshot_take(&e->snap, mode));
	ck_assert_ptr_nonnull(e->snap.tramp);
	ck_assert(test_maps_load(&e->maps));
	ck_assert_int_eq(ps_unwinder_new(&callbacks, e, &opts, &e->unwinder), 0);
}

static void env_open(struct env *e, bool quirks, enum snap_mode mode)
{
	struct ps_unwind_opts opts = { .sz = sizeof(opts),
		                       .style = quirks ? PS_UNWIND_PERF_LIBUNWIND
		                                       : PS_UNWIND_PERF_LIBDW };

	env_open_opts(e, mode, &opts);
}

static void env_close(struct env *e)
{
	ps_unwinder_free(e->unwinder);
	test_maps_free(&e->maps);
	snapshot_free(&e->snap);
}

static int env_unwind(struct env *e, const struct ps_unwind_sample *sample)
{
	memset(e->pcs, 0, sizeof(e->pcs));
	return ps_unwinder_unwind(e->unwinder, sample, e->pcs, MAX, &e->stop);
}

static int env_unwind_snapshot(struct env *e)
{
	struct ps_unwind_sample sample = snapshot_sample(&e->snap);

	return env_unwind(e, &sample);
}

/* frame 0 is the IP, frame k the return address of level k-1, minus one */
static void assert_known_frames(const struct env *e, int n, int levels)
{
	ck_assert_int_ge(n, levels + 1);
	ck_assert_uint_eq(e->pcs[0], e->snap.ip);
	for (int k = 1; k <= levels; k++)
		ck_assert_msg(e->pcs[k] == e->snap.ra[k - 1] - 1, "frame %d: %#llx, expected %#llx",
		              k, (unsigned long long)e->pcs[k],
		              (unsigned long long)e->snap.ra[k - 1] - 1);
}

static struct test_map *exe_text(struct env *e)
{
	struct test_map *m = test_maps_find(&e->maps, e->snap.ip);

	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(m->path);
	return m;
}

/* ---- whole stacks -------------------------------------------------------- */

START_TEST(test_full_unwind)
{
	struct env e;

	env_open(&e, _i, SNAP_PLAIN);
	int n = env_unwind_snapshot(&e);
	assert_known_frames(&e, n, SNAP_LEVELS);
	/* through the test runner, main and libc to _start, whose CFI ends
	 * the stack */
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_END);
	ck_assert_int_lt(n, MAX);
	for (int k = 0; k < n; k++)
		ck_assert_ptr_nonnull(test_maps_find(&e.maps, e.pcs[k]));
	const struct ps_unwind_stats *stats = ps_unwinder_stats(e.unwinder);
	ck_assert_uint_eq(stats->dwfl_builds, 1);
	ck_assert_uint_ge(stats->modules, 2);
	ck_assert_uint_eq(stats->frames, (uint64_t)n);
	env_close(&e);
}
END_TEST

START_TEST(test_reuse_across_samples)
{
	struct env e;
	uint64_t first[MAX];

	env_open(&e, false, SNAP_PLAIN);
	int n = env_unwind_snapshot(&e);
	ck_assert_int_gt(n, SNAP_LEVELS);
	memcpy(first, e.pcs, sizeof(first));
	uint64_t modules = ps_unwinder_stats(e.unwinder)->modules;
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(env_unwind_snapshot(&e), n);
		ck_assert_mem_eq(first, e.pcs, (size_t)n * sizeof(uint64_t));
	}
	const struct ps_unwind_stats *stats = ps_unwinder_stats(e.unwinder);
	ck_assert_uint_eq(stats->dwfl_builds, 1);
	ck_assert_uint_eq(stats->modules, modules);
	ck_assert_uint_eq(stats->samples, 6);
	env_close(&e);
}
END_TEST

START_TEST(test_max_frames)
{
	struct env e;
	struct ps_unwind_opts opts = { .sz = sizeof(opts),
		                       .style = PS_UNWIND_PERF_LIBDW,
		                       .max_frames = 3 };

	env_open_opts(&e, SNAP_PLAIN, &opts);
	ck_assert_int_eq(env_unwind_snapshot(&e), 3);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_MAX_FRAMES);
	assert_known_frames(&e, 3, 2);

	/* the caller's buffer bounds it too */
	struct ps_unwind_sample sample = snapshot_sample(&e.snap);
	ck_assert_int_eq(ps_unwinder_unwind(e.unwinder, &sample, e.pcs, 2, &e.stop), 2);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_MAX_FRAMES);
	env_close(&e);
}
END_TEST

/* ---- stacks cut by the stack-copy limit ------------------------------- */

/* Copy up to and including the slot of ra[2], the caller of level2: its
 * return address is the last word of the copy. */
static struct ps_unwind_sample cut_after_ra2(struct env *e, long extra)
{
	struct ps_unwind_sample sample = snapshot_sample(&e->snap);
	long off = snapshot_ra_offset(&e->snap, 2);

	ck_assert_int_ge(off, 0);
	sample.stack_size = (uint64_t)(off + 8 + extra);
	return sample;
}

START_TEST(test_cut_stack_libdw)
{
	struct env e;

	env_open(&e, false, SNAP_PLAIN);
	struct ps_unwind_sample sample = cut_after_ra2(&e, 0);
	int n = env_unwind(&e, &sample);
	ck_assert_int_eq(n, 4);
	assert_known_frames(&e, n, 3);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_STACK_CUT);
	env_close(&e);
}
END_TEST

START_TEST(test_cut_stack_quirks)
{
	struct env e;

	/* the last word is not used: ra[2] reads as 0 from the [stack]
	 * mapping, which gives the bogus frame in place of the real one */
	env_open(&e, true, SNAP_PLAIN);
	struct ps_unwind_sample sample = cut_after_ra2(&e, 0);
	int n = env_unwind(&e, &sample);
	ck_assert_int_eq(n, 4);
	assert_known_frames(&e, n, 2);
	ck_assert_uint_eq(e.pcs[3], UINT64_MAX);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_STACK_CUT);

	/* one more word: ra[2] is used, ra[3] is beyond the copy */
	sample = cut_after_ra2(&e, 8);
	n = env_unwind(&e, &sample);
	ck_assert_int_eq(n, 5);
	assert_known_frames(&e, n, 3);
	ck_assert_uint_eq(e.pcs[4], UINT64_MAX);
	env_close(&e);
}
END_TEST

START_TEST(test_cut_stack_quirks_unmapped)
{
	struct env e;

	/* without a [stack] mapping the read fails: no bogus frame */
	env_open(&e, true, SNAP_PLAIN);
	e.maps.hide = e.snap.sp;
	struct ps_unwind_sample sample = cut_after_ra2(&e, 0);
	int n = env_unwind(&e, &sample);
	ck_assert_int_eq(n, 3);
	assert_known_frames(&e, n, 2);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_STACK_CUT);
	env_close(&e);
}
END_TEST

START_TEST(test_zero_return_address)
{
	struct env e;

	env_open(&e, _i, SNAP_PLAIN);
	long off = snapshot_ra_offset(&e.snap, 1);
	ck_assert_int_ge(off, 0);
	memset(e.snap.stack + off, 0, 8);
	int n = env_unwind_snapshot(&e);
	assert_known_frames(&e, n, 1);
	if (_i) {
		/* libunwind steps to IP 0 and perf keeps it, decremented */
		ck_assert_int_eq(n, 3);
		ck_assert_uint_eq(e.pcs[2], UINT64_MAX);
	} else {
		ck_assert_int_eq(n, 2);
	}
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_END);
	env_close(&e);
}
END_TEST

START_TEST(test_stack_of_one_word)
{
	struct env e;

	env_open(&e, false, SNAP_PLAIN);
	struct ps_unwind_sample sample = snapshot_sample(&e.snap);
	sample.stack_size = 8;
	ck_assert_int_eq(env_unwind(&e, &sample), 1);
	ck_assert_uint_eq(e.pcs[0], e.snap.ip);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_STACK_CUT);
	env_close(&e);
}
END_TEST

/* ---- signal frames ------------------------------------------------------- */

START_TEST(test_signal_frame)
{
	struct env e;

	env_open(&e, _i, SNAP_SIGNAL);
	int n = env_unwind_snapshot(&e);
	/* capture <- level1 <- on_signal <- __restore_rt <- (interrupted
	 * libc code) ... <- level2 <- level3 */
	assert_known_frames(&e, n, 2);
	ck_assert_int_gt(n, 6);
	ck_assert_ptr_nonnull(test_maps_find(&e.maps, e.snap.signal_ra));
	/* libdw does not decrement the trampoline's PC, libunwind does */
	ck_assert_uint_eq(e.pcs[3], e.snap.signal_ra - (_i ? 1 : 0));
	bool seen2 = false, seen3 = false;
	for (int k = 4; k < n; k++) {
		seen2 |= e.pcs[k] == e.snap.ra[2] - 1;
		seen3 |= e.pcs[k] == e.snap.ra[3] - 1;
	}
	ck_assert(seen2 && seen3);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_END);
	if (_i)
		ck_assert_uint_gt(ps_unwinder_stats(e.unwinder)->file_reads, 0);
	env_close(&e);
}
END_TEST

START_TEST(test_frame_without_cfi)
{
	struct env e;

	env_open(&e, _i, SNAP_NO_CFI);
	int n = env_unwind_snapshot(&e);
	/* capture <- level1 <- nocfi_call <- level2 <- level3 */
	assert_known_frames(&e, n, 2);
	ck_assert_int_ge(n, 4);
	ck_assert_uint_eq(e.pcs[3], e.snap.nocfi_ra - 1);
	if (_i) {
		/* libunwind's frame-chain guess (it reads the code at the
		 * PC), which leaves the SP at the old CFA + 16: 32 bytes
		 * short, which matters if level2 finds its CFA from rsp */
		ck_assert_uint_gt(ps_unwinder_stats(e.unwinder)->file_reads, 0);
	} else {
		/* libdwfl's frame-pointer step takes the SP from rbp */
		ck_assert_int_ge(n, 6);
		ck_assert_uint_eq(e.pcs[4], e.snap.ra[2] - 1);
		ck_assert_uint_eq(e.pcs[5], e.snap.ra[3] - 1);
		ck_assert_int_eq(e.stop, PS_UNWIND_STOP_END);
		ck_assert_uint_eq(ps_unwinder_stats(e.unwinder)->file_reads, 0);
	}
	env_close(&e);
}
END_TEST

/* The program's frame without CFI, its module given a separate debug file:
 * libdwfl gets that file (and decompresses its debug sections) only when
 * it or the program has a .debug_frame to look in; the frames are the same
 * whether it gets it or not. */
START_TEST(test_debug_file_without_debug_frame)
{
	char dir[] = "/tmp/ps-unwind-test-XXXXXX", plain[64], framed[64], zeros[64], stripped[64];
	char command[1024];
	uint64_t pcs[MAX];
	struct env e;
	int n = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(plain, sizeof(plain), "%s/plain.debug", dir);
	snprintf(framed, sizeof(framed), "%s/framed.debug", dir);
	snprintf(zeros, sizeof(zeros), "%s/zeros", dir);
	snprintf(stripped, sizeof(stripped), "%s/stripped", dir);
	/* this program without its DWARF, for the module (libdwfl looks for a
	 * separate file only then); as separate files, a copy of this program
	 * (DWARF, no .debug_frame) and one with a .debug_frame that describes
	 * nothing (a zero terminator) */
	snprintf(command, sizeof(command),
	         "cp /proc/%d/exe %s && objcopy --strip-debug %s %s && "
	         "head -c 8 /dev/zero > %s && objcopy --add-section .debug_frame=%s %s %s",
	         (int)getpid(), plain, plain, stripped, zeros, zeros, plain, framed);
	ck_assert_msg(system(command) == 0, "%s failed", command);

	/* one call site for the three snapshots: the same frames above */
	for (int i = 0; i < 3; i++) {
		env_open(&e, false, SNAP_NO_CFI);
		struct test_map *m = test_maps_find(&e.maps, e.snap.ip);

		ck_assert_ptr_nonnull(m);
		m->path = stripped;
		m->debug_path = i == 0 ? NULL : i == 1 ? plain : framed;
		int got = env_unwind_snapshot(&e);

		if (i == 0) {
			n = got;
			ck_assert_int_ge(n, 6);
			memcpy(pcs, e.pcs, sizeof(pcs));
		} else {
			ck_assert_int_eq(got, n);
			ck_assert_mem_eq(e.pcs, pcs, (size_t)n * sizeof(pcs[0]));
		}
		ck_assert_uint_eq(ps_unwinder_stats(e.unwinder)->debug_files, i == 2 ? 1 : 0);
		env_close(&e);
	}
	unlink(plain);
	unlink(framed);
	unlink(zeros);
	unlink(stripped);
	rmdir(dir);
}
END_TEST

/* A caller whose CFA is rbx + 16 (ld.so's _dl_runtime_resolve aligns the
 * stack so), under a frame whose CFI does not mention rbx: libunwind
 * (Debian's perf) takes rbx for unchanged there and unwinds on through
 * level2 and level3; libdw takes it for undefined (elfutils' x86-64 ABI
 * rules name rax where rbx is meant), and perf built with libdw stops at
 * that caller. Seen in whole-machine captures at _dl_fixup's first
 * instructions. */
START_TEST(test_rbx_cfa)
{
	struct env e;
	int found = -1;

	env_open(&e, _i, SNAP_RBX_CFA);
	int n = env_unwind_snapshot(&e);

	assert_known_frames(&e, n, 2);
	for (int k = 0; k < n; k++)
		if (e.pcs[k] == e.snap.ra[2] - 1)
			found = k;
	if (_i) {
		/* ip, level1, the hop, rbx_call, level2, level3 */
		ck_assert_int_eq(found, 5);
		ck_assert_uint_eq(e.pcs[6], e.snap.ra[3] - 1);
	} else {
		ck_assert_int_eq(found, -1);
		ck_assert_int_le(n, 5);
	}
	env_close(&e);
}
END_TEST

/* An older mapping of the executable, whole, at base, below the one in
 * use (perf keeps mappings across exec): libunwind reads the file's tables
 * through it when it looks the executable up from there. Returns base. */
static uint64_t map_exe_below(struct env *e, uint64_t below)
{
	struct test_map *text = exe_text(e);
	uint64_t base = text->start - text->pgoff - below;
	const char *path = text->path;
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	struct test_map *maps = realloc(e->maps.maps, (e->maps.nr + 1) * sizeof(*maps));
	ck_assert_ptr_nonnull(maps);
	e->maps.maps = maps;
	e->maps.maps[e->maps.nr] = (struct test_map){
		.start = base,
		.end = base + (((uint64_t)st.st_size + 4095) & ~(uint64_t)4095),
		.name = strdup(path),
		.path = path,
	};
	ck_assert_ptr_nonnull(e->maps.maps[e->maps.nr].name);
	e->maps.nr++;
	return base;
}

START_TEST(test_libunwind_base)
{
	struct env e;

	env_open(&e, _i, SNAP_PLAIN);
	int n = env_unwind_snapshot(&e);
	ck_assert_int_gt(n, SNAP_LEVELS);
	ck_assert_uint_eq(ps_unwinder_stats(e.unwinder)->file_reads, 0);

	/* perf also knows an older mapping of the executable, lower down:
	 * libunwind looks the PCs up relative to that one and finds no
	 * unwind info, so it guesses (reading the code at the PC) */
	uint64_t base = map_exe_below(&e, 0x40000000);
	exe_text(&e)->libunwind_base = base;
	/* but libunwind's cache still holds what it found for these PCs
	 * before: the same stack again */
	uint64_t before[MAX];
	memcpy(before, e.pcs, sizeof(before));
	ck_assert_int_eq(env_unwind_snapshot(&e), n);
	ck_assert_mem_eq(e.pcs, before, (size_t)n * sizeof(before[0]));
	/* perf flushes it at exec */
	ps_unwinder_reset(e.unwinder);
	int m = env_unwind_snapshot(&e);
	ck_assert_int_ge(m, 1);
	ck_assert_uint_eq(e.pcs[0], e.snap.ip);
	if (_i)
		ck_assert_uint_gt(ps_unwinder_stats(e.unwinder)->file_reads, 0);
	else
		ck_assert_int_eq(m, n);
	env_close(&e);
}
END_TEST

/* libunwind's cache kept by one unwinder from the lookups another logged
 * (the session and an unwinding worker): entered while they agree,
 * refused once the cache would have answered otherwise. */
START_TEST(test_replay)
{
	static const struct ps_unwind_callbacks callbacks = { .find_map = test_find_map };
	struct ps_unwind_opts opts = { .sz = sizeof(opts), .style = PS_UNWIND_PERF_LIBUNWIND };
	struct ps_unwinder *session;
	const struct ps_unwind_step *steps;
	struct env e;
	size_t nsteps;

	ck_assert_int_eq(ps_unwinder_new(&callbacks, NULL, &opts, &session), 0);
	opts.fresh_lookups = true;
	env_open_opts(&e, SNAP_PLAIN, &opts);
	int n = env_unwind_snapshot(&e);
	assert_known_frames(&e, n, SNAP_LEVELS);
	steps = ps_unwinder_steps(e.unwinder, &nsteps);
	ck_assert_ptr_nonnull(steps);
	/* a lookup per frame, the own rows of each */
	ck_assert_uint_ge(nsteps, (size_t)n);
	ck_assert_uint_eq(steps[0].key, e.snap.ip);
	for (size_t k = 0; k < nsteps; k++)
		ck_assert_int_eq(steps[k].shift, 0);
	ck_assert(ps_unwinder_replay(session, steps, nsteps));
	ck_assert(ps_unwinder_replay(session, steps, nsteps));

	/* the worker looks up afresh: no info at the lower base, where the
	 * session's libunwind would reuse what it found */
	uint64_t base = map_exe_below(&e, 0x40000000);
	exe_text(&e)->libunwind_base = base;
	env_unwind_snapshot(&e);
	steps = ps_unwinder_steps(e.unwinder, &nsteps);
	ck_assert_uint_ge(nsteps, 1);
	ck_assert_int_eq(steps[0].shift, PS_UNWIND_STEP_ENOINFO);
	ck_assert(!ps_unwinder_replay(session, steps, nsteps));
	/* after an exec's flush it takes them */
	ps_unwinder_reset(session);
	ck_assert(ps_unwinder_replay(session, steps, nsteps));
	/* a base where nothing is mapped: reading the table fails, and
	 * libunwind takes that for an error */
	exe_text(&e)->libunwind_base = base - 0x40000000;
	ck_assert_int_eq(env_unwind_snapshot(&e), 1);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_BAD_FRAME);
	steps = ps_unwinder_steps(e.unwinder, &nsteps);
	ck_assert_uint_eq(nsteps, 1);
	ck_assert_int_eq(steps[0].shift, PS_UNWIND_STEP_FAIL);
	ps_unwinder_free(session);
	env_close(&e);
}
END_TEST

/* A copy of the file at path whose .eh_frame_hdr section is renamed (as if
 * linked without it, like plain `gcc -static`); the caller frees the name. */
static char *copy_without_eh_frame_hdr(const char *path)
{
	FILE *in = fopen(path, "rb");
	ck_assert_ptr_nonnull(in);
	ck_assert_int_eq(fseek(in, 0, SEEK_END), 0);
	long size = ftell(in);
	ck_assert_int_gt(size, 0);
	rewind(in);
	char *data = malloc((size_t)size);
	ck_assert_ptr_nonnull(data);
	ck_assert_uint_eq(fread(data, 1, (size_t)size, in), (size_t)size);
	fclose(in);

	static const char name[] = ".eh_frame_hdr"; /* with its NUL */
	int renamed = 0;
	for (long k = 0; k + (long)sizeof(name) <= size; k++) {
		if (memcmp(data + k, name, sizeof(name)) == 0) {
			data[k + (long)sizeof(name) - 2] = 'X';
			renamed++;
		}
	}
	ck_assert_int_ge(renamed, 1);

	char *copy = strdup("/tmp/ps-test-unwind-XXXXXX");
	ck_assert_ptr_nonnull(copy);
	int fd = mkstemp(copy);
	ck_assert_int_ge(fd, 0);
	FILE *out = fdopen(fd, "wb");
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_eq(fwrite(data, 1, (size_t)size, out), (size_t)size);
	ck_assert_int_eq(fclose(out), 0);
	free(data);
	return copy;
}

START_TEST(test_no_eh_frame_hdr)
{
	struct env e;

	env_open(&e, _i, SNAP_PLAIN);
	int n = env_unwind_snapshot(&e);
	assert_known_frames(&e, n, SNAP_LEVELS);
	uint64_t full[MAX];
	memcpy(full, e.pcs, sizeof(full));

	/* the executable as perf's libunwind glue sees a static binary
	 * without .eh_frame_hdr: find_proc_info() fails hard, so libunwind
	 * shows the frame and stops; libdw does not need the header */
	struct test_map *text = exe_text(&e);
	const char *orig = text->path;
	char *copy = copy_without_eh_frame_hdr(orig);
	for (size_t k = 0; k < e.maps.nr; k++)
		if (e.maps.maps[k].path && strcmp(e.maps.maps[k].path, orig) == 0)
			e.maps.maps[k].path = copy;
	/* a process of its own (libunwind's cache holds the other file's
	 * states) */
	ps_unwinder_reset(e.unwinder);
	int m = env_unwind_snapshot(&e);
	if (_i) {
		ck_assert_int_eq(m, 1);
		ck_assert_uint_eq(e.pcs[0], e.snap.ip);
		ck_assert_int_eq(e.stop, PS_UNWIND_STOP_BAD_FRAME);
		/* the answer is cached: same again */
		ck_assert_int_eq(env_unwind_snapshot(&e), 1);
	} else {
		ck_assert_int_eq(m, n);
		for (int k = 0; k < n; k++)
			ck_assert_uint_eq(e.pcs[k], full[k]);
	}
	env_close(&e);
	unlink(copy);
	free(copy);
}
END_TEST

/* ---- frame_rule: JIT code without CFI ------------------------------------ */

/* The rules CPython's templates have at their return site (offset 6). */
static const struct ps_unwind_rule rule_312 = { .cfa_base = PS_UNWIND_CFA_SP,
	                                        .cfa_offset = 16,
	                                        .ra_offset = -8 };
static const struct ps_unwind_rule rule_314 = { .cfa_base = PS_UNWIND_CFA_SP,
	                                        .cfa_offset = 16,
	                                        .ra_offset = -8,
	                                        .rbp_saved = true,
	                                        .rbp_offset = -16 };
/* 3.14's, through the frame pointer it sets up */
static const struct ps_unwind_rule rule_314_rbp = { .cfa_base = PS_UNWIND_CFA_RBP,
	                                            .cfa_offset = 16,
	                                            .ra_offset = -8,
	                                            .rbp_saved = true,
	                                            .rbp_offset = -16 };

/* capture <- level1 <- trampoline <- level2 <- level3 <- ... */
static void assert_through_trampoline(const struct env *e, int n, int from)
{
	ck_assert_int_ge(n, from + 4);
	ck_assert_uint_eq(e->pcs[from], e->snap.tramp_return - 1);
	ck_assert_uint_eq(e->pcs[from + 1], e->snap.tramp_ra - 1);
	ck_assert_uint_eq(e->pcs[from + 2], e->snap.ra[2] - 1);
	ck_assert_uint_eq(e->pcs[from + 3], e->snap.ra[3] - 1);
	ck_assert_int_eq(e->stop, PS_UNWIND_STOP_END);
	ck_assert_int_lt(n, MAX);
}

START_TEST(test_trampoline_without_rule)
{
	struct env e;

	/* no callback: the walk ends at the trampoline as before */
	env_open(&e, _i, SNAP_TRAMPOLINE);
	ck_assert_ptr_nonnull(e.snap.tramp);
	int n = env_unwind_snapshot(&e);
	assert_known_frames(&e, n, 1);
	if (_i) {
		/* libunwind shows it and stops */
		ck_assert_int_eq(n, 3);
		ck_assert_uint_eq(e.pcs[2], e.snap.tramp_return - 1);
	} else {
		/* perf's libdw glue drops a caller in a mapping without ELF */
		ck_assert_int_eq(n, 2);
	}
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_NO_MODULE);
	env_close(&e);
}
END_TEST

START_TEST(test_trampoline_rule_declined)
{
	struct env e;

	/* a callback that has no rule for the PC changes nothing */
	env_open_rule(&e, _i, SNAP_TRAMPOLINE);
	int n = env_unwind_snapshot(&e);
	ck_assert_int_eq(n, _i ? 3 : 2);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_NO_MODULE);
	ck_assert_uint_eq(e.rule_calls, 1);
	/* asked with the return address, not decremented */
	ck_assert_uint_eq(e.rule_last_pc, e.snap.tramp_return);
	env_close(&e);
}
END_TEST

START_TEST(test_trampoline_rule_312)
{
	struct env e;

	env_open_rule(&e, _i, SNAP_TRAMPOLINE);
	e.rule_low = e.snap.tramp_return;
	e.rule_high = e.snap.tramp_return + 1;
	e.rule = rule_312;
	int n = env_unwind_snapshot(&e);
	assert_known_frames(&e, n, 1);
	assert_through_trampoline(&e, n, 2);
	ck_assert_uint_eq(e.rule_calls, 1);

	/* the same sample again, and the unwinder is reused */
	ck_assert_int_eq(env_unwind_snapshot(&e), n);
	ck_assert_uint_eq(ps_unwinder_stats(e.unwinder)->dwfl_builds, 1);
	env_close(&e);
}
END_TEST

/* With ps_unwind_sample.frame_regs, each frame's registers: the sample's
 * at the leaf; at a caller its return address in rip, a stack pointer
 * above its callee's, the callee-saved registers; through a trampoline's
 * rule too. The PCs are those of a walk without. */
START_TEST(test_frame_registers)
{
	static const unsigned char perf_of_dwarf[PS_UNWIND_NR_REGS] = {
		0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8,
	};
	const uint32_t caller = 1u << 3 | 1u << 6 | 1u << 7 | 0xf000u | 1u << 16;
	struct ps_unwind_frame_regs regs[MAX];
	uint64_t plain[MAX];
	struct env e;

	env_open_rule(&e, _i, SNAP_TRAMPOLINE);
	e.rule_low = e.snap.tramp_return;
	e.rule_high = e.snap.tramp_return + 1;
	e.rule = rule_312;
	int n = env_unwind_snapshot(&e);
	memcpy(plain, e.pcs, sizeof(plain));
	struct ps_unwind_sample sample = snapshot_sample(&e.snap);
	sample.frame_regs = regs;
	memset(regs, 0, sizeof(regs));
	ck_assert_int_eq(env_unwind(&e, &sample), n);
	ck_assert_mem_eq(plain, e.pcs, (size_t)n * sizeof(plain[0]));
	assert_through_trampoline(&e, n, 2);
	ck_assert_uint_eq(regs[0].present, (1u << PS_UNWIND_NR_REGS) - 1);
	for (unsigned r = 0; r < PS_UNWIND_NR_REGS; r++) {
		unsigned id = perf_of_dwarf[r];
		int packed = __builtin_popcountll(SNAP_REGS_MASK & ((1ull << id) - 1));

		ck_assert_uint_eq(regs[0].regs[r], e.snap.regs[packed]);
	}
	/* the test's own frames (libc's start code marks some undefined) */
	for (int k = 1; k <= 5; k++)
		ck_assert_msg((regs[k].present & caller) == caller, "frame %d: registers %#x", k,
		              regs[k].present);
	for (int k = 1; k < n; k++)
		ck_assert_uint_gt(regs[k].regs[7], regs[k - 1].regs[7]);
	ck_assert_uint_eq(regs[1].regs[16], e.snap.ra[0]);
	ck_assert_uint_eq(regs[2].regs[16], e.snap.tramp_return);
	ck_assert_uint_eq(regs[3].regs[16], e.snap.tramp_ra);
	ck_assert_uint_eq(regs[4].regs[16], e.snap.ra[2]);
	env_close(&e);
}
END_TEST

START_TEST(test_trampoline_rule_314)
{
	struct env e;

	/* the rule restores rbp from the stack, by rsp or by rbp */
	for (int by_rbp = 0; by_rbp < 2; by_rbp++) {
		env_open_rule(&e, _i, SNAP_TRAMPOLINE_FP);
		e.rule_low = e.snap.tramp_return;
		e.rule_high = e.snap.tramp_return + 1;
		e.rule = by_rbp ? rule_314_rbp : rule_314;
		int n = env_unwind_snapshot(&e);
		assert_known_frames(&e, n, 1);
		assert_through_trampoline(&e, n, 2);
		env_close(&e);
	}
}
END_TEST

START_TEST(test_trampoline_rule_first_frame)
{
	struct env e;
	uint64_t regs[SNAP_NR_REGS];

	/* a sample taken at the return site: frame 0 is the trampoline */
	env_open_rule(&e, _i, _i ? SNAP_TRAMPOLINE_FP : SNAP_TRAMPOLINE);
	e.rule_low = e.snap.tramp_return;
	e.rule_high = e.snap.tramp_return + 1;
	e.rule = _i ? rule_314 : rule_312;
	struct ps_unwind_sample sample = snapshot_sample_at_return(&e.snap, regs);
	ck_assert_ptr_ne(sample.stack, e.snap.stack);
	int n = env_unwind(&e, &sample);
	/* frame 0 is the IP itself */
	ck_assert_int_ge(n, 1);
	ck_assert_uint_eq(e.pcs[0], e.snap.tramp_return);
	ck_assert_uint_eq(e.rule_last_pc, e.snap.tramp_return);
	e.pcs[0]--;
	assert_through_trampoline(&e, n, 0);
	env_close(&e);
}
END_TEST

START_TEST(test_trampoline_rule_failures)
{
	struct env e;

	env_open_rule(&e, _i, SNAP_TRAMPOLINE);
	e.rule_low = e.snap.tramp_return;
	e.rule_high = e.snap.tramp_return + 1;

	/* a rule that does not move the stack up: shown, then a bad frame */
	e.rule = rule_312;
	e.rule.cfa_offset = 0;
	ck_assert_int_eq(env_unwind_snapshot(&e), 3);
	ck_assert_uint_eq(e.pcs[2], e.snap.tramp_return - 1);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_BAD_FRAME);
	e.rule.cfa_base = (enum ps_unwind_cfa_base)7;
	e.rule.cfa_offset = 16;
	ck_assert_int_eq(env_unwind_snapshot(&e), 3);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_BAD_FRAME);

	/* the return address beyond the stack copy */
	e.rule = rule_312;
	long off = snapshot_ra_offset(&e.snap, 1);
	ck_assert_int_ge(off, 0);
	struct ps_unwind_sample sample = snapshot_sample(&e.snap);
	sample.stack_size = (uint64_t)off + 16;
	e.maps.hide = e.snap.sp;
	ck_assert_int_eq(env_unwind(&e, &sample), 3);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_STACK_CUT);
	e.maps.hide = 0;

	/* a return address of 0 ends the stack */
	memset(e.snap.stack + off + 16, 0, 8);
	ck_assert_int_eq(env_unwind_snapshot(&e), 3);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_END);
	env_close(&e);
}
END_TEST

START_TEST(test_trampoline_rule_max_frames)
{
	struct env e;

	env_open_rule(&e, _i, SNAP_TRAMPOLINE);
	e.rule_low = e.snap.tramp_return;
	e.rule_high = e.snap.tramp_return + 1;
	e.rule = rule_312;
	struct ps_unwind_sample sample = snapshot_sample(&e.snap);
	/* the trampoline is the last frame that fits, then the one after */
	ck_assert_int_eq(ps_unwinder_unwind(e.unwinder, &sample, e.pcs, 3, &e.stop), 3);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_MAX_FRAMES);
	ck_assert_uint_eq(e.pcs[2], e.snap.tramp_return - 1);
	ck_assert_int_eq(ps_unwinder_unwind(e.unwinder, &sample, e.pcs, 4, &e.stop), 4);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_MAX_FRAMES);
	ck_assert_uint_eq(e.pcs[3], e.snap.tramp_ra - 1);
	env_close(&e);
}
END_TEST

/* ---- modules --------------------------------------------------------------- */

START_TEST(test_missing_file_then_found)
{
	struct env e;
	/* perf's libdw glue shows no user frame without a module for the
	 * IP; libunwind shows the IP */
	int expected = _i ? 1 : 0;

	env_open(&e, _i, SNAP_PLAIN);
	struct test_map *text = exe_text(&e);
	const char *path = text->path;
	text->path = "/nonexistent/pystitch-unwind-test";
	ck_assert_int_eq(env_unwind_snapshot(&e), expected);
	ck_assert_uint_eq(e.pcs[0], _i ? e.snap.ip : 0);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_NO_MODULE);
	ck_assert_uint_eq(ps_unwinder_stats(e.unwinder)->module_failures, 1);
	/* the failure is remembered */
	ck_assert_int_eq(env_unwind_snapshot(&e), expected);
	ck_assert_uint_eq(ps_unwinder_stats(e.unwinder)->module_failures, 1);

	/* the mapping now names the real file: the module disagrees with
	 * find_map, the Dwfl is rebuilt */
	text->path = path;
	int n = env_unwind_snapshot(&e);
	assert_known_frames(&e, n, SNAP_LEVELS);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_END);
	ck_assert_uint_eq(ps_unwinder_stats(e.unwinder)->dwfl_builds, 2);
	env_close(&e);
}
END_TEST

START_TEST(test_map_changed_and_reset)
{
	struct env e;

	env_open(&e, false, SNAP_PLAIN);
	int n = env_unwind_snapshot(&e);
	ck_assert_int_gt(n, SNAP_LEVELS);
	const struct ps_unwind_stats *stats = ps_unwinder_stats(e.unwinder);
	struct test_map *text = exe_text(&e);
	struct ps_unwind_map map = {
		.start = text->start,
		.end = text->end,
		.pgoff = text->pgoff,
		.path = text->path,
		.name = text->name,
		.exec = true,
	};

	/* the module's own mapping again (an mprotect): nothing to do */
	ps_unwinder_map_changed(e.unwinder, &map);
	ck_assert_int_eq(env_unwind_snapshot(&e), n);
	ck_assert_uint_eq(stats->dwfl_builds, 1);

	/* another file over it: rebuilt before the next walk */
	map.path = "/some/other/file";
	ps_unwinder_map_changed(e.unwinder, &map);
	ck_assert_int_eq(env_unwind_snapshot(&e), n);
	ck_assert_uint_eq(stats->dwfl_builds, 2);

	/* a range no module covers */
	map.start = 0x1000;
	map.end = 0x2000;
	ps_unwinder_map_changed(e.unwinder, &map);
	ps_unwinder_map_changed(e.unwinder, NULL);
	ck_assert_int_eq(env_unwind_snapshot(&e), n);
	ck_assert_uint_eq(stats->dwfl_builds, 2);

	ps_unwinder_reset(e.unwinder);
	ck_assert_int_eq(env_unwind_snapshot(&e), n);
	ck_assert_uint_eq(stats->dwfl_builds, 3);
	env_close(&e);
}
END_TEST

/* With maps_generation, an answer for an address of a mapping met before
 * is given again without find_map, until the generation changes. */
START_TEST(test_maps_generation_keeps_answers)
{
	static const struct ps_unwind_callbacks callbacks = {
		.find_map = test_find_map,
		.maps_generation = test_maps_generation,
	};
	struct ps_unwind_opts opts = { .sz = sizeof(opts),
		                       .style = _i ? PS_UNWIND_PERF_LIBUNWIND
		                                   : PS_UNWIND_PERF_LIBDW };
	uint64_t before[MAX], lookups;
	struct env e;

	memset(&e, 0, sizeof(e));
	ck_assert(snapshot_take(&e.snap, SNAP_PLAIN));
	ck_assert(test_maps_load(&e.maps));
	ck_assert_int_eq(ps_unwinder_new(&callbacks, &e.maps, &opts, &e.unwinder), 0);
	int n = env_unwind_snapshot(&e);
	assert_known_frames(&e, n, SNAP_LEVELS);
	memcpy(before, e.pcs, sizeof(before));

	/* the same stack again: its frames' mappings were all met */
	lookups = e.maps.lookups;
	ck_assert_int_eq(env_unwind_snapshot(&e), n);
	ck_assert_mem_eq(e.pcs, before, (size_t)n * sizeof(before[0]));
	ck_assert_uint_lt(e.maps.lookups - lookups, (uint64_t)SNAP_LEVELS);

	/* the executable's mapping goes away: asked again, no module */
	e.maps.hide = e.snap.ip;
	e.maps.generation++;
	lookups = e.maps.lookups;
	ck_assert_int_lt(env_unwind_snapshot(&e), SNAP_LEVELS);
	ck_assert_uint_gt(e.maps.lookups, lookups);

	/* and comes back */
	e.maps.hide = 0;
	e.maps.generation++;
	ck_assert_int_eq(env_unwind_snapshot(&e), n);
	ck_assert_mem_eq(e.pcs, before, (size_t)n * sizeof(before[0]));
	env_close(&e);
}
END_TEST

/* ---- bad samples ------------------------------------------------------------ */

START_TEST(test_empty_stack)
{
	struct env e;

	env_open(&e, false, SNAP_PLAIN);
	struct ps_unwind_sample sample = snapshot_sample(&e.snap);
	sample.stack_size = 0;
	ck_assert_int_eq(env_unwind(&e, &sample), 0);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_NO_STACK);
	sample = snapshot_sample(&e.snap);
	sample.regs_abi = 0;
	ck_assert_int_eq(env_unwind(&e, &sample), 0);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_NO_STACK);
	ck_assert_uint_eq(ps_unwinder_stats(e.unwinder)->samples, 0);
	env_close(&e);
}
END_TEST

START_TEST(test_unmapped_pc)
{
	struct env e;
	struct ps_unwind_sample sample;
	uint64_t regs[SNAP_NR_REGS];

	env_open(&e, _i, SNAP_PLAIN);
	memcpy(regs, e.snap.regs, sizeof(regs));
	sample = snapshot_sample(&e.snap);
	sample.regs = regs;

	/* libunwind shows the IP and stops; perf's libdw glue cannot attach
	 * without a module and shows nothing */
	regs[SNAP_REG_IP] = 0x10;
	ck_assert_int_eq(env_unwind(&e, &sample), _i ? 1 : 0);
	ck_assert_uint_eq(e.pcs[0], _i ? 0x10 : 0);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_NO_MODULE);

	/* anonymous memory: mapped, but no ELF file */
	regs[SNAP_REG_IP] = (uint64_t)(uintptr_t)e.snap.stack + 16;
	ck_assert_int_eq(env_unwind(&e, &sample), _i ? 1 : 0);
	ck_assert_uint_eq(e.pcs[0], _i ? regs[SNAP_REG_IP] : 0);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_NO_MODULE);

	/* perf drops frames whose PC is 0 */
	regs[SNAP_REG_IP] = 0;
	ck_assert_int_eq(env_unwind(&e, &sample), 0);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_NO_MODULE);
	env_close(&e);
}
END_TEST

/* level1's return address replaced: the caller is in no mapping, or in
 * anonymous memory */
START_TEST(test_caller_without_module)
{
	struct env e;

	env_open(&e, _i, SNAP_PLAIN);
	long off = snapshot_ra_offset(&e.snap, 1);
	ck_assert_int_ge(off, 0);

	uint64_t unmapped = 0x10000;
	ck_assert_ptr_null(test_maps_find(&e.maps, unmapped));
	memcpy(e.snap.stack + off, &unmapped, 8);
	int n = env_unwind_snapshot(&e);
	assert_known_frames(&e, n, 1);
	ck_assert_uint_eq(e.pcs[2], unmapped - 1);
	if (_i) {
		/* libunwind shows it and stops */
		ck_assert_int_eq(n, 3);
		ck_assert_int_eq(e.stop, PS_UNWIND_STOP_NO_MODULE);
	}
	/* perf's libdw glue shows it and libdwfl guesses on with frame
	 * pointers: whatever that finds */

	uint64_t anon = (uint64_t)(uintptr_t)e.snap.stack + 64;
	memcpy(e.snap.stack + off, &anon, 8);
	n = env_unwind_snapshot(&e);
	assert_known_frames(&e, n, 1);
	/* libunwind shows it; perf's libdw glue fails to report a module
	 * for it and stops without it */
	ck_assert_int_eq(n, _i ? 3 : 2);
	if (_i)
		ck_assert_uint_eq(e.pcs[2], anon - 1);
	ck_assert_int_eq(e.stop, PS_UNWIND_STOP_NO_MODULE);
	env_close(&e);
}
END_TEST

START_TEST(test_sp_outside)
{
	struct env e;
	uint64_t regs[SNAP_NR_REGS];

	env_open(&e, _i, SNAP_PLAIN);
	memcpy(regs, e.snap.regs, sizeof(regs));
	struct ps_unwind_sample sample = snapshot_sample(&e.snap);
	sample.regs = regs;
	/* the copy claims to start at an unmapped address: frames found
	 * through rsp come from the copy, those through rbp miss it */
	regs[SNAP_REG_SP] = 0x10000;
	int n = env_unwind(&e, &sample);
	ck_assert_int_ge(n, 1);
	ck_assert_uint_eq(e.pcs[0], e.snap.ip);
	/* and one at the top of the address space */
	regs[SNAP_REG_SP] = UINT64_MAX - e.snap.stack_size;
	n = env_unwind(&e, &sample);
	ck_assert_int_ge(n, 1);
	ck_assert_uint_eq(e.pcs[0], e.snap.ip);
	env_close(&e);
}
END_TEST

START_TEST(test_bad_arguments)
{
	struct env e;
	uint64_t regs[SNAP_NR_REGS];
	struct ps_unwind_sample sample;
	struct ps_unwinder *u = NULL;
	static const struct ps_unwind_callbacks no_find_map = { .find_map = NULL };
	struct ps_unwind_opts small = { .sz = 4 };

	ck_assert_int_eq(ps_unwinder_new(&no_find_map, NULL, NULL, &u), -EINVAL);
	ck_assert_ptr_null(u);
	ck_assert_int_eq(ps_unwinder_new(NULL, NULL, NULL, &u), -EINVAL);
	ck_assert_int_eq(ps_unwinder_new(&no_find_map, NULL, NULL, NULL), -EINVAL);
	env_open(&e, false, SNAP_PLAIN);
	ck_assert_int_eq(ps_unwinder_new(&(struct ps_unwind_callbacks){ .find_map = test_find_map },
	                                 NULL, &small, &u),
	                 -EINVAL);

	sample = snapshot_sample(&e.snap);
	ck_assert_int_eq(ps_unwinder_unwind(NULL, &sample, e.pcs, MAX, NULL), -EINVAL);
	ck_assert_int_eq(ps_unwinder_unwind(e.unwinder, NULL, e.pcs, MAX, NULL), -EINVAL);
	ck_assert_int_eq(ps_unwinder_unwind(e.unwinder, &sample, NULL, MAX, NULL), -EINVAL);
	ck_assert_int_eq(ps_unwinder_unwind(e.unwinder, &sample, e.pcs, 0, NULL), -EINVAL);
	ck_assert_str_ne(ps_unwinder_errmsg(e.unwinder), "");

	sample.regs_abi = 1;
	ck_assert_int_eq(env_unwind(&e, &sample), -EOPNOTSUPP);
	sample.regs_abi = 3;
	ck_assert_int_eq(env_unwind(&e, &sample), -EINVAL);

	sample = snapshot_sample(&e.snap);
	sample.nr_regs = SNAP_NR_REGS - 1;
	ck_assert_int_eq(env_unwind(&e, &sample), -EINVAL);
	sample = snapshot_sample(&e.snap);
	sample.regs = NULL;
	ck_assert_int_eq(env_unwind(&e, &sample), -EINVAL);
	sample = snapshot_sample(&e.snap);
	sample.stack = NULL;
	ck_assert_int_eq(env_unwind(&e, &sample), -EINVAL);

	/* no IP in the mask: the values shift, the IP is missing */
	sample = snapshot_sample(&e.snap);
	sample.regs_mask &= ~(1ULL << SNAP_REG_IP);
	ck_assert_int_eq(env_unwind(&e, &sample), -EINVAL);
	ck_assert_ptr_nonnull(strstr(ps_unwinder_errmsg(e.unwinder), "IP"));

	/* a copy that wraps around the address space */
	memcpy(regs, e.snap.regs, sizeof(regs));
	sample = snapshot_sample(&e.snap);
	sample.regs = regs;
	regs[SNAP_REG_SP] = UINT64_MAX - 4;
	ck_assert_int_eq(env_unwind(&e, &sample), -EINVAL);

	/* and it still works afterwards */
	ck_assert_int_gt(env_unwind_snapshot(&e), SNAP_LEVELS);
	ck_assert_str_eq(ps_unwinder_errmsg(e.unwinder), "");
	ps_unwinder_free(NULL);
	env_close(&e);
}
END_TEST

START_TEST(test_garbage)
{
	struct env e;
	uint64_t regs[SNAP_NR_REGS];
	uint64_t state = 0x9e3779b97f4a7c15ULL;

	env_open(&e, _i, SNAP_PLAIN);
	struct test_map *text = exe_text(&e);
	struct ps_unwind_sample sample = snapshot_sample(&e.snap);
	sample.regs = regs;
	if (sample.stack_size > 16384)
		sample.stack_size = 16384;
	for (int round = 0; round < 300; round++) {
		for (int i = 0; i < SNAP_NR_REGS; i++)
			regs[i] = round % 3 ? snapshot_random(&state) : e.snap.regs[i];
		/* the PC somewhere in the text, the SP as recorded */
		regs[SNAP_REG_IP] =
		        text->start + snapshot_random(&state) % (text->end - text->start);
		regs[SNAP_REG_SP] = e.snap.sp;
		if (round % 2)
			for (uint64_t off = 0; off + 8 <= sample.stack_size; off += 8) {
				uint64_t word = snapshot_random(&state);
				/* some words that look like return addresses */
				if (word % 4 == 0)
					word = text->start + word % (text->end - text->start);
				memcpy(e.snap.stack + off, &word, 8);
			}
		int n = env_unwind(&e, &sample);
		ck_assert_int_ge(n, 0);
		ck_assert_int_le(n, MAX);
	}
	env_close(&e);
}
END_TEST

START_TEST(test_stop_names)
{
	ck_assert_str_eq(ps_unwind_stop_name(PS_UNWIND_STOP_END), "end");
	ck_assert_str_eq(ps_unwind_stop_name(PS_UNWIND_STOP_STACK_CUT), "stack-cut");
	ck_assert_str_eq(ps_unwind_stop_name(PS_UNWIND_STOP_NO_STACK), "no-stack");
	ck_assert_str_eq(ps_unwind_stop_name((enum ps_unwind_stop)99), "?");
}
END_TEST

static Suite *suite_unwind(void)
{
	Suite *s = suite_create("unwind");
	TCase *tc = tcase_create("stacks");

	/* loop tests: _i is 0 for libdw behaviour, 1 for the libunwind quirks */
	tcase_add_loop_test(tc, test_full_unwind, 0, 2);
	tcase_add_test(tc, test_reuse_across_samples);
	tcase_add_test(tc, test_max_frames);
	tcase_add_test(tc, test_cut_stack_libdw);
	tcase_add_test(tc, test_cut_stack_quirks);
	tcase_add_test(tc, test_cut_stack_quirks_unmapped);
	tcase_add_loop_test(tc, test_zero_return_address, 0, 2);
	tcase_add_test(tc, test_stack_of_one_word);
	tcase_add_loop_test(tc, test_signal_frame, 0, 2);
	tcase_add_loop_test(tc, test_frame_without_cfi, 0, 2);
	tcase_add_test(tc, test_debug_file_without_debug_frame);
	tcase_add_loop_test(tc, test_rbx_cfa, 0, 2);
	tcase_add_loop_test(tc, test_libunwind_base, 0, 2);
	tcase_add_test(tc, test_replay);
	tcase_add_loop_test(tc, test_no_eh_frame_hdr, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("frame_rule");
	tcase_add_loop_test(tc, test_trampoline_without_rule, 0, 2);
	tcase_add_loop_test(tc, test_trampoline_rule_declined, 0, 2);
	tcase_add_loop_test(tc, test_trampoline_rule_312, 0, 2);
	tcase_add_loop_test(tc, test_trampoline_rule_314, 0, 2);
	tcase_add_loop_test(tc, test_trampoline_rule_first_frame, 0, 2);
	tcase_add_loop_test(tc, test_trampoline_rule_failures, 0, 2);
	tcase_add_loop_test(tc, test_trampoline_rule_max_frames, 0, 2);
	tcase_add_loop_test(tc, test_frame_registers, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("modules");
	tcase_add_loop_test(tc, test_missing_file_then_found, 0, 2);
	tcase_add_test(tc, test_map_changed_and_reset);
	tcase_add_loop_test(tc, test_maps_generation_keeps_answers, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, test_empty_stack);
	tcase_add_loop_test(tc, test_unmapped_pc, 0, 2);
	tcase_add_loop_test(tc, test_caller_without_module, 0, 2);
	tcase_add_loop_test(tc, test_sp_outside, 0, 2);
	tcase_add_test(tc, test_bad_arguments);
	tcase_add_loop_test(tc, test_garbage, 0, 2);
	tcase_add_test(tc, test_stop_names);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *runner = srunner_create(suite_unwind());
	int failed;

	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
