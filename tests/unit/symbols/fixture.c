/* The ELF the symbols tests read: built into a small shared object by
 * helpers.c at test time (cc -O2 -g -shared -nostdlib). The asm block lays
 * out aliases with chosen bindings and sizes for perf's choice rules; the C
 * functions give inline frames, a PLT entry and a DWARF name that differs
 * from the ELF symbol perf picks. Keep line numbers of the C part stable:
 * test_inline.c checks them. */

__asm__(".text\n"
        ".p2align 4\n"
        /* a sized symbol beats a zero-size alias */
        ".globl pick_size_zero\n.type pick_size_zero,@function\n"
        ".globl pick_size_sized\n.type pick_size_sized,@function\n"
        "pick_size_zero:\n"
        "pick_size_sized:\n"
        "nop; nop; nop; nop; ret\n"
        ".size pick_size_sized, 5\n"
        ".p2align 4\n"
        /* a global symbol beats a weak alias */
        ".weak pick_weak_w\n.type pick_weak_w,@function\n"
        ".globl pick_weak_g\n.type pick_weak_g,@function\n"
        "pick_weak_w:\n"
        "pick_weak_g:\n"
        "nop; nop; ret\n"
        ".size pick_weak_w, 3\n.size pick_weak_g, 3\n"
        ".p2align 4\n"
        /* a global symbol beats a local alias */
        ".type pick_local_l,@function\n"
        ".globl pick_local_g\n.type pick_local_g,@function\n"
        "pick_local_l:\n"
        "pick_local_g:\n"
        "nop; nop; ret\n"
        ".size pick_local_l, 3\n.size pick_local_g, 3\n"
        ".p2align 4\n"
        /* fewer leading underscores win, before length */
        ".globl __pick_under\n.type __pick_under,@function\n"
        ".globl pick_under\n.type pick_under,@function\n"
        "__pick_under:\n"
        "pick_under:\n"
        "nop; nop; ret\n"
        ".size __pick_under, 3\n.size pick_under, 3\n"
        ".p2align 4\n"
        /* then the longer name */
        ".globl pick_len_a\n.type pick_len_a,@function\n"
        ".globl pick_len_longer\n.type pick_len_longer,@function\n"
        "pick_len_a:\n"
        "pick_len_longer:\n"
        "nop; nop; ret\n"
        ".size pick_len_a, 3\n.size pick_len_longer, 3\n"
        ".p2align 4\n"
        /* a zero-size symbol ends where the next one starts */
        ".globl zero_sized\n.type zero_sized,@function\n"
        "zero_sized:\n"
        ".fill 32, 1, 0x90\n"
        ".globl after_zero\n.type after_zero,@function\n"
        "after_zero:\n"
        "nop; nop; nop; nop; ret\n"
        ".size after_zero, 5\n"
        /* a gap after a sized symbol belongs to nobody */
        ".fill 27, 1, 0xcc\n"
        ".globl after_gap\n.type after_gap,@function\n"
        "after_gap:\n"
        "ret\n"
        ".size after_gap, 1\n");

extern int fixture_external(int x);

static inline __attribute__((always_inline)) int inl_leaf(int x)
{
	return fixture_external(x * 3) + 1;
}

static inline __attribute__((always_inline)) int inl_mid(int x)
{
	return inl_leaf(x + 1) * 2;
}

__attribute__((noinline)) int inl_outer(int x)
{
	return inl_mid(x) - 5;
}

/* perf picks the longer global alias; addr2line names the function */
__attribute__((noinline)) int quirk_impl(int x)
{
	return fixture_external(x) + 7;
}

extern int quirk_public_alias(int x) __attribute__((alias("quirk_impl")));
