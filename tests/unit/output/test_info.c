/* Unit tests of `pystitch info` (src/output/info*.c) on synthetic captures
 * built with the reader's builder, for what this machine cannot record:
 * hybrid topology, PMU capabilities (none, and two PMUs with and without
 * caps), CPU PMU capabilities, NUMA nodes and memory blocks beyond one,
 * BPF programs named through BTF, event groups that do not fit, and the
 * features perf 6.1 refuses although they are sound (then it reads no
 * feature after them). The expected text follows perf's util/header.c
 * print_*() functions. `test_info --write DIR` writes every capture to
 * DIR/NAME.data instead, for tests/e2e/info_synthetic.sh to compare with
 * `perf report --header-only` itself. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "info_captures.h"
#include "capture.h"
#include "pystitch/output.h"
#include "pystitch/pystitch.h"

#define CAPTURED_ON 1700000000 /* Tue Nov 14 22:13:20 2023 UTC */

/* ---- reading them back --------------------------------------------------- */

static char warnings[4096];

static void keep_warnings(void *ctx, enum ps_log_level level, const char *msg)
{
	(void)ctx;
	if (level <= PS_LOG_WARN && strlen(warnings) + strlen(msg) + 2 < sizeof(warnings)) {
		strcat(warnings, msg);
		strcat(warnings, "\n");
	}
}

/* What `pystitch info` prints for the capture: every record read first,
 * as for a pipe. */
static char *info_of(const char *name, bool show_info)
{
	const struct named_capture *c = NULL;
	struct ps_strbuf out = PS_STRBUF_INIT;
	struct ps_reader_opts opts = { .sz = sizeof(opts), .log = keep_warnings };
	struct ps_reader *r = NULL;
	const struct ps_event *ev;
	struct bld_buf image;
	char *path;
	int ret;

	for (size_t i = 0; i < nr_captures; i++)
		if (strcmp(captures[i].name, name) == 0)
			c = &captures[i];
	ck_assert_ptr_nonnull(c);
	setenv("TZ", "UTC", 1);
	tzset();
	build_capture(c, &image);
	path = bld_write_temp(&image);
	warnings[0] = 0;
	ck_assert_int_eq(ps_reader_open(path, &opts, &r), 0);
	while ((ret = ps_reader_next(r, &ev)) > 0)
		;
	ck_assert_int_eq(ret, 0);
	ck_assert_int_eq(ps_info_write(r,
	                               &(struct ps_info_opts){ .sz = sizeof(struct ps_info_opts),
	                                                       .captured_on = CAPTURED_ON,
	                                                       .show_info = show_info },
	                               capture_write, &out),
	                 0);
	ps_reader_close(r);
	unlink(path);
	free(path);
	bld_buf_free(&image);
	return out.buf;
}

static void expect(const char *name, bool show_info, const char *want)
{
	char *got = info_of(name, show_info);
	bool same = strcmp(got, want) == 0;

	/* the whole texts are too long for Check's message */
	if (!same)
		fprintf(stderr, "%s%s: got\n%s\nwant\n%s\n", name, show_info ? " -I" : "", got,
		        want);
	free(got);
	ck_assert_msg(same, "%s%s: not the expected text (both on stderr)", name,
	              show_info ? " -I" : "");
}

#define FRAME(data_offset, data_size)                                                              \
	"# ========\n"                                                                             \
	"# captured on    : Tue Nov 14 22:13:20 2023\n"                                            \
	"# header version : 1\n"                                                                   \
	"# data offset    : " #data_offset "\n"                                                    \
	"# data size      : 8\n"                                                                   \
	"# feat offset    : " #data_size "\n"
#define IDENTITY                                                                                   \
	"# hostname : synthetic\n"                                                                 \
	"# os release : 6.1.0-synthetic\n"                                                         \
	"# perf version : 6.1.187\n"                                                               \
	"# arch : x86_64\n"                                                                        \
	"# nrcpus online : 4\n"                                                                    \
	"# nrcpus avail : 4\n"                                                                     \
	"# cpudesc : Synthetic CPU @ 2.00GHz\n"                                                    \
	"# cpuid : GenuineIntel,6,151,2\n"                                                         \
	"# total memory : 16318428 kB\n"                                                           \
	"# cmdline : /usr/bin/perf record -e it\\'s \n"
#define EVENT(name, ids, config, flags)                                                            \
	"# event : name = " name ", , id = { " ids " }, type = 1, size = 128, " config             \
	"{ sample_period, sample_freq } = 4000, sample_type = IP|TID|TIME|ID|PERIOD, "             \
	"read_format = ID, " flags "inherit = 1, freq = 1, sample_id_all = 1\n"
#define EVENTS2                                                                                    \
	EVENT("cpu-clock", "11, 12", "", "disabled = 1, ")                                         \
	EVENT("task-clock", "13, 14", "config = 0x1, ", "")
#define EVENTS3 EVENTS2 EVENT("page-faults", "15, 16", "config = 0x2, ", "")
#define EVENTS4 EVENTS3 EVENT("context-switches", "17, 18", "config = 0x3, ", "")
#define CPU_TOPOLOGY                                                                               \
	"# sibling sockets : 0-3\n"                                                                \
	"# sibling dies    : 0-3\n"                                                                \
	"# sibling threads : 0-1\n"                                                                \
	"# sibling threads : 2-3\n"                                                                \
	"# CPU 0: Core ID 0, Die ID 0, Socket ID 0\n"                                              \
	"# CPU 1: Core ID 0, Die ID 0, Socket ID 0\n"                                              \
	"# CPU 2: Core ID 1, Die ID 0, Socket ID 0\n"                                              \
	"# CPU 3: Core ID 1, Die ID 0, Socket ID 0\n"
#define NUMA                                                                                       \
	"# node0 meminfo  : total = 8000000 kB, free = 4000000 kB\n"                               \
	"# node0 cpu list : 0-1\n"                                                                 \
	"# node1 meminfo  : total = 8000000 kB, free = 100 kB\n"                                   \
	"# node1 cpu list : 2-3\n"                                                                 \
	"# node2 meminfo  : total = 0 kB, free = 0 kB\n"                                           \
	"# node2 cpu list : -1\n"
#define PMU_MAPPINGS "# pmu mappings: cpu_core = 4, cpu_atom = 8, software = 1\n"
#define CACHE                                                                                      \
	"# CPU cache info:\n"                                                                      \
	"#  L1 Data                 48K [0-1]\n"                                                   \
	"#  L1 Instruction          32K [0-1]\n"                                                   \
	"#  L2 Unified            2048K [0-3]\n"
#define SAMPLE_TIME                                                                                \
	"# time of first sample : 1170.389056\n"                                                   \
	"# time of last sample : 1176.184250\n"                                                    \
	"# sample duration :   5795.195 ms\n"
#define MEMORY_NODES                                                                               \
	"#    0 [24G]: 0-23,32-199\n"                                                              \
	"#    1 [640M]: 200-203,210\n"
#define MEM_TOPOLOGY                                                                               \
	"# memory nodes (nr 3, block size 0x8000000):\n" MEMORY_NODES                              \
	"#    2 [16G]: 0,2,4,6,8,10,12,14,16,18,20,22,24,26,28,30,32,34,36,38,40,42,44,46,48,"     \
	"50,52,54,56,58,60,62,64,66,68\n"
#define BPF_PROG1(id, name)                                                                        \
	"# bpf_prog_info " #id ": bpf_prog_59f4a931744dcdc6" name " addr 0xffffffffc0000658 size " \
	"16\n"
/* with BTF names (file) or without (pipe, where BTF comes later) */
#define BPF_PROGS(sub0, sub1, p33, p35, p36)                                                       \
	BPF_PROG1(30, "_ps_plain")                                                                 \
	"# bpf_prog_info 31:\n"                                                                    \
	"# \tsub_prog 0: bpf_prog_59f4a931744dcdc6_F addr 0xffffffffc0000658 size 16\n"            \
	"# \tsub_prog 1: bpf_prog_3765c04ba09fff28_F addr 0xffffffffc0000698 size 19\n"            \
	"# bpf_prog_info 32:\n"                                                                    \
	"# \tsub_prog 0: bpf_prog_59f4a931744dcdc6_" sub0 " addr 0xffffffffc0000658 size 16\n"     \
	"# \tsub_prog 1: bpf_prog_3765c04ba09fff28_" sub1                                          \
	" addr 0xffffffffc0000698 size 19\n" BPF_PROG1(33, p33) BPF_PROG1(34, "_ps_bad_btf")       \
	        BPF_PROG1(35, p35) BPF_PROG1(36, p36)
#define BPF_FILE BPF_PROGS("ps_main", "ps_leaf", "_ps_leaf", "_ps_main", "_")
#define BPF_PIPE BPF_PROGS("F", "F", "_ps_leaf_btf", "_ps_swapped_btf", "_ps_void_btf")
#define BTFS "# btf info of id 5\n# btf info of id 6\n# btf info of id 7\n"
#define COMPRESSED "# compressed : Zstd, level = 1, ratio = 4\n"
#define CPU_PMU_CAPS "# cpu pmu capabilities: branches=32, pmu_name=alderlake_hybrid\n"
#define CLOCK_DATA                                                                                 \
	"# clockid: monotonic (1)\n"                                                               \
	"# reference time: 2023-11-14 22:13:20.123456 = 1700000000.123456 (TOD) = "                \
	"1234.567890123 (monotonic)\n"
#define HYBRID                                                                                     \
	"# hybrid cpu system:\n"                                                                   \
	"# cpu_core cpu list : 0-1\n"                                                              \
	"# cpu_atom cpu list : 2-3\n"
#define PMU_CAPS                                                                                   \
	"# cpu_core pmu capabilities: branches=32, max_precise=3\n"                                \
	"# cpu_atom pmu capabilities: not available\n"
#define HINT(name) "# " name " info available, use -I to display\n"
#define END "# ========\n#\n"

#define MACHINE_FULL(bpf)                                                                          \
	IDENTITY EVENTS2 CPU_TOPOLOGY NUMA PMU_MAPPINGS                                            \
	        "# group: {cpu-clock,task-clock}\n" CACHE SAMPLE_TIME MEM_TOPOLOGY                 \
	        "# clockid frequency: 1000 MHz\n" bpf COMPRESSED CPU_PMU_CAPS CLOCK_DATA HYBRID    \
	                PMU_CAPS
#define MACHINE_MISSING                                                                            \
	"# missing features: TRACING_DATA BUILD_ID BRANCH_STACK AUXTRACE STAT DIR_FORMAT \n" END

/* The features of a hybrid machine with three NUMA nodes and BPF
 * programs: with -I, and without it (the topologies become hints). */
START_TEST(test_machine)
{
	expect("machine", true, FRAME(424, 432) MACHINE_FULL(BPF_FILE BTFS) MACHINE_MISSING);
	expect("machine", false,
	       FRAME(424, 432) IDENTITY EVENTS2 HINT("CPU_TOPOLOGY") HINT("NUMA_TOPOLOGY")
	               PMU_MAPPINGS
	       "# group: {cpu-clock,task-clock}\n" HINT("CACHE") SAMPLE_TIME HINT(
	               "MEM_TOPOLOGY") "# clockid frequency: 1000 MHz\n" BPF_FILE BTFS COMPRESSED
	               CPU_PMU_CAPS CLOCK_DATA HINT("HYBRID_TOPOLOGY") PMU_CAPS MACHINE_MISSING);
	ck_assert_str_eq(warnings, "");
}
END_TEST

/* The other byte order: perf reads no BPF program or BTF of it. */
START_TEST(test_machine_be)
{
	expect("machine-be", true, FRAME(424, 432) MACHINE_FULL("") MACHINE_MISSING);
}
END_TEST

/* A pipe: the features after the frame, as they arrive, and the BPF
 * programs printed before their BTF arrives. */
START_TEST(test_machine_pipe)
{
	expect("machine-pipe", true,
	       "# ========\n"
	       "# captured on    : Tue Nov 14 22:13:20 2023\n"
	       "# header version : 1\n"
	       "# data offset    : 0\n"
	       "# data size      : 0\n"
	       "# feat offset    : 0\n" END MACHINE_FULL(BPF_PIPE BTFS));
}
END_TEST

/* Empty lists, and perf 3.x's CPU topology: no PMU with caps prints
 * nothing, no CPU caps "not available". */
START_TEST(test_bare)
{
	expect("bare", true,
	       FRAME(264, 272) IDENTITY EVENT(
	               "cpu-clock", "11, 12", "",
	               "disabled = 1, ") "# sibling sockets : 0-3\n"
	                                 "# sibling threads : 0-1\n"
	                                 "# sibling threads : 2-3\n"
	                                 "# Core ID and Socket ID information is not available\n"
	                                 "# CPU cache info:\n"
	                                 "# memory nodes (nr 0, block size 0x8000000):\n"
	                                 "# cpu pmu capabilities: not available\n"
	                                 "# hybrid cpu system:\n"
	                                 "# missing features: TRACING_DATA BUILD_ID NUMA_TOPOLOGY "
	                                 "BRANCH_STACK PMU_MAPPINGS "
	                                 "GROUP_DESC AUXTRACE STAT SAMPLE_TIME CLOCKID DIR_FORMAT "
	                                 "BPF_PROG_INFO BPF_BTF "
	                                 "COMPRESSED CLOCK_DATA \n" END);
}
END_TEST

/* perf 4.x's CPU topology (ids, no dies) and a named group. */
START_TEST(test_nodies)
{
	expect("nodies", true,
	       FRAME(744, 752) IDENTITY EVENTS4 "# sibling sockets : 0-3\n"
	                                        "# sibling threads : 0-1\n"
	                                        "# sibling threads : 2-3\n"
	                                        "# CPU 0: Core ID 0, Socket ID 0\n"
	                                        "# CPU 1: Core ID 0, Socket ID 0\n"
	                                        "# CPU 2: Core ID 1, Socket ID 0\n"
	                                        "# CPU 3: Core ID 1, Socket ID 0\n"
	                                        "# group: {cpu-clock,task-clock}\n"
	                                        "# group: mygroup{page-faults,context-switches}\n"
	                                        "# missing features: TRACING_DATA BUILD_ID "
	                                        "NUMA_TOPOLOGY BRANCH_STACK PMU_MAPPINGS AUXTRACE "
	                                        "STAT CACHE SAMPLE_TIME MEM_TOPOLOGY CLOCKID "
	                                        "DIR_FORMAT BPF_PROG_INFO BPF_BTF COMPRESSED "
	                                        "CPU_PMU_CAPS CLOCK_DATA HYBRID_TOPOLOGY "
	                                        "PMU_CAPS \n" END);
}
END_TEST

/* The features perf reads no more after one it refuses, as it has them:
 * nothing read. */
#define UNREAD_AFTER_MEM                                                                           \
	"# clockid frequency: 0 MHz\n"                                                             \
	"# compressed : Unknown, level = 0, ratio = 0\n"                                           \
	"# cpu pmu capabilities: not available\n"                                                  \
	"# reference time disabled\n"                                                              \
	"# hybrid cpu system:\n"
#define UNREAD_AFTER_TOPOLOGY "# pmu mappings: not available\n" UNREAD_AFTER_GROUP
#define UNREAD_AFTER_GROUP                                                                         \
	"# time of first sample : 0.000000\n"                                                      \
	"# time of last sample : 0.000000\n"                                                       \
	"# sample duration :      0.000 ms\n"                                                      \
	"# memory nodes (nr 0, block size 0x0):\n" UNREAD_AFTER_MEM
#define REFUSED_MISSING(dir)                                                                       \
	"# missing features: TRACING_DATA BUILD_ID BRANCH_STACK GROUP_DESC AUXTRACE STAT "         \
	"CACHE " dir "\n" END
#define MEMORY_NODES2 "# memory nodes (nr 2, block size 0x8000000):\n" MEMORY_NODES

START_TEST(test_refused)
{
	/* socket id 5 of 4 CPUs: the ids go, and every feature after */
	expect("refused-cpu", true,
	       FRAME(424, 432) IDENTITY EVENTS2
	       "# sibling sockets : 0-3\n"
	       "# sibling threads : 0-1\n"
	       "# sibling threads : 2-3\n"
	       "# Core ID and Socket ID information is not "
	       "available\n" UNREAD_AFTER_TOPOLOGY REFUSED_MISSING("DIR_FORMAT "));
	/* in a pipe perf fails there */
	expect("refused-cpu-pipe", true,
	       "# ========\n"
	       "# captured on    : Tue Nov 14 22:13:20 2023\n"
	       "# header version : 1\n"
	       "# data offset    : 0\n"
	       "# data size      : 0\n"
	       "# feat offset    : 0\n" END IDENTITY EVENTS2);
	/* the second group starts inside the first: perf prints the groups
	 * as far as it built them */
	expect("refused-group", true,
	       FRAME(584, 592) IDENTITY EVENTS3 CPU_TOPOLOGY NUMA PMU_MAPPINGS
	       "# group: {cpu-clock# group: {task-clock,page-faults}\n" UNREAD_AFTER_GROUP
	       "# missing features: TRACING_DATA BUILD_ID BRANCH_STACK AUXTRACE STAT "
	       "CACHE DIR_FORMAT \n" END);
	expect("refused-clock", true,
	       FRAME(424, 432)
	               IDENTITY EVENTS2 CPU_TOPOLOGY NUMA PMU_MAPPINGS SAMPLE_TIME MEMORY_NODES2
	       "# clockid frequency: 1000 MHz\n" BPF_FILE BTFS COMPRESSED CPU_PMU_CAPS
	       "# reference time disabled\n# hybrid cpu system:\n" REFUSED_MISSING("DIR_FORMAT "));
	ck_assert_msg(strstr(warnings, "CLOCK_DATA: unknown version 2"), "%s", warnings);
	expect("refused-dir", true,
	       FRAME(424, 432)
	               IDENTITY EVENTS2 CPU_TOPOLOGY NUMA PMU_MAPPINGS SAMPLE_TIME MEMORY_NODES2
	       "# clockid frequency: 1000 MHz\n"
	       "# directory data version : 0\n"
	       "# compressed : Unknown, level = 0, ratio = 0\n"
	       "# cpu pmu capabilities: not available\n"
	       "# reference time disabled\n"
	       "# hybrid cpu system:\n" REFUSED_MISSING(""));
}
END_TEST

START_TEST(test_cpu_lists)
{
	expect("cpu-lists", true,
	       FRAME(264, 272) IDENTITY EVENT(
	               "cpu-clock", "11, 12", "",
	               "disabled = 1, ") "# node0 meminfo  : total = 1000 kB, free = 0 kB\n"
	                                 "# node0 cpu list : 0-4,8\n"
	                                 "# node1 meminfo  : total = 1001 kB, free = 1 kB\n"
	                                 "# node1 cpu list : 0-7\n"
	                                 "# node2 meminfo  : total = 1002 kB, free = 2 kB\n"
	                                 "# node2 cpu list : 16\n"
	                                 "# node3 meminfo  : total = 1003 kB, free = 3 kB\n"
	                                 "# node3 cpu list : 8\n"
	                                 "# node4 meminfo  : total = 1004 kB, free = 4 kB\n"
	                                 "# node4 cpu list : 0\n"
	                                 "# node5 meminfo  : total = 1005 kB, free = 5 kB\n"
	                                 "# node5 cpu list : 1-3\n"
	                                 "# node6 meminfo  : total = 1006 kB, free = 6 kB\n"
	                                 "# node6 cpu list : 1-3\n"
	                                 "# node7 meminfo  : total = 1007 kB, free = 7 kB\n"
	                                 "# node7 cpu list : 0-3\n"
	                                 "# node8 meminfo  : total = 1008 kB, free = 8 kB\n"
	                                 "# node8 cpu list : 0-3\n"
	                                 "# node9 meminfo  : total = 1009 kB, free = 9 kB\n"
	                                 "# node9 cpu list : 1\n"
	                                 "# missing features: TRACING_DATA BUILD_ID CPU_TOPOLOGY "
	                                 "BRANCH_STACK PMU_MAPPINGS "
	                                 "GROUP_DESC AUXTRACE STAT CACHE SAMPLE_TIME MEM_TOPOLOGY "
	                                 "CLOCKID DIR_FORMAT "
	                                 "BPF_PROG_INFO BPF_BTF COMPRESSED CPU_PMU_CAPS CLOCK_DATA "
	                                 "HYBRID_TOPOLOGY PMU_CAPS "
	                                 "\n" END);
}
END_TEST

/* Where perf would crash: a function's BTF type past the types names
 * nothing; a CPU list past perf's 1024-byte buffer is cut there. */
START_TEST(test_beyond)
{
	char *got = info_of("beyond", true);
	const char *numa = strstr(got, "# node0 cpu list : ");
	const char *end = numa ? strchr(numa, '\n') : NULL;

	ck_assert_ptr_nonnull(end);
	ck_assert_int_eq(end - numa, (int)strlen("# node0 cpu list : ") + 1023);
	ck_assert(strncmp(numa + strlen("# node0 cpu list : "), "0,2,4,6,", 8) == 0);
	ck_assert_msg(strstr(got, BPF_PROG1(37, "")), "%s", got);
	free(got);
}
END_TEST

static Suite *info_suite(void)
{
	Suite *s = suite_create("info");
	TCase *tc = tcase_create("info");

	tcase_add_test(tc, test_machine);
	tcase_add_test(tc, test_machine_be);
	tcase_add_test(tc, test_machine_pipe);
	tcase_add_test(tc, test_bare);
	tcase_add_test(tc, test_nodies);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_cpu_lists);
	tcase_add_test(tc, test_beyond);
	suite_add_tcase(s, tc);
	return s;
}

/* --write DIR: the captures as files, for perf to read */
static int write_captures(const char *dir)
{
	for (size_t i = 0; i < nr_captures; i++) {
		struct bld_buf image;
		char path[4096];
		FILE *f;
		bool ok;

		if (!captures[i].perf_safe)
			continue;
		build_capture(&captures[i], &image);
		snprintf(path, sizeof(path), "%s/%s.data", dir, captures[i].name);
		f = fopen(path, "wb");
		ok = f && fwrite(image.data, 1, image.len, f) == image.len;
		if (f && fclose(f) != 0)
			ok = false;
		bld_buf_free(&image);
		if (!ok) {
			fprintf(stderr, "test_info: cannot write %s: %s\n", path, strerror(errno));
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	SRunner *runner;
	int failed;

	if (argc == 3 && strcmp(argv[1], "--write") == 0)
		return write_captures(argv[2]);
	runner = srunner_create(info_suite());
	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
