/* Unit tests of src/insn: instruction lengths and branches as perf 6.1's
 * x86 decoder gives them, its quirks included (values checked against
 * that decoder). */
#include <check.h>
#include <stdarg.h>
#include <stdlib.h>

#include "insn/insn.h"

/* decodes(x86_64, length, branch, bytes..., -1): length 0 means the
 * decoder refuses them */
static void decodes(bool x86_64, unsigned length, bool branch, ...)
{
	uint8_t code[32];
	size_t n = 0;
	struct ps_insn insn;
	va_list ap;
	int byte;

	va_start(ap, branch);
	while ((byte = va_arg(ap, int)) >= 0 && n < sizeof(code))
		code[n++] = (uint8_t)byte;
	va_end(ap);
	if (!length) {
		ck_assert_msg(!ps_insn_decode(code, n, x86_64, &insn),
		              "%02x %02x %02x...: decoded to %u bytes", code[0], code[1], code[2],
		              insn.length);
		return;
	}
	ck_assert_msg(ps_insn_decode(code, n, x86_64, &insn), "%02x %02x %02x...: refused", code[0],
	              code[1], code[2]);
	ck_assert_msg(insn.length == length, "%02x %02x %02x...: %u bytes, not %u", code[0],
	              code[1], code[2], insn.length, length);
	ck_assert_msg(insn.branch == branch, "%02x %02x %02x...: branch %d", code[0], code[1],
	              code[2], insn.branch);
}

START_TEST(test_lengths)
{
	decodes(true, 10, false, 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, -1); /* mov imm64 */
	decodes(true, 5, false, 0x48, 0x8b, 0x44, 0x24, 0x08, -1); /* SIB, disp8 */
	decodes(true, 7, false, 0xc7, 0x04, 0x24, 1, 2, 3, 4, -1); /* group 11, Iz */
	decodes(true, 9, false, 0xa1, 1, 2, 3, 4, 5, 6, 7, 8, -1); /* moffs64 */
	decodes(true, 6, false, 0x67, 0xa1, 1, 2, 3, 4, 5, 6, 7, 8, -1); /* moffs32 */
	decodes(true, 4, false, 0xf3, 0x0f, 0x1e, 0xfa, 0x90, -1); /* endbr64 */
	decodes(true, 3, false, 0xc5, 0xfc, 0x77, -1); /* vzeroall */
	decodes(true, 4, false, 0xc5, 0xf9, 0xd7, 0xc0, -1); /* vpmovmskb */
	decodes(true, 5, false, 0xc4, 0xe1, 0xfb, 0x92, 0xcb, 0x62, -1); /* kmovq */
	decodes(true, 6, false, 0x62, 0xf1, 0x7f, 0xc9, 0x6f, 0x0f, 0x62, -1); /* EVEX vmovdqu8 */
	decodes(true, 6, false, 0x62, 0xf2, 0x7d, 0x48, 0x78, 0x18, -1);
	/* perf's quirks: 66 shortens push's immediate; the fifth different
	 * prefix is the opcode; at most 15 bytes; XOP reads as pop with
	 * ModRM; the Xen emulate prefix is skipped */
	decodes(true, 4, false, 0x66, 0x68, 0x34, 0x12, 0x90, 0x90, -1);
	decodes(true, 5, false, 0xf0, 0xf2, 0xf3, 0x66, 0x2e, 0x3e, 0x90, 0x90, -1);
	decodes(true, 15, false, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
	        0x66, 0x66, 0x66, 0x90, 0x90, -1);
	decodes(true, 2, false, 0x8f, 0xe9, 0x78, 0xc1, 0xc0, 0x90, -1);
	decodes(true, 6, false, 0x0f, 0x0b, 0x78, 0x65, 0x6e, 0x90, 0x90, -1);
	/* 32-bit mode: LES when the next byte is no register ModRM, 16-bit
	 * operands and addresses, far pointers */
	decodes(false, 2, false, 0xc4, 0x13, 0x95, -1);
	decodes(false, 6, false, 0x66, 0xa1, 1, 2, 3, 4, -1);
	decodes(false, 4, false, 0x67, 0x8b, 0x46, 0x10, -1);
	decodes(false, 7, true, 0x9a, 1, 2, 3, 4, 5, 6, -1);
}
END_TEST

START_TEST(test_branches)
{
	decodes(true, 5, true, 0xe8, 1, 2, 3, 4, -1); /* call */
	decodes(true, 6, true, 0x66, 0xe8, 1, 2, 3, 4, 0x90, -1); /* 32-bit Jz anyway */
	decodes(true, 6, true, 0xff, 0x25, 0xca, 0x2f, 0x00, 0x00, -1); /* jmp *mem */
	decodes(true, 2, true, 0xff, 0xd0, -1); /* call *%rax */
	decodes(true, 2, false, 0xff, 0xc0, -1); /* inc %eax */
	decodes(true, 1, true, 0xc3, -1);
	decodes(true, 2, true, 0x74, 0x05, -1);
	decodes(true, 6, true, 0x0f, 0x84, 1, 2, 3, 4, -1);
	decodes(true, 2, true, 0x0f, 0x05, -1); /* syscall */
	decodes(true, 3, true, 0x0f, 0x01, 0xc2, -1); /* vmlaunch */
	decodes(true, 3, false, 0x0f, 0x01, 0xd0, -1); /* xgetbv */
}
END_TEST

START_TEST(test_refused)
{
	decodes(true, 0, false, 0xc4, 0xe3, 0xf9, 0x6b, 0xc2, 0x10, 0xc3, -1); /* FMA4 */
	decodes(true, 0, false, 0x66, 0x0f, 0x78, 0xc0, 1, 2, 0x90, -1); /* EXTRQ */
	decodes(true, 0, false, 0x48, 0x9a, 1, 2, 3, 4, 5, 6, -1); /* no 16:64 pointer */
	decodes(true, 0, false, 0x48, 0x8b, -1); /* cut short */
	decodes(true, 0, false, 0x66, 0x66, -1); /* prefixes alone */
	decodes(true, 0, false, 0xc5, 0xf8, 0x80, 0xc0, -1); /* no VEX jcc */
	decodes(true, 0, false, -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("insn");
	TCase *tc = tcase_create("insn");
	SRunner *runner;
	int failed;

	tcase_add_test(tc, test_lengths);
	tcase_add_test(tc, test_branches);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	runner = srunner_create(s);
	srunner_run_all(runner, CK_NORMAL);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
