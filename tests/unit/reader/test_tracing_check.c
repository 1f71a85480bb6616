/* Unit tests of src/reader/tracing_check.c: the checks an event format
 * passes before libtraceevent sees it. Real kernel formats of every shape
 * pass (and, where tracefs is readable, every format of the running
 * kernel); each kind of damage that made libtraceevent leak or crash in a
 * mutation run of real captures is refused with its reason. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "reader/tracing_check_priv.h"

static const char header[] = "name: test\nID: 1\nformat:\n"
                             "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
                             "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

/* header, then the given field lines and print fmt */
static char *format_of(const char *fields, const char *print)
{
	size_t n = strlen(header) + strlen(fields) + strlen(print) + 32;
	char *text = malloc(n);

	ck_assert_ptr_nonnull(text);
	snprintf(text, n, "%s%s\nprint fmt: %s\n", header, fields, print);
	return text;
}

static int check(const char *fields, const char *print, char *why, size_t whysz)
{
	char *text = format_of(fields, print);
	int rc = ps_tracing_check_format(text, strlen(text), false, why, whysz);

	free(text);
	return rc;
}

static void expect_ok(const char *fields, const char *print)
{
	char why[160] = "";

	ck_assert_msg(check(fields, print, why, sizeof(why)) == 0, "refused (%s): %s", why, print);
}

static void expect_refused(const char *fields, const char *print, const char *reason)
{
	char why[160] = "";

	ck_assert_msg(check(fields, print, why, sizeof(why)) != 0, "accepted: %s", print);
	ck_assert_msg(strstr(why, reason), "'%s' is not '%s' (%s)", why, reason, print);
}

static const char fields[] = "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
                             "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
                             "\tfield:__data_loc char[] name;\toffset:40;\tsize:4;\tsigned:0;\n"
                             "\tfield:u8 addr[sizeof(u64)];\toffset:44;\tsize:8;\tsigned:0;\n"
                             "\tfield:unsigned long full;\toffset:56;\tsize:8;\tsigned:0;\n"
                             "\tfield:const char * ptr;\toffset:64;\tsize:8;\tsigned:0;\n";

/* The shapes kernels write (Linux 6.18's sched, dma, kvmmmu, ext4, jbd2
 * formats among them). */
START_TEST(test_kernel_shapes)
{
	expect_ok(fields, "\"comm=%s pid=%d\", REC->prev_comm, REC->common_pid");
	expect_ok(fields, "\"%s\", REC->prev_state & ((((0x0 | 0x1) + 1) << 1) - 1) ? "
	                  "__print_flags(REC->prev_state & 0xff, \"|\", { 0x00000001, \"S\" }, "
	                  "{ 0x2, \"D\" }) : \"R\"");
	expect_ok(fields, "\"%s %s\", __get_str(name), __print_symbolic(REC->full, { 0, \"a\" }, "
	                  "{ (1UL << 2), \"b\" })");
	expect_ok(fields, "\"%d\", ({ int __UNIQUE_ID_x_920 = (REC->full); int y = (128); "
	                  "((__UNIQUE_ID_x_920) < (y) ? (__UNIQUE_ID_x_920) : (y)); })");
	expect_ok(fields, "\"%s\", ({ const char *saved = trace_seq_buffer_ptr(p); static const "
	                  "char *s[] = { \"---\", \"w--\" }; union role r; r.word = REC->full; "
	                  "trace_seq_printf(p, \"%u\", r.level); saved; })");
	expect_ok(fields,
	          "\"dev %d,%d fc ineligible reasons:\n\"\n\"%s:%u\", "
	          "(int) ((unsigned int) ((REC->full) >> 20)), (unsigned long long)REC->full");
	expect_ok(fields, "\"%lu %p\", __builtin_expect(!!((unsigned long)REC->full), 0) ? 1 : 2, "
	                  "(void *)REC->ptr");
	expect_ok(fields, "\"%u\", jiffies_to_msecs(REC->full)");
	expect_ok(fields, "\"%s\", __print_array(__get_dynamic_array(name), "
	                  "__get_dynamic_array_len(name) / sizeof(u64), sizeof(u64))");
	expect_ok(fields, "\"%s %c\", REC->ptr ?: \"none\", 'x'");
	expect_ok(fields, "\"%d\", ((struct foo *)REC->ptr)->bar");
	expect_ok(fields, "\"no args\"");
	/* every kernel's divisors: itimer_state, writeback, xfs, dma */
	expect_ok(fields, "\"%lu %lu\", REC->full / 1000L, (jiffies - REC->full) / 250");
	expect_ok(fields, "\"%lu\", REC->full % 64");
	expect_ok(fields, "\"%d\", ({ int x = REC->full / 8; x; })");
	/* no signed: before 2.6.32; ftrace's own fields may have a '.' */
	expect_ok("\tfield:int old;\toffset:8;\tsize:4;\n", "\"%d\", REC->old");
	const char dotted[] = "name: x\nID: 2\nformat:\n\tfield:unsigned long a.b;\toffset:0;"
	                      "\tsize:8;\tsigned:0;\n\nprint fmt: \"%lx\", 0\n";
	char why[160];
	ck_assert_int_eq(ps_tracing_check_format(dotted, strlen(dotted), true, why, sizeof(why)),
	                 0);
	ck_assert_int_ne(ps_tracing_check_format(dotted, strlen(dotted), false, why, sizeof(why)),
	                 0);
}
END_TEST

/* Damage found by mutating real captures: each made libtraceevent leak
 * (or crash) where it was not refused. */
START_TEST(test_damage_refused)
{
	expect_refused("\tfield:uns-gned short x;\toffset:8;\tsize:2;\tsigned:0;\n",
	               "\"%d\", REC->x", "line 7 is not a field declaration of the kernel's form");
	expect_refused("\tfield:intCx;\toffset:8;\tsize:4;\tsigned:1;\n", "\"%d\", REC->intCx",
	               "line 7 is not a field declaration");
	expect_refused("\tfield:int x;\toffset:8;\tsize:4;\tsigned:1\n", "\"%d\", REC->x",
	               "line 7 is not a field declaration");
	expect_refused("\tfield:int x;\toff set:8;\tsize:4;\tsigned:1;\n", "\"%d\", REC->x",
	               "line 7 is not a field declaration");
	expect_refused("\tfield:char c[16;\toffset:8;\tsize:16;\tsigned:0;\n", "\"%s\", REC->c",
	               "line 7 is not a field declaration");
	expect_refused(fields, "\"%d\", R\"C->full", "a string or character that does not end");
	expect_refused(fields, "\"%s\", __print_flags(REC->full, \"|\", { 1, \"S\"?})",
	               "a flag or symbol other than '{ value, name }'");
	expect_refused(fields, "\"%d\", REE->full", "'->' after a name other than REC");
	expect_refused(fields, "\"%d\", (REC->full", "')' expected");
	expect_refused(fields, "\"%d\", REC->full)", "something other than ','");
	expect_refused(fields, "\"%d\", REC->full #", "a character no C expression has");
	expect_refused(fields, "\"%d\", REC->", "a field name expected");
	expect_refused(fields, "\"%d\" REC->full", "something other than ','");
	expect_refused(fields, "REC->full", "no format string");
	expect_refused(fields, "\"%d\", ({ int x = 1; x; )", "a bracket that closes nothing open");
	expect_refused(fields, "\"%d\", ({ int x = 1; x; }", "')' expected after a statement");
	expect_refused(fields, "\"%d\", REC->missing", "print fmt uses field 'missing'");
	/* libtraceevent divides by these as it parses or prints: SIGFPE
	 * (fuzz_tracing: 0x000%d00010 in sched_switch's mask) */
	expect_refused(fields, "\"%d\", 0x000%d00010", "a divisor other than a nonzero constant");
	expect_refused(fields, "\"%d\", 10 / 0x0", "a division by zero");
	expect_refused(fields, "\"%d\", 10 % 08", "a division by zero");
	expect_refused(fields, "\"%d\", REC->full / REC->prev_state",
	               "a divisor other than a nonzero constant");
	expect_refused(fields, "\"%d\", REC->full / sizeof(REC->full)",
	               "a divisor other than a nonzero constant");
	expect_refused(fields, "\"%d\", REC->full / 2 * 0", "a divisor that does not end");
	expect_refused(fields, "\"%d\", REC->full / -1", "a divisor other than a nonzero");
	expect_refused(fields, "\"%d\", ({ int x = REC->full % zero; x; })",
	               "a divisor other than a nonzero constant");
	/* nesting past what any kernel writes */
	char deep[400] = "\"%d\", ";
	for (int i = 0; i < 100; i++)
		strcat(deep, "(");
	expect_refused(fields, deep, "nested too deeply");
	/* what libtraceevent reads as the print format or a field whatever the
	 * spacing, where the checks by line would not see it (fuzz_tracing:
	 * a __print_flags() of a field not declared, behind "print fmt\t:") */
	static const char *const spaced[] = {
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n"
		"print fmt\t: \"%d\", __print_flags(REC->b, \"|\", { 1, \"S\" })\n",
		"name: x\nID: 1\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n"
		"print\nfmt: \"%d\", REC->a\n",
		"name: x\nID: 1\nformat:\n\tfield :int a;\toffset:0;\tsize:4;\tsigned:1;\n"
		"print fmt: \"%d\", REC->a\n",
	};
	for (size_t i = 0; i < sizeof(spaced) / sizeof(spaced[0]); i++) {
		char reason[160] = "";
		ck_assert_int_ne(ps_tracing_check_format(spaced[i], strlen(spaced[i]), false,
		                                         reason, sizeof(reason)),
		                 0);
		ck_assert_msg(strstr(reason, "is not a line of a kernel event format"), "%s",
		              reason);
	}
	char text[] = "name: x\nID: 1\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n"
	              "print fmt: \"%d\", REC->a\n";
	char why[160];
	text[40] = (char)0x8d;
	ck_assert_int_ne(ps_tracing_check_format(text, strlen(text), false, why, sizeof(why)), 0);
	ck_assert_str_eq(why, "byte 0x8d at 40 is not printable ASCII");
}
END_TEST

/* libtraceevent 1.7.1 (and 1.8.4) leaks a unary operator whenever what
 * follows it in the argument fails to parse: process_op() keeps the
 * token in the argument, process_arg_token() then forgets it. Two such
 * failures are of shapes no kernel writes (fuzz_tracing: "?~ _.print_flags("
 * and "?~ __print_flags(..., { 0x00000,02, \"D\" }, ...)"): a flag or
 * symbol list other than "{ value, name }" entries of constants
 * libtraceevent works out as it parses, and a member of a name
 * (test_member_of_name). */
START_TEST(test_flag_lists)
{
	static const char *const kernel[] = {
		/* kvm's exceptions: names of strings, and an empty list
		 * (a kernel's, though libtraceevent fails on it and leaks
		 * the '!') */
		"\"%s%s\", __print_symbolic(REC->full, { 0, \"#\" \"DE\" }, { 1, \"#\" \"DB\" }), "
		"!REC->full ? \"\" : __print_symbolic(REC->full, { })",
		/* a NULL-ended list; mm's gfp flags; enums left unnamed */
		"\"%s\", __print_flags(REC->full, \"|\", { 1, \"a\" }, { 0, ((void *)0) })",
		"\"%s\", __print_symbolic(REC->full, { 1, \"a\" }, { -1, 0 })",
		"\"%s\", __print_flags(REC->full, \"|\", { (unsigned long)((((1)))<<(2)), \"b\" }, "
		"{ (unsigned long)(((gfp_t)((((1)))<<(3)))|((gfp_t)((((1)))<<(4)))) & "
		"~((gfp_t)((((1)))<<(5))), \"c\" }, { (1UL << 1), \"d\" }, { 1 + 2, \"e\" })",
		"\"%s\", __print_symbolic(REC->full, { TLB_FLUSH_ON_TASK_SWITCH, \"switch\" }, "
		"{ (-1), \"x\" }, { (gfp_t)(1), \"y\" })",
	};
	for (size_t i = 0; i < sizeof(kernel) / sizeof(kernel[0]); i++)
		expect_ok(fields, kernel[i]);

	const char shape[] = "a flag or symbol other than '{ value, name }'";
	expect_refused(fields, "\"%s\", __print_flags(REC->full, \"|\", { 0x00000,02, \"D\" })",
	               shape);
	expect_refused(fields, "\"%s\", __print_flags(REC->full, \"|\", { 1 })", shape);
	expect_refused(fields, "\"%s\", __print_flags(REC->full, \"|\", { 1, \"a\", })", shape);
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full, 1, \"a\")", shape);
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full, { 1, \"a\" },)", shape);
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full, { 1, \"a\" } { 2, \"b\" })",
	               "')' expected");
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full)", "',' expected");
	expect_refused(fields, "\"%s\", __print_flags(REC->full, 1, { 1, \"a\" })",
	               "a __print_flags() delimiter other than a string");
	/* values libtraceevent cannot work out */
	const char constant[] = "a flag or symbol value other than a constant";
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full, { REC->full, \"a\" })",
	               constant);
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full, { f(1), \"a\" })", constant);
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full, { \"1\", \"a\" })", constant);
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full, { 2 * 4, \"a\" })", shape);
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full, { 1 ? 2 : 3, \"a\" })", shape);
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full, { !1, \"a\" })", constant);
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full, { (int)~1, \"a\" })", shape);
	/* libtraceevent reads one operand as a name */
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full, { 1, -1 })",
	               "a flag or symbol name other than a string or an operand");
	expect_refused(fields, "\"%s\", __print_symbolic(REC->full, { 1, 1 + 1 })", shape);
}
END_TEST

START_TEST(test_member_of_name)
{
	/* rxrpc's header fields */
	expect_ok(fields, "\"%08x\", REC->full.epoch");
	expect_ok(fields, "\"%d\", ((struct foo *)REC->ptr)->bar.baz, REC->ptr->x.y");
	/* ftrace's func_repeats */
	expect_ok(fields, "\"%llu\", (((u64)(REC)->full << 32) | (REC)->full)");
	expect_refused(fields, "\"%d\", 1.5", "'.' after something other than a field");
	expect_refused(fields,
	               "\"%s\", REC->full ?~ _.print_flags(REC->full, \"|\", { 1, \"S\" }) : \"R\"",
	               "'.' after a name");
	expect_refused(fields, "\"%d\", REC.full", "'.' after a name");
	expect_refused(fields, "\"%d\", -x.y", "'.' after a name");
}
END_TEST

/* Where libtraceevent 1.7.1's parser makes an operator with no right side
 * and follows the NULL (fuzz_tracing): a postfix operator after a
 * subscript, and one, or a sizeof() it does not parse, first in a
 * conditional's last part. What kernels write around them passes. */
START_TEST(test_null_dereferences)
{
	expect_ok(fields, "\"%d\", REC->ptr[1] + 1, 1 ? REC->ptr[1] : 2, REC->ptr[1] ? 1 : 2");
	expect_ok(fields, "\"%d\", 1 ? 2 : REC->full + 1, 1 ? 2 : 3 + REC->ptr[1]");
	expect_ok(fields, "\"%d\", 1 ? 2 : (REC->ptr[1]), 1 ? 2 : 3 ? REC->ptr[1] : 4");
	expect_ok(fields, "\"%d\", 1 ? 2 : __print_hex(REC->ptr[1], 1), 1 ? 2 : 1 + sizeof(char)");
	static const char sub[] = "a subscript followed by '[', '.' or '->'";
	expect_refused(fields, "\"%d\", REC->ptr[1][2]", sub);
	expect_refused(fields, "\"%d\", (REC->ptr)[1].x", sub);
	expect_refused(fields, "\"%d\", REC->ptr[1]->x", sub);
	static const char last[] = "'[', '.' or '->' first in a conditional's last part";
	expect_refused(fields, "\"%d\", 1 ? 2 : REC->ptr[1]", last);
	expect_refused(fields, "\"%d\", 1 ? 2 : 3 ? 4 : REC->ptr[1]", last);
	expect_refused(fields, "\"%d\", 1 ? 2 : REC->ptr[1] ? 3 : 4", last);
	expect_refused(fields, "\"%d\", 1 ? 2 : REC->full.x + 3", last);
	expect_refused(fields, "\"%d\", 1 ? (1 ? 2 : REC->full->x) : 2", last);
	expect_refused(fields, "\"%d\", REC->full ? 2 : sizeof(char)",
	               "sizeof() first in a conditional's last part");
}
END_TEST

/* What libtraceevent prints with grows to whatever the conversions and
 * the operators' tree ask for (fuzz_tracing: a stack overflow, and "%*d"
 * of a record's bytes that never ended). */
START_TEST(test_bounded_output)
{
	expect_ok(fields, "\"%16s %-8s %08lx %#016llx %.*s %*pbl %%99999d\", REC->prev_comm, "
	                  "REC->prev_comm, REC->full, REC->full, 4, REC->prev_comm, 8, REC->ptr");
	expect_ok(fields, "\"%1024d %.1024s\", REC->full, REC->prev_comm");
	expect_refused(fields, "\"%d %1025d\", REC->full, REC->full",
	               "a conversion wider than any kernel format writes");
	expect_refused(fields, "\"%99999999999999999999d\", REC->full",
	               "a conversion wider than any kernel format writes");
	expect_refused(fields, "\"%.2000s\", REC->prev_comm",
	               "a conversion's precision above any kernel format's");
	expect_refused(fields, "\"%*d\", REC->full, REC->full", "a '*' width other than in %*pb");
	expect_refused(fields, "\"%.*d\", 4, REC->full", "a '*' precision other than in %.*s");
	expect_refused(fields, "\"a\" \"%-*s\", 4, REC->prev_comm", "a '*' width other than");
	/* 256 operators in one argument, then 257 */
	static char chain[1200];
	strcpy(chain, "\"%d\", REC->full");
	for (int i = 0; i < 256; i++)
		strcat(chain, "+1");
	expect_ok(fields, chain);
	strcat(chain, "+1");
	expect_refused(fields, chain, "more operators in one argument than any kernel writes");
	/* and again in the next argument, each a tree of its own */
	strcpy(chain, "\"%d\"");
	for (int a = 0; a < 2; a++) {
		strcat(chain, ", REC->full");
		for (int i = 0; i < 200; i++)
			strcat(chain, "|1");
	}
	expect_ok(fields, chain);
}
END_TEST

/* Every format the running kernel offers passes (when tracefs can be
 * read here: as root, where it is mounted). */
START_TEST(test_running_kernel)
{
	static const char *const roots[] = { "/sys/kernel/tracing/events",
		                             "/sys/kernel/debug/tracing/events" };
	size_t checked = 0;

	for (size_t r = 0; r < 2 && !checked; r++) {
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
				char file[1300], why[160] = "";
				FILE *f;
				size_t n;

				if (ev->d_name[0] == '.')
					continue;
				snprintf(file, sizeof(file), "%s/%s/format", path, ev->d_name);
				if (!(f = fopen(file, "r")))
					continue;
				n = fread(text, 1, sizeof(text), f);
				fclose(f);
				ck_assert_msg(ps_tracing_check_format(
				                      text, n, strcmp(sys->d_name, "ftrace") == 0,
				                      why, sizeof(why)) == 0,
				              "%s: %s", file, why);
				checked++;
			}
			closedir(events);
		}
		closedir(systems);
	}
	fprintf(stderr, "tracing_check: %zu formats of the running kernel accepted%s\n", checked,
	        checked ? "" : " (tracefs cannot be read here)");
}
END_TEST

Suite *suite_tracing_check(void)
{
	Suite *s = suite_create("tracing format checks");
	TCase *tc = tcase_create("checks");

	tcase_add_test(tc, test_kernel_shapes);
	tcase_add_test(tc, test_damage_refused);
	tcase_add_test(tc, test_flag_lists);
	tcase_add_test(tc, test_member_of_name);
	tcase_add_test(tc, test_null_dereferences);
	tcase_add_test(tc, test_bounded_output);
	tcase_add_test(tc, test_running_kernel);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
