/* The python module: what pystitch knows about CPython processes.
 *  - frame-name sources written while the program ran: perf maps
 *    (perf-PID.map) and jitdumps (jit-PID.dump), with the unwind rules of
 *    the trampolines they describe;
 *  - CPython detection, version, per-version struct offsets, and the scan
 *    of a stack copy for the interpreter's entry/stub frames;
 *  - the merger of native and Python frames.
 * Each section below is owned by one part of the module.
 */
#ifndef PS_PYTHON_PYTHON_H
#define PS_PYTHON_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pystitch/pystitch.h"

/* ==== section: frame-name sources (perfmap.c, jitdump.c) ============ */

/* ==== end section: frame-name sources =============================== */

/* ==== section: trampolines (trampoline.c) =========================== */

/* ==== end section: trampolines ====================================== */

/* ==== section: interpreter (detect.c, offsets.c, stubs.c, merge.c) == */

/* ==== end section: interpreter ====================================== */

#endif /* PS_PYTHON_PYTHON_H */
