/* x86 machine instructions as perf 6.1 decodes them for perf script: the
 * length of the instruction at an address (-F insn, insnlen: perf reads
 * the sampled instruction from the object's file and decodes it with the
 * kernel's instruction decoder, tools/arch/x86/lib/insn.c and its opcode
 * map), and whether it is a branch (the brstackinsn listing stops at an
 * unexpected one). Lengths are those of perf's decoder, not of a CPU:
 * where its map has no entry for a VEX or EVEX instruction (FMA4, XOP)
 * or reads one differently, so does this module.
 *
 * The interface of src/insn to the other modules (see
 * docs/architecture.md for the header rule).
 */
#ifndef PS_INSN_INSN_H
#define PS_INSN_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* perf's MAX_INSN: the bytes it reads for the sampled instruction */
#define PS_INSN_MAX 16

struct ps_insn {
	uint8_t length; /* 1 to 15 */
	/* perf's arch_is_branch(): a jump, call, return, loop, interrupt or
	 * system call (the opcode, not VEX-encoded) */
	bool branch;
};

/* Decode the instruction at code (size bytes readable; at most 15 are
 * looked at) in 64-bit mode or, with x86_64 false, 32-bit mode. false
 * when perf's decoder fails: bytes it refuses, or an instruction longer
 * than size. */
bool ps_insn_decode(const uint8_t *code, size_t size, bool x86_64, struct ps_insn *out);

#endif /* PS_INSN_INSN_H */
