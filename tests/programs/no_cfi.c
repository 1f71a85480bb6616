/* no_cfi: a program built without unwind tables (-fno-asynchronous-unwind-tables
 * -fno-unwind-tables), so .eh_frame describes none of its own functions and
 * Debian perf's libunwind unwinds them with its frame-chain guess.
 *
 * Most of its time goes to two loops:
 *  - descend(): a chain of frame-pointer frames, walked by the guess down
 *    to libc's CFI;
 *  - spin_on_fake_frame() (x86_64): its frame pointer points at a fake
 *    frame on the stack whose return address lies in this program's
 *    writable data, as a stale value taken for a return address does.
 *    perf shows that frame (`data_target+0x7`) and ends the stack there;
 *    the data segment's mapping starts at a file offset whose distance
 *    from its address is not the text's.
 *
 * Usage: no_cfi [SECONDS] (default 0.3, each loop half of it).
 */
#include <stdlib.h>
#include <time.h>

unsigned long data_target[4];
static volatile unsigned long sink;

static double seconds_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

__attribute__((noinline)) static void descend(int depth)
{
	if (depth > 0) {
		descend(depth - 1);
		sink++;
		return;
	}
	for (int i = 0; i < 20000; i++)
		sink += (unsigned long)i * 7u;
}

#if defined(__x86_64__)
/* rdi: iterations, rsi: the fake frame {saved rbp, return address} */
void spin_on_fake_frame(unsigned long iterations, unsigned long *frame);
__asm__(".text\n"
        ".globl spin_on_fake_frame\n"
        ".type spin_on_fake_frame, @function\n"
        "spin_on_fake_frame:\n"
        "\tpush %rbp\n"
        "\tmov %rsi, %rbp\n"
        "1:\tdec %rdi\n"
        "\tjnz 1b\n"
        "\tpop %rbp\n"
        "\tret\n"
        ".size spin_on_fake_frame, .-spin_on_fake_frame\n");

__attribute__((noinline)) static void fake_frame_loop(void)
{
	/* above the spinning frame's stack pointer, as a caller's frame is */
	volatile unsigned long frame[2];

	frame[0] = 0;
	frame[1] = (unsigned long)&data_target[1];
	spin_on_fake_frame(2000000, (unsigned long *)frame);
}
#else
static void fake_frame_loop(void)
{
	descend(3);
}
#endif

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.3;
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (seconds_since(&start) < seconds / 2)
		descend(12);
	while (seconds_since(&start) < seconds)
		fake_frame_loop();
	return 0;
}
