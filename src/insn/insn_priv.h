/* Private to src/insn: the opcode maps of tables.c, which decode.c walks. */
#ifndef PS_INSN_INSN_PRIV_H
#define PS_INSN_INSN_PRIV_H

#include "insn/insn.h"

/* VEX.mmmmm (EVEX.mmm) values with a map; 256 characters each (see
 * tables.c for what they mean), NULL for none. */
#define PS_INSN_VEX_MAPS 8

/* the one-byte map */
extern const char *const ps_insn_primary_map;
/* 0F, 0F 38 and 0F 3A, by last legacy prefix: none, 66, F3, F2 */
extern const char *const ps_insn_escape_maps[3][4];
/* by map and VEX.pp (none, 66, F3, F2) */
extern const char *const ps_insn_vex_maps[PS_INSN_VEX_MAPS][4];
/* A group: map 0 is the one-byte map, 1-3 the escapes (legacy) or the
 * VEX maps of those numbers; entries holds 32 characters, 4 prefixes by
 * ModRM.reg 0-7. The list ends with entries NULL. */
struct ps_insn_group {
	uint8_t map;
	bool vex;
	uint8_t opcode;
	const char *entries;
};
extern const struct ps_insn_group ps_insn_groups[];

#endif /* PS_INSN_INSN_PRIV_H */
