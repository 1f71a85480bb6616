/* Unit tests of src/reader/tracing_sizeof.c: every sizeof() libtraceevent
 * 1.7.1 would double free on is replaced by the number it computes, the
 * ones it does not understand are left to it, the ones it would double free
 * on without a value refuse the format; real kernel formats come out with
 * the values a fixed libtraceevent prints, and libtraceevent parses every
 * running kernel's format after the rewrite. */
#define _GNU_SOURCE /* memmem */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>

#include "helpers.h"
#include "reader/tracing_check_priv.h"

static const char fields[] = "name: test\nID: 7\nformat:\n"
                             "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
                             "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
                             "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
                             "\tfield:long state;\toffset:24;\tsize:8;\tsigned:1;\n"
                             "\tfield:__data_loc char[] name;\toffset:32;\tsize:4;\tsigned:0;\n"
                             "\tfield:__data_loc char old;\toffset:36;\tsize:2;\tsigned:0;\n"
                             "\tfield:u8 addr[sizeof(u64)];\toffset:40;\tsize:8;\tsigned:0;\n"
                             "\tfield:unsigned short port;\toffset:48;\tsize:2;\tsigned:0;\n"
                             "\tfield:unsigned short port;\toffset:50;\tsize:4;\tsigned:0;\n";

/* The print fmt after the rewrite, or NULL when nothing was replaced;
 * *rc the return. */
static char *replace(const char *print, int long_size, int *rc)
{
	size_t n = strlen(fields) + strlen(print) + 16, out_size = 0;
	char *text = malloc(n), *out = NULL, *result = NULL, why[160] = "";

	ck_assert_ptr_nonnull(text);
	snprintf(text, n, "%s\nprint fmt: %s\n", fields, print);
	*rc = ps_tracing_replace_sizeof(text, strlen(text), long_size, &out, &out_size, why,
	                                sizeof(why));
	if (*rc == 0 && out) {
		const char *p = strstr(out, "print fmt: ");

		ck_assert_uint_eq(strlen(out), out_size);
		/* the field lines are left as they were */
		ck_assert_int_eq(memcmp(out, text, strlen(fields)), 0);
		ck_assert_ptr_nonnull(p);
		result = strdup(p + 11);
		result[strlen(result) - 1] = 0; /* the newline */
	}
	if (*rc)
		ck_assert_msg(strstr(why, "sizeof libtraceevent cannot take"), "%s", why);
	free(out);
	free(text);
	return result;
}

static void expect_replaced(const char *print, int long_size, const char *want)
{
	int rc;
	char *got = replace(print, long_size, &rc);

	ck_assert_msg(rc == 0 && got && strcmp(got, want) == 0, "%s -> %s (%d), not %s", print,
	              got ? got : "(left)", rc, want);
	free(got);
}

static void expect_left(const char *print)
{
	int rc;
	char *got = replace(print, 8, &rc);

	ck_assert_msg(rc == 0 && !got, "%s -> %s (%d)", print, got ? got : "(left)", rc);
}

static void expect_refused(const char *print)
{
	int rc;
	char *got = replace(print, 8, &rc);

	ck_assert_msg(rc == -EINVAL && !got, "%s -> %s (%d)", print, got ? got : "(left)", rc);
}

START_TEST(test_replaced)
{
	expect_replaced("\"%d\", sizeof(int)", 8, "\"%d\", 4");
	expect_replaced("\"%d\", sizeof(unsigned int)", 8, "\"%d\", 4");
	expect_replaced("\"%d\", sizeof( unsigned\tint )", 8, "\"%d\", 4");
	expect_replaced("\"%d\", sizeof(unsigned)", 8, "\"%d\", 4");
	expect_replaced("\"%d\", sizeof(long long)", 4, "\"%d\", 8");
	expect_replaced("\"%d\", sizeof(unsigned long long)", 4, "\"%d\", 8");
	expect_replaced("\"%d\", sizeof(long)", 4, "\"%d\", 4");
	expect_replaced("\"%d\", sizeof(unsigned long)", 8, "\"%d\", 8");
	/* a field: its size: line, the first that names it */
	expect_replaced("\"%d\", sizeof(REC->state)", 4, "\"%d\", 8");
	expect_replaced("\"%d\", sizeof(REC->common_pid)", 8, "\"%d\", 4");
	expect_replaced("\"%d\", sizeof(REC -> port)", 8, "\"%d\", 2");
	/* every one, anywhere in an expression; not in strings */
	expect_replaced("\"sizeof(int) %d %d\", REC->state / sizeof(unsigned int), "
	                "(sizeof(long)) + sizeof(int)",
	                8, "\"sizeof(int) %d %d\", REC->state / 4, (8) + 4");
	expect_replaced(
	        "\"%s\", __print_array(__get_dynamic_array(name), "
	        "__get_dynamic_array_len(name) / sizeof(unsigned int), sizeof(unsigned int))",
	        8,
	        "\"%s\", __print_array(__get_dynamic_array(name), "
	        "__get_dynamic_array_len(name) / 4, 4)");
}
END_TEST

/* What libtraceevent gives up on without harm stays for it to give up on. */
START_TEST(test_left)
{
	expect_left("\"%d\", REC->state");
	expect_left("\"sizeof(int) %d\", REC->state");
	expect_left("\"%d\", sizeof(u64)");
	expect_left("\"%d\", sizeof(char)");
	expect_left("\"%d\", sizeof(struct page)");
	expect_left("\"%d\", sizeof(long *)");
	expect_left("\"%d\", sizeof(unsigned *)");
	expect_left("\"%d\", sizeof(unsigned long int)");
	expect_left("\"%d\", sizeof()");
	expect_left("\"%d\", sizeof(REC)");
	expect_left("\"%d\", sizeof(REC.state)");
	expect_left("\"%d\", sizeof(REC->comm)"); /* arrays */
	expect_left("\"%d\", sizeof(REC->name)");
	expect_left("\"%d\", sizeof(REC->old)"); /* a 2-byte __data_loc */
	expect_left("\"%d\", sizeof(REC->addr)");
	expect_left("\"%d\", sizeof(REC->missing)");
	expect_left("\"%d\", sizeof REC->state");
	expect_left("\"%d\", my_sizeof(int)");
}
END_TEST

/* What libtraceevent would take to the double free with no number for it. */
START_TEST(test_refused)
{
	expect_refused("\"%d\", sizeof(int *)");
	expect_refused("\"%d\", sizeof(unsigned int x)");
	expect_refused("\"%d\", sizeof(long long int)");
	expect_refused("\"%d\", sizeof(REC->state + 1)");
	expect_refused("\"%d\", sizeof(REC->state");
	expect_refused("\"%d\", sizeof(int");
	expect_refused("\"%d\", sizeof(\"int\")");
	expect_refused("\"%d\", sizeof(unsigned 'int')");
	expect_refused("\"%d\", sizeof(");
	/* the first good one does not hide a later bad one */
	expect_refused("\"%d %d\", sizeof(int), sizeof(int *)");
}
END_TEST

/* Linux 6.18's dma_sync_sg_for_cpu, as tracefs shows it. */
static const char dma_sync_sg[] =
        "name: dma_sync_sg_for_cpu\nID: 426\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
        "\tfield:__data_loc char[] device;\toffset:8;\tsize:4;\tsigned:0;\n"
        "\tfield:__data_loc u64[] dma_addrs;\toffset:12;\tsize:4;\tsigned:0;\n"
        "\tfield:__data_loc unsigned int[] lengths;\toffset:16;\tsize:4;\tsigned:0;\n"
        "\tfield:enum dma_data_direction dir;\toffset:20;\tsize:4;\tsigned:0;\n\n"
        "print fmt: \"%s dir=%s dma_addrs=%s sizes=%s\", __get_str(device), "
        "__print_symbolic(REC->dir, { 0, \"BIDIRECTIONAL\" }, { 1, \"TO_DEVICE\" }, "
        "{ 2, \"FROM_DEVICE\" }, { 3, \"NONE\" }), "
        "__print_array(__get_dynamic_array(dma_addrs), "
        "__get_dynamic_array_len(dma_addrs) / sizeof(u64), sizeof(u64)), "
        "__print_array(__get_dynamic_array(lengths), "
        "__get_dynamic_array_len(lengths) / sizeof(unsigned int), sizeof(unsigned int))\n";

/* The same event as a kernel prints it without the u64 array (the sizes
 * first, as libtraceevent meets them). */
static const char dma_sizes[] =
        "name: dma_sync_sg_for_cpu\nID: 426\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
        "\tfield:__data_loc char[] device;\toffset:8;\tsize:4;\tsigned:0;\n"
        "\tfield:__data_loc unsigned int[] lengths;\toffset:12;\tsize:4;\tsigned:0;\n"
        "\tfield:enum dma_data_direction dir;\toffset:16;\tsize:4;\tsigned:0;\n\n"
        "print fmt: \"%s dir=%s sizes=%s\", __get_str(device), "
        "__print_symbolic(REC->dir, { 0, \"BIDIRECTIONAL\" }, { 1, \"TO_DEVICE\" }, "
        "{ 2, \"FROM_DEVICE\" }, { 3, \"NONE\" }), "
        "__print_array(__get_dynamic_array(lengths), "
        "__get_dynamic_array_len(lengths) / sizeof(unsigned int), sizeof(unsigned int))\n";

static char *rewritten(const char *text)
{
	char *out = NULL, why[160] = "";
	size_t out_size = 0;

	ck_assert_int_eq(ps_tracing_check_format(text, strlen(text), false, why, sizeof(why)), 0);
	ck_assert_int_eq(
	        ps_tracing_replace_sizeof(text, strlen(text), 8, &out, &out_size, why, sizeof(why)),
	        0);
	ck_assert_ptr_nonnull(out);
	return out;
}

START_TEST(test_kernel_dma)
{
	char *out = rewritten(dma_sync_sg);
	struct tep_handle *tep = tep_alloc();
	struct tep_event *event;

	/* sizeof(u64) is libtraceevent's to fail on; the rest is the text */
	ck_assert_ptr_nonnull(strstr(out, "dma_addrs) / sizeof(u64), sizeof(u64)), "));
	ck_assert_ptr_nonnull(strstr(out, "__get_dynamic_array_len(lengths) / 4, 4)\n"));
	ck_assert_uint_eq(strlen(out),
	                  strlen(dma_sync_sg) - 2 * (strlen("sizeof(unsigned int)") - 1));
	ck_assert_ptr_nonnull(tep);
	tep_set_long_size(tep, 8);
	ck_assert_int_eq(tep_parse_event(tep, out, strlen(out), "dma"), 0);
	event = tep_find_event(tep, 426);
	ck_assert_ptr_nonnull(event);
	tep_free(tep);
	free(out);
}
END_TEST

/* The rewritten dma_sizes prints what a fixed libtraceevent prints. */
START_TEST(test_kernel_dma_prints)
{
	char *out = rewritten(dma_sizes);
	struct tep_handle *tep = tep_alloc();
	struct tep_record record;
	struct trace_seq seq;
	uint8_t data[40] = { 0 };
	uint16_t type = 426;
	uint32_t device = 20 | 5u << 16, lengths = 28 | 8u << 16, dir = 1, len[2] = { 4096, 512 };

	ck_assert_ptr_nonnull(strstr(out, "__get_dynamic_array_len(lengths) / 4, 4)\n"));
	ck_assert_ptr_nonnull(tep);
	tep_set_long_size(tep, 8);
	tep_set_file_bigendian(tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	ck_assert_int_eq(tep_parse_event(tep, out, strlen(out), "dma"), 0);
	memcpy(data, &type, 2);
	memcpy(data + 8, &device, 4);
	memcpy(data + 12, &lengths, 4);
	memcpy(data + 16, &dir, 4);
	memcpy(data + 20, "dev0", 5);
	memcpy(data + 28, len, 8);
	memset(&record, 0, sizeof(record));
	record.data = data;
	record.size = sizeof(data);
	trace_seq_init(&seq);
	tep_print_event(tep, &seq, &record, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&seq);
	/* what libtraceevent 1.7.1 with 1.7.2's fix prints for dma_sizes */
	ck_assert_str_eq(seq.buffer, "dev0 dir=TO_DEVICE sizes=4096 512");
	trace_seq_destroy(&seq);
	tep_free(tep);
	free(out);
}
END_TEST

/* Every format of the running kernel (where tracefs can be read) passes the
 * checks and the rewrite, and libtraceevent parses each that has a sizeof
 * as it comes out. (Not all of them: some real formats, kvm_inj_exception's
 * "!REC->has_error ? ... : __print_symbolic(REC->error_code, { })", make
 * libtraceevent leak a token of its own, fuzz/README.md.) */
START_TEST(test_running_kernel)
{
	static const char *const roots[] = { "/sys/kernel/tracing/events",
		                             "/sys/kernel/debug/tracing/events" };
	size_t seen = 0, parsed = 0, replaced = 0;

	for (size_t r = 0; r < 2 && !seen; r++) {
		DIR *systems = opendir(roots[r]);
		struct dirent *sys, *ev;

		if (!systems)
			continue;
		while ((sys = readdir(systems))) {
			char path[1024];
			DIR *events;

			if (sys->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", roots[r], sys->d_name);
			if (!(events = opendir(path)))
				continue;
			while ((ev = readdir(events))) {
				static char text[1 << 16];
				char file[1300], why[160] = "", *out = NULL;
				bool ftrace = strcmp(sys->d_name, "ftrace") == 0;
				struct tep_handle *tep;
				size_t n, out_size = 0;
				FILE *f;

				if (ev->d_name[0] == '.')
					continue;
				snprintf(file, sizeof(file), "%s/%s/format", path, ev->d_name);
				if (!(f = fopen(file, "r")))
					continue;
				n = fread(text, 1, sizeof(text), f);
				fclose(f);
				seen++;
				ck_assert_msg(ps_tracing_check_format(text, n, ftrace, why,
				                                      sizeof(why)) == 0,
				              "%s: %s", file, why);
				ck_assert_msg(ps_tracing_replace_sizeof(text, n, 8, &out, &out_size,
				                                        why, sizeof(why)) == 0,
				              "%s: %s", file, why);
				replaced += out != NULL;
				if (!memmem(text, n, "sizeof", 6)) {
					free(out);
					continue;
				}
				tep = tep_alloc();
				ck_assert_ptr_nonnull(tep);
				tep_set_long_size(tep, 8);
				ck_assert_msg(tep_parse_event(tep, out ? out : text,
				                              out ? out_size : n, sys->d_name) == 0,
				              "%s", file);
				tep_free(tep);
				free(out);
				parsed++;
			}
			closedir(events);
		}
		closedir(systems);
	}
	fprintf(stderr,
	        "tracing_sizeof: %zu formats of the running kernel, %zu with a sizeof parsed, %zu "
	        "rewritten%s\n",
	        seen, parsed, replaced, seen ? "" : " (tracefs cannot be read here)");
}
END_TEST

Suite *suite_tracing_sizeof(void)
{
	Suite *s = suite_create("tracing format sizeof");
	TCase *tc = tcase_create("sizeof");

	tcase_add_test(tc, test_replaced);
	tcase_add_test(tc, test_left);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_kernel_dma);
	tcase_add_test(tc, test_kernel_dma_prints);
	tcase_add_test(tc, test_running_kernel);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
