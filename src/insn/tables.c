/* The x86 opcode maps as perf 6.1's instruction decoder has them (its
 * x86-opcode-map.txt: the Intel SDM's opcode tables with perf's own
 * omissions), reduced to what decides an instruction's length and whether
 * it decodes at all. One character per opcode, 32 opcodes a line:
 *   .  nothing follows the opcode (also: opcodes the map leaves empty)
 *   m  a ModRM byte (then SIB and displacement as it says)
 *   b, w  an 8-bit, 16-bit immediate;  B  ModRM and an 8-bit immediate
 *   z  a 16- or 32-bit immediate by operand size (Iz);  Z  ModRM and Iz
 *   j  Iz of an instruction whose operand size is 64 bits in 64-bit mode
 *      (near jumps and calls): 32 bits there whatever 66 says
 *   v  a 16-, 32- or 64-bit immediate by operand size (Iv)
 *   p  a far pointer (16:16 or 16:32; none in 64-bit operand size)
 *   o  a memory offset of the address size (moffs)
 *   e  a 16-bit immediate and an 8-bit one (enter)
 *   :  a prefix;  ^  an escape to the next map;  *  a group (ModRM.reg
 *      picks the entry, see ps_insn_groups[])
 * C4, C5 and 62 are VEX and EVEX in 64-bit mode; elsewhere, unless the
 * next byte reads as a register ModRM, LES, LDS and BOUND (m).
 *   x  the decoder refuses it: in a legacy map, an instruction only VEX
 *      may encode; in a VEX map, one VEX may not encode
 * VEX maps only: 0 nothing follows, accepted with VEX; M and E as m and B,
 * but only with EVEX.
 * Legacy maps are given per last legacy prefix (none, 66, F3, F2) as the
 * decoder picks them; VEX maps per VEX.pp. */
#include "insn/insn_priv.h"

static const char primary_map[257] = "mmmmbz..mmmmbz.^mmmmbz..mmmmbz.." /* 00 */
                                     "mmmmbz:.mmmmbz:.mmmmbz:.mmmmbz:." /* 20 */
                                     "::::::::::::::::................" /* 40 */
                                     "..mm::::zZbB....bbbbbbbbbbbbbbbb" /* 60 */
                                     "****mmmmmmmmmmm*..........p....." /* 80 */
                                     "oooo....bz......bbbbbbbbvvvvvvvv" /* a0 */
                                     "**w.mm**e.w..b..****bb..mmmmmmmm" /* c0 */
                                     "bbbbbbbbjjpb....:.::..**......**" /* e0 */;

static const char escape1_none[257] = "**mm.........*.Bmmmmmmmm*.mm*.*m" /* 00 */
                                      "mmmm....mmmmmmmm........^.^....." /* 20 */
                                      "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm" /* 40 */
                                      "mmmmmmmmmmmm..mmB***mmm.mm....mm" /* 60 */
                                      "jjjjjjjjjjjjjjjjmmmmmmmmmmmmmmmm" /* 80 */
                                      "...mBm**...mBm*mmmmmmmmm.**mmmmm" /* a0 */
                                      "mmBmBBB*.........mmmmm.mmmmmmmmm" /* c0 */
                                      "mmmmmm.mmmmmmmmm.mmmmmmmmmmmmmm." /* e0 */;

static const char escape1_66[257] = "**mm.........*.Bmmmmmmmm*.mm*.*m" /* 00 */
                                    "mmmm....mmmmmmmm........^.^....." /* 20 */
                                    "mmmmmmmmmmmmmmmmmm..mmmmmmmmmmmm" /* 40 */
                                    "mmmmmmmmmmmmmmmmB***mmm.xxxxmmmm" /* 60 */
                                    "jjjjjjjjjjjjjjjjmmmmmmmmmmmmmmmm" /* 80 */
                                    "...mBm**...mBm*mmmmmmmmm.**mmmmm" /* a0 */
                                    "mmBmBBB*........mmmmmmmmmmmmmmmm" /* c0 */
                                    "mmmmmmmmmmmmmmmm.mmmmmmmmmmmmmm." /* e0 */;

static const char escape1_f3[257] = "**mm.........*.Bmmm...m.*.mm*.*m" /* 00 */
                                    "mmmm......m.mm..........^.^....." /* 20 */
                                    "m..m....mm..mmmm.mmm....mmmmmmmm" /* 40 */
                                    "...............mB***....xxxx..mm" /* 60 */
                                    "jjjjjjjjjjjjjjjj....mmmm..mmmmmm" /* 80 */
                                    "...mBm**...mBm*mmmmmmmmmm**mmmmm" /* a0 */
                                    "mmBm...*..............m........." /* c0 */
                                    "......m........................." /* e0 */;

static const char escape1_f2[257] = "**mm.........*.Bmmm.....*.mm*.*m" /* 00 */
                                    "mmmm......m.mm..........^.^....." /* 20 */
                                    "m..m....mm..mmmm.m......mmm.mmmm" /* 40 */
                                    "...............xB***....xxxxmm.x" /* 60 */
                                    "jjjjjjjjjjjjjjjj..mmmmmm..mmmmmm" /* 80 */
                                    "...mBm**...mBm*mmmmmmmmm.**mmmmm" /* a0 */
                                    "mmBm...*........m.....m........." /* c0 */
                                    "......m.........m..............." /* e0 */;

static const char escape2_none[257] = "mmmmmmmmmmmm................mmm." /* 00 */
                                      "................................" /* 20 */
                                      ".........m....................m." /* 40 */
                                      "................................" /* 60 */
                                      "................................" /* 80 */
                                      "................................" /* a0 */
                                      "......**mmmmmm.................." /* c0 */
                                      "................mmx*.xmx.m......" /* e0 */;

static const char escape2_66[257] = "mmmmmmmmmmmmxxxxmxxxmmxmxxxxmmmx" /* 00 */
                                    "mmmmmmxxmmmmxxxxmmmmmmxmmmmmmmmm" /* 20 */
                                    "mmxxxxxx.m.mxxxxmmmmxx..xxxx..m." /* 40 */
                                    "..xxxxx.........xxxx.xxxxxxxxxxx" /* 60 */
                                    "mmmx....xxxxxxxxxxxx..xxxxxxxxxx" /* 80 */
                                    "xxxx..xxxxxxxxxx....xxxxxxxxxxxx" /* a0 */
                                    "....x.**xmxxxx.m...........mmmmm" /* c0 */
                                    "................mmx*.mmxmm......" /* e0 */;

static const char escape2_f3[257] = "................xxxxxx.........." /* 00 */
                                    "xxxxxxxxxxx.....xxxxxx..xxx....." /* 20 */
                                    "...........x......x.........m.m." /* 40 */
                                    "..................x............." /* 60 */
                                    "................................" /* 80 */
                                    "................................" /* a0 */
                                    "......**.m......................" /* c0 */
                                    "..................x*.xmxmm......" /* e0 */;

static const char escape2_f2[257] = "................................" /* 00 */
                                    "................................" /* 20 */
                                    ".........m.m......xx..........m." /* 40 */
                                    "........x.........x............." /* 60 */
                                    "..........................xx...." /* 80 */
                                    "..........xx...................." /* a0 */
                                    "......**.m......................" /* c0 */
                                    "................mmx*.xxxmm......" /* e0 */;

static const char escape3_none[257] = "........B.B....B................" /* 00 */
                                      "......xx........................" /* 20 */
                                      "......................xx........" /* 40 */
                                      "......xx........................" /* 60 */
                                      "................................" /* 80 */
                                      "................................" /* a0 */
                                      "..x.........B..................." /* c0 */
                                      "................................" /* e0 */;

static const char escape3_66[257] = "xxxxxxx.BBBBBBBB....BBBBxxxx.xxx" /* 00 */
                                    "BBBx.xxx........xxxx....xxxx..xx" /* 20 */
                                    "BBBxB.x...xxB...xx..xxxx........" /* 40 */
                                    "BBBB..xx........xxxx............" /* 60 */
                                    "................................" /* 80 */
                                    "................................" /* a0 */
                                    "............B.BB...............B" /* c0 */
                                    "................................" /* e0 */;

static const char escape3_f3[257] = "................................" /* 00 */
                                    "................................" /* 20 */
                                    "................................" /* 40 */
                                    "................................" /* 60 */
                                    "................................" /* 80 */
                                    "................................" /* a0 */
                                    "..x.........B..................." /* c0 */
                                    "................B..............." /* e0 */;

static const char escape3_f2[257] = "................................" /* 00 */
                                    "................................" /* 20 */
                                    "................................" /* 40 */
                                    "................................" /* 60 */
                                    "................................" /* 80 */
                                    "................................" /* a0 */
                                    "............B..................." /* c0 */
                                    "................x..............." /* e0 */;

static const char vex1_none[257] = "**xxxxxxxxxxx*xxmmmmmmmm*xxx*x*x" /* 00 */
                                   "xxxxxxxxmmxmxxmmxxxxxxxxxxxxxxxx" /* 20 */
                                   "xmmxmmmmxxmmxxxxmmmmmmmmmmmmmmmm" /* 40 */
                                   "xxxxxxxxxxxxxxxxx***xxx0mmxxxxxx" /* 60 */
                                   "xxxxxxxxxxxxxxxxmmmmxxxxmmxxxxxx" /* 80 */
                                   "xxxxxx**xxxxxx*xxxxxxxxxx**xxxxx" /* a0 */
                                   "xxBxxxB*xxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* e0 */;

static const char vex1_66[257] = "**xxxxxxxxxxx*xxmmmmmmmm*xxx*x*x" /* 00 */
                                 "xxxxxxxxmmxmxxmmxxxxxxxxxxxxxxxx" /* 20 */
                                 "xmmxmmmmxxmmxxxxmmxxmmmmmmmmmmmm" /* 40 */
                                 "mmmmmmmmmmmmmmmmB***mmmxMMMMmmmm" /* 60 */
                                 "xxxxxxxxxxxxxxxxmmmmxxxxmmxxxxxx" /* 80 */
                                 "xxxxxx**xxxxxx*xxxxxxxxxx**xxxxx" /* a0 */
                                 "xxBxBBB*xxxxxxxxmmmmmmmmmmmmmmmm" /* c0 */
                                 "mmmmmmmmmmmmmmmmxmmmmmmmmmmmmmmx" /* e0 */;

static const char vex1_f3[257] = "**xxxxxxxxxxx*xxmmmxxxmx*xxx*x*x" /* 00 */
                                 "xxxxxxxxxxmxmmxxxxxxxxxxxxxxxxxx" /* 20 */
                                 "xxxxxxxxxxxxxxxxxmmmxxxxmmmmmmmm" /* 40 */
                                 "xxxxxxxxxxxxxxxmB***xxxxMMMMxxmm" /* 60 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                 "xxxxxx**xxxxxx*xxxxxxxxxx**xxxxx" /* a0 */
                                 "xxBxxxx*xxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                 "xxxxxxmxxxxxxxxxxxxxxxxxxxxxxxxx" /* e0 */;

static const char vex1_f2[257] = "**xxxxxxxxxxx*xxmmmxxxxx*xxx*x*x" /* 00 */
                                 "xxxxxxxxxxmxmmxxxxxxxxxxxxxxxxxx" /* 20 */
                                 "xxxxxxxxxxxxxxxxxmxxxxxxmmmxmmmm" /* 40 */
                                 "xxxxxxxxxxxxxxxMB***xxxxMMMMmmxM" /* 60 */
                                 "xxxxxxxxxxxxxxxxxxmmxxxxxxxxxxxx" /* 80 */
                                 "xxxxxx**xxxxxx*xxxxxxxxxx**xxxxx" /* a0 */
                                 "xxBxxxx*xxxxxxxxmxxxxxxxxxxxxxxx" /* c0 */
                                 "xxxxxxmxxxxxxxxxmxxxxxxxxxxxxxxx" /* e0 */;

static const char vex2_none[257] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 00 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 20 */
                                   "xxxxxxxxxmxxxxxxxxxxxxxxxxxxxxmx" /* 40 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 60 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                   "xxxxxx**xxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                   "xxxxxxxxxxxxxxxxxxm*xmxmxxxxxxxx" /* e0 */;

static const char vex2_66[257] = "mmmmmmmmmmmmmmmmmMMmmmmmmmmMmmmM" /* 00 */
                                 "mmmmmmMMmmmmmmmmmmmmmmmmmmmmmmmm" /* 20 */
                                 "mmMMMmmmxmxmMMMMmmmmMMxxmmmMxxmx" /* 40 */
                                 "xxMMMMMxxxxxxxxxMMMMxMMMmmMMMMMM" /* 60 */
                                 "xxxMxxxxMMMMmMmMmmmmxxmmmmmmmmmm" /* 80 */
                                 "MMMMxxmmmmmmmmmmxxxxMMmmmmmmmmmm" /* a0 */
                                 "xxxxMx**MxMMMMxmxxxxxxxxxxxmmmmm" /* c0 */
                                 "xxxxxxxxxxxxxxxxxxx*xxxmxxxxxxxx" /* e0 */;

static const char vex2_f3[257] = "xxxxxxxxxxxxxxxxMMMMMMxxxxxxxxxx" /* 00 */
                                 "MMMMMMMMMMMxxxxxMMMMMMxxMMMxxxxx" /* 20 */
                                 "xxxxxxxxxxxmxxxxxxMxxxxxxxxxmxmx" /* 40 */
                                 "xxxxxxxxxxxxxxxxxxMxxxxxxxxxxxxx" /* 60 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                 "xxxxxx**xxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                 "xxxxxxxxxxxxxxxxxxx*xmxmxxxxxxxx" /* e0 */;

static const char vex2_f2[257] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 00 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 20 */
                                 "xxxxxxxxxmxmxxxxxxMMxxxxxxxxxxmx" /* 40 */
                                 "xxxxxxxxMxxxxxxxxxMxxxxxxxxxxxxx" /* 60 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxMMxxxx" /* 80 */
                                 "xxxxxxxxxxMMxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                 "xxxxxx**xxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                 "xxxxxxxxxxxxxxxxxxx*xmmmxxxxxxxx" /* e0 */;

static const char vex3_none[257] = "xxxxxxxxBxBxxxxxxxxxxxxxxxxxxxxx" /* 00 */
                                   "xxxxxxEExxxxxxxxxxxxxxxxxxxxxxxx" /* 20 */
                                   "xxxxxxxxxxxxxxxxxxxxxxEExxxxxxxx" /* 40 */
                                   "xxxxxxEExxxxxxxxxxxxxxxxxxxxxxxx" /* 60 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                   "xxExxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* e0 */;

static const char vex3_66[257] = "BBBEBBBxBBBBBBBBxxxxBBBBBBEExBEE" /* 00 */
                                 "BBBExEEExxxxxxxxBBBBxxxxBBEExxEE" /* 20 */
                                 "BBBEBxBxxxBBBxxxEExxEEEExxxxxxxx" /* 40 */
                                 "BBBBxxEExxxxxxxxEEEExxxxxxxxxxxx" /* 60 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                 "xxxxxxxxxxxxxxBBxxxxxxxxxxxxxxxB" /* c0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* e0 */;

static const char vex3_f3[257] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 00 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 20 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 40 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 60 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                 "xxExxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* e0 */;

static const char vex3_f2[257] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 00 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 20 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 40 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 60 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                 "xxxxxxxxxxxxxxxxBxxxxxxxxxxxxxxx" /* e0 */;

static const char vex5_none[257] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxMxx" /* 00 */
                                   "xxxxxxxxxxxxxxMMxxxxxxxxxxxxxxxx" /* 20 */
                                   "xxxxxxxxxxxxxxxxxMxxxxxxMMMMMMMM" /* 40 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxMMxxMMxx" /* 60 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* e0 */;

static const char vex5_66[257] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxMxx" /* 00 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 20 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxMMxxxx" /* 40 */
                                 "xxxxxxxxxxxxxxMxxxxxxxxxMMMMMMMx" /* 60 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* e0 */;

static const char vex5_f3[257] = "xxxxxxxxxxxxxxxxMMxxxxxxxxxxxxxx" /* 00 */
                                 "xxxxxxxxxxMxMMxxxxxxxxxxxxxxxxxx" /* 20 */
                                 "xxxxxxxxxxxxxxxxxMxxxxxxMMMMMMMM" /* 40 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxMMxMxMxx" /* 60 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* e0 */;

static const char vex5_f2[257] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 00 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 20 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxMxxxxx" /* 40 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxMxxMxx" /* 60 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* e0 */;

static const char vex6_none[257] = "xxxxxxxxxxxxxxxxxxxMxxxxxxxxxxxx" /* 00 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 20 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 40 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 60 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* e0 */;

static const char vex6_66[257] = "xxxxxxxxxxxxxxxxxxxMxxxxxxxxxxxx" /* 00 */
                                 "xxxxxxxxxxxxMMxxxxxxxxxxxxxxxxxx" /* 20 */
                                 "xxMMxxxxxxxxMMMMxxxxxxxxxxxxxxxx" /* 40 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 60 */
                                 "xxxxxxxxxxxxxxxxxxxxxxMMMMMMMMMM" /* 80 */
                                 "xxxxxxMMMMMMMMMMxxxxxxMMMMMMMMMM" /* a0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* c0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* e0 */;

static const char vex6_f3[257] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 00 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 20 */
                                 "xxxxxxxxxxxxxxxxxxxxxxMMxxxxxxxx" /* 40 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 60 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* 80 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* a0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxMMxxxxxxxx" /* c0 */
                                 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" /* e0 */;

const char *const ps_insn_primary_map = primary_map;

const char *const ps_insn_escape_maps[3][4] = {
	{ escape1_none, escape1_66, escape1_f3, escape1_f2 },
	{ escape2_none, escape2_66, escape2_f3, escape2_f2 },
	{ escape3_none, escape3_66, escape3_f3, escape3_f2 },
};

const char *const ps_insn_vex_maps[PS_INSN_VEX_MAPS][4] = {
	[0] = { NULL, NULL, NULL, NULL },
	[1] = { vex1_none, vex1_66, vex1_f3, vex1_f2 },
	[2] = { vex2_none, vex2_66, vex2_f3, vex2_f2 },
	[3] = { vex3_none, vex3_66, vex3_f3, vex3_f2 },
	[4] = { NULL, NULL, NULL, NULL },
	[5] = { vex5_none, vex5_66, vex5_f3, vex5_f2 },
	[6] = { vex6_none, vex6_66, vex6_f3, vex6_f3 },
	[7] = { NULL, NULL, NULL, NULL },
};

/* The groups: per last prefix (none, 66, F3, F2; with VEX, VEX.pp), the
 * entries of ModRM.reg 0-7, with what the group's opcode itself brings
 * (the immediate of 80-83, C0, C1, C6, C7, 0F BA). Legacy groups not
 * listed are "m" throughout; VEX groups not listed refuse everything.
 * With VEX, n and C are m and B that VEX may encode, x one it may not. */
const struct ps_insn_group ps_insn_groups[] = {
	{ 0, false, 0x80, "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB" },
	{ 0, false, 0x81, "ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ" },
	{ 0, false, 0x82, "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB" },
	{ 0, false, 0x83, "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB" },
	{ 0, false, 0xc0, "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB" },
	{ 0, false, 0xc1, "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB" },
	{ 0, false, 0xc6, "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB" },
	{ 0, false, 0xc7, "ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ" },
	{ 0, false, 0xf6, "BBmmmmmmBBmmmmmmBBmmmmmmBBmmmmmm" },
	{ 0, false, 0xf7, "ZZmmmmmmZZmmmmmmZZmmmmmmZZmmmmmm" },
	{ 1, false, 0x71, "mmBmBmBmmmBmBmBmmmmmmmmmmmmmmmmm" },
	{ 1, false, 0x72, "mmBmBmBmBBBmBmBmmmmmmmmmmmmmmmmm" },
	{ 1, false, 0x73, "mmBmmmBmmmBBmmBBmmmmmmmmmmmmmmmm" },
	{ 1, false, 0xba, "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB" },
	{ 1, true, 0x71, "xxxxxxxxxxCxCxCxxxxxxxxxxxxxxxxx" },
	{ 1, true, 0x72, "xxxxxxxxCCCxCxCxxxxxxxxxxxxxxxxx" },
	{ 1, true, 0x73, "xxxxxxxxxxCCxxCCxxxxxxxxxxxxxxxx" },
	{ 1, true, 0xae, "xxnnxxxxxxxxxxxxxxxxxxxxxxxxxxxx" },
	{ 2, true, 0xc6, "xxxxxxxxxnnxxnnxxxxxxxxxxxxxxxxx" },
	{ 2, true, 0xc7, "xxxxxxxxxnnxxnnxxxxxxxxxxxxxxxxx" },
	{ 2, true, 0xf3, "xnnnxxxxxnnnxxxxxnnnxxxxxnnnxxxx" },
	{ 0, false, 0, NULL },
};
