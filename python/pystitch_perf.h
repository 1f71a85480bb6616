/*
 * What the two files of _pystitch_perf share: pystitch_perf.c (the module, and on CPython
 * 3.8-3.11 its perf-map trampolines) and pystitch_perf_lines.c (the side file of code objects
 * that gives pystitch the line of every Python frame).
 */
#ifndef PYSTITCH_PERF_H
#define PYSTITCH_PERF_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

/*
 * The side file, /tmp/perf-PID.pylines, next to the perf map: for every code object the
 * module sees, where its bytecode is in memory, its line table and first line, its name and
 * file as the perf map names it, the trampoline that runs it (when known) and the
 * CLOCK_MONOTONIC times it was seen and freed. All little-endian, as the machine writes:
 *
 *   header (32 bytes): "PYSTLINE", u32 version (1), u32 header size (32), u32 PY_VERSION_HEX,
 *                      u32 pid, u32 flags (bit 0: the trampolines are this module's), u32 0
 *   record: u16 type, u16 0, u32 size (of the whole record, a multiple of 8), u64 time (ns),
 *           then by type:
 *     1 code:       u64 code object, u64 first code unit, u32 bytecode bytes, i32 first line,
 *                   u32 table format (1 co_lnotab, 2 the 3.10 co_linetable, 3 the 3.11+
 *                   location table), u32 table bytes, u32 name bytes, u32 file bytes, then the
 *                   table, the name and the file (UTF-8), zero padding
 *     2 trampoline: u64 code object, u64 trampoline address (3.8-3.11: with the code
 *                   record; 3.12+: when CPython's trampoline is known, at the code
 *                   object's freeing and for those alive at exit)
 *     3 free:       u64 code object
 *     4 copy:       u64 code object, u64 first code unit of a copy of its bytecode (3.14+
 *                   free-threaded: each thread but the first runs a copy of its own,
 *                   CPython's thread-local bytecode; written when the code object is freed
 *                   and for those alive at exit, for the copies there are then)
 *
 * Each record is written with one write(), so that a process killed at any moment leaves whole
 * records. A file that cannot be written is given up; the program runs on.
 */
#define LINES_MAGIC "PYSTLINE"
#define LINES_VERSION 1
#define LINES_HEADER_SIZE 32
#define LINES_FLAG_OWN_TRAMPOLINES 1u

enum lines_record {
	LINES_RECORD_CODE = 1,
	LINES_RECORD_TRAMPOLINE = 2,
	LINES_RECORD_FREE = 3,
	LINES_RECORD_COPY = 4,
};

enum lines_table_format {
	LINES_TABLE_LNOTAB = 1,
	LINES_TABLE_310 = 2,
	LINES_TABLE_311 = 3,
};

/* Open the side file of this process (again after a fork: a copy of the parent's); 0, or -1
 * with a Python exception set. own_trampolines: the map's trampolines are this module's. */
int lines_open(bool own_trampolines);
/* Whether the side file is being written. */
bool lines_active(void);
/* Before a record in a process that forked without os.fork() telling the module. */
void lines_follow_fork(void);
/* A code object seen, with its trampoline (0: not known); never raises. */
void lines_code(PyCodeObject *code, uintptr_t trampoline);
void lines_free(uintptr_t code);
/* 3.12+: watch code objects being made and freed, after writing those that exist (0, or -1
 * with an exception set); and stop watching. */
int lines_watch(void);
void lines_unwatch(void);
bool lines_watching(void);
/* 3.12+: a trampoline record for every code object alive that CPython gave a trampoline, and
 * a copy record for every copy of their bytecode (at exit: those freed before wrote theirs
 * then). 0, or -1 with an exception set. */
int lines_trampolines(void);
/* Counters for the tests: a dict. */
PyObject *lines_stats(void);

/* UTF-8 of a str, lone surrogates as backslash escapes; "?" for anything else. A new
 * reference to a bytes object, or NULL with an exception set. */
PyObject *pystitch_utf8_bytes(PyObject *text);

/*
 * The module's process-wide state (the side file, the watcher, the registrations' flags) is
 * under the GIL. A free-threaded CPython (3.13+ built with --disable-gil) runs code watchers
 * and module functions on several threads at once, and would turn the GIL on for the whole
 * program at the import of a module that does not say it can do without: there the state is
 * under a mutex of the module's own, held around the state and the writing of records only,
 * never across Python code (which could wait on a thread that waits on the mutex). The
 * thread holding it may take it again (the code watcher writes its records through the same
 * functions). Elsewhere these do nothing.
 */
#ifdef Py_GIL_DISABLED
void pystitch_lock(void);
void pystitch_unlock(void);
#else
static inline void pystitch_lock(void)
{
}
static inline void pystitch_unlock(void)
{
}
#endif

#endif /* PYSTITCH_PERF_H */
