/*
 * _pystitch_perf: what `-X perf` does on CPython 3.12, for CPython 3.7 to 3.11. A PEP 523
 * frame-evaluation hook runs each code object's frames through its own copy of one small
 * machine-code template and names that copy in /tmp/perf-PID.map (`ADDR SIZE py::NAME:FILE`),
 * so that perf and pystitch find a named native frame for every Python call.
 *
 * The template is exported as `_Py_trampoline_func_start`/`_Py_trampoline_func_end`, the
 * symbols CPython 3.12 uses for its own, and has the same shape, so that pystitch derives the
 * unwind rule of the copies by decoding it in this module as it does in libpython.
 *
 * Beside the map it writes /tmp/perf-PID.pylines (pystitch_perf_lines.c), the code objects'
 * bytecode ranges and line tables that give pystitch each Python frame's line; on 3.12+,
 * where CPython has trampolines of its own (-X perf), that side file is all the module does.
 */
#include "pystitch_perf.h"

#ifdef Py_GIL_DISABLED
#include <pthread.h>
#include <string.h>
#endif

#if PY_VERSION_HEX < 0x03070000
#error "pystitch_perf needs CPython 3.7 or newer (os.register_at_fork)"
#endif

/* 3.12 has its own trampolines (-X perf), beside which the module writes only its side file;
 * other machines have no template here. */
#if PY_VERSION_HEX < 0x030C0000 && defined(__x86_64__) && defined(__linux__)
#define PYSTITCH_PERF_SUPPORTED 1
#else
#define PYSTITCH_PERF_SUPPORTED 0
#endif

/* Whether os.register_at_fork() has the module's after-fork callback (process-wide, under the
 * GIL or pystitch_lock()). */
static bool fork_callback_registered;

/* A once-only registration's flag: read and set under pystitch_lock(), which is not held
 * across the registration (it runs Python code). */
static bool flag_get(const bool *flag)
{
	bool value;

	pystitch_lock();
	value = *flag;
	pystitch_unlock();
	return value;
}

static void flag_set(bool *flag)
{
	pystitch_lock();
	*flag = true;
	pystitch_unlock();
}

/* os.register_at_fork(after_in_child=module._after_fork_child), once. */
static int register_fork_callback(PyObject *module)
{
	if (flag_get(&fork_callback_registered))
		return 0;
	int result = -1;
	PyObject *os = PyImport_ImportModule("os");
	PyObject *register_at_fork = os ? PyObject_GetAttrString(os, "register_at_fork") : NULL;
	PyObject *callback =
	        register_at_fork ? PyObject_GetAttrString(module, "_after_fork_child") : NULL;
	PyObject *args = callback ? PyTuple_New(0) : NULL;
	PyObject *kwargs = args ? Py_BuildValue("{sO}", "after_in_child", callback) : NULL;
	PyObject *none = kwargs ? PyObject_Call(register_at_fork, args, kwargs) : NULL;
	if (none != NULL) {
		flag_set(&fork_callback_registered);
		result = 0;
	}
	Py_XDECREF(none);
	Py_XDECREF(kwargs);
	Py_XDECREF(args);
	Py_XDECREF(callback);
	Py_XDECREF(register_at_fork);
	Py_XDECREF(os);
	return result;
}

/* enable()'s lines argument: None (the default) takes PYSTITCH_PERF_LINES, which turns the side
 * file off when set to 0. 1, 0, or -1 with an exception set. */
static int lines_wanted(PyObject *args, PyObject *kwargs)
{
	static char *keywords[] = { "lines", NULL };
	PyObject *lines = Py_None;
	const char *env;

	if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:enable", keywords, &lines))
		return -1;
	if (lines != Py_None)
		return PyObject_IsTrue(lines);
	env = getenv("PYSTITCH_PERF_LINES");
	return !(env && strcmp(env, "0") == 0);
}

/* The module's counters and the side file's, in one dict (a new reference). */
static PyObject *stats_with_lines(PyObject *stats)
{
	PyObject *lines = stats ? lines_stats() : NULL;

	if (lines && PyDict_Update(stats, lines) != 0) {
		Py_DECREF(lines);
		lines = NULL;
	}
	Py_XDECREF(lines);
	if (!lines) {
		Py_XDECREF(stats);
		return NULL;
	}
	return stats;
}

#if PYSTITCH_PERF_SUPPORTED

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#endif
/* 3.8 keeps the interpreter state (eval_frame) and 3.11 the frame layout (f_code) in the
 * internal headers only, which refuse to be included without Py_BUILD_CORE. Everything
 * above was included without it, so only these two headers see it. */
#if PY_VERSION_HEX >= 0x03080000 && PY_VERSION_HEX < 0x03090000
#define Py_BUILD_CORE 1
#include <internal/pycore_pystate.h>
#elif PY_VERSION_HEX >= 0x030B0000
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#endif

/*
 * The template: trampoline(tstate, frame, throwflag, evaluator) calls evaluator(tstate, frame,
 * throwflag). It passes rdi, rsi and rdx through untouched and keeps the stack 16-byte aligned
 * for the callee. Copies of it carry no CFI; its one fixed shape (CFA = rsp + 16 at the return
 * site) is what pystitch decodes. The hidden aliases are what this file uses, so that the
 * interpreter's own `_Py_trampoline_func_start` (3.12+) could never be bound in their place.
 */
#if defined(__CET__) && (__CET__ & 1)
#define TEMPLATE_ENDBR "\tendbr64\n" /* copies are called indirectly */
#else
#define TEMPLATE_ENDBR ""
#endif
/* clang-format off */
__asm__(".pushsection .text\n"
	"\t.p2align 4\n"
	"\t.globl _Py_trampoline_func_start\n"
	"\t.type _Py_trampoline_func_start, @function\n"
	"\t.globl pystitch_perf_template_start\n"
	"\t.hidden pystitch_perf_template_start\n"
	"_Py_trampoline_func_start:\n"
	"pystitch_perf_template_start:\n"
	TEMPLATE_ENDBR
	"\tsub $8, %rsp\n"
	"\tcall *%rcx\n"
	"\tadd $8, %rsp\n"
	"\tret\n"
	"\t.globl _Py_trampoline_func_end\n"
	"\t.globl pystitch_perf_template_end\n"
	"\t.hidden pystitch_perf_template_end\n"
	"_Py_trampoline_func_end:\n"
	"pystitch_perf_template_end:\n"
	"\t.size _Py_trampoline_func_start, _Py_trampoline_func_end - _Py_trampoline_func_start\n"
	"\t.popsection\n");
/* clang-format on */
extern const unsigned char pystitch_perf_template_start[] __attribute__((visibility("hidden")));
extern const unsigned char pystitch_perf_template_end[] __attribute__((visibility("hidden")));

#if PY_VERSION_HEX >= 0x030B0000
typedef struct _PyInterpreterFrame eval_frame_type;
#else
typedef PyFrameObject eval_frame_type;
#endif

#if PY_VERSION_HEX >= 0x03090000
typedef PyObject *(*trampoline_entry)(PyThreadState *, eval_frame_type *, int,
                                      _PyFrameEvalFunction);
#else
/* The evaluator takes (frame, throwflag): the trampoline passes the registers through, so the
 * arguments move one place left and the third is unused. */
typedef PyObject *(*trampoline_entry)(eval_frame_type *, int, void *, _PyFrameEvalFunction);
#endif

/* One trampoline: a copy of the template and the name the perf map last gave it. A code
 * object holds it in its co_extra slot until it dies; then it is parked for reuse. */
struct trampoline {
	trampoline_entry entry; /* first: the hook reads only this */
	uintptr_t code; /* the code object it runs (0 while parked), for the side file */
	char *label; /* "py::NAME:FILENAME", NUL-terminated */
	size_t label_length;
	uint64_t label_hash;
	/* while parked */
	struct trampoline *bucket_next;
	struct trampoline *parked_prev, *parked_next;
};

/* A slot keeps its name while parked, and a code object with the same name and file takes it
 * back without a new map line, so the map never gives one address two names in that case
 * (exec'd or recompiled code that comes back). A new name takes the oldest parked slot,
 * named anew in the map, only beyond this many parked slots, which bounds what dead code
 * objects hold. */
#define PARKED_LIMIT 1024
#define PARKED_BUCKETS 1024 /* a power of two */
#define ARENA_SIZE (64 * 1024)

/*
 * Process-wide state. The hook and the co_extra free function receive no user pointer, so
 * they can only reach a static; arenas and the map file belong to the process anyway. Every
 * access is made holding the GIL (the hook, the free function, the module's functions and
 * the after-fork callback all run with it), which is what serialises them.
 */
static struct {
	PyInterpreterState *interpreter; /* the one enable() may hook */
	Py_ssize_t code_index; /* co_extra index, -1 before the first enable() */
	size_t template_size;
	size_t slot_size; /* template size rounded up to 16 */
	unsigned char *arena_next, *arena_end;
	pid_t arena_pid; /* the process arena_next belongs to */
	size_t arenas, slots;
	/* parked trampolines: hash buckets and a list, oldest first */
	struct trampoline **buckets;
	struct trampoline *parked_oldest, *parked_newest;
	size_t parked;
	/* the perf map */
	int map_fd;
	pid_t map_pid; /* the process map_fd was opened for */
	uint64_t map_bytes;
	size_t map_lines;
	int map_errno; /* why the map was given up, 0 if it was not */
} state = { .code_index = -1, .map_fd = -1 };

/* ---- executable arenas --------------------------------------------------- */

/* A new arena is filled with copies of the template while writable and then made executable,
 * never both: every slot is a ready trampoline from the start, so taking or reusing one
 * writes no code. The padding between copies is int3. */
static void *arena_take(void)
{
	/* After fork() parent and child would hand out the same free slots of
	 * the arena they share a copy of, under different names in their
	 * maps; perf names the copy after the parent. A child starts an arena
	 * of its own, mapped (and so named) in its own name. */
	pid_t pid = getpid();
	if (state.arena_pid != pid) {
		state.arena_next = state.arena_end = NULL;
		state.arena_pid = pid;
	}
	if (state.arena_next == NULL ||
	    (size_t)(state.arena_end - state.arena_next) < state.slot_size) {
		unsigned char *arena = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
		                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (arena == MAP_FAILED)
			return NULL;
		memset(arena, 0xcc, ARENA_SIZE);
		for (size_t offset = 0; offset + state.slot_size <= ARENA_SIZE;
		     offset += state.slot_size)
			memcpy(arena + offset, pystitch_perf_template_start, state.template_size);
		/* perf records the mapping when it becomes executable */
		if (mprotect(arena, ARENA_SIZE, PROT_READ | PROT_EXEC) != 0) {
			munmap(arena, ARENA_SIZE);
			return NULL;
		}
		state.arena_next = arena;
		state.arena_end = arena + ARENA_SIZE;
		state.arenas++;
	}
	void *slot = state.arena_next;
	state.arena_next += state.slot_size;
	state.slots++;
	return slot;
}

/* ---- the perf map ------------------------------------------------------- */

/* O_TRUNC: a map left by an earlier process with the same pid names other code. O_NOFOLLOW:
 * /tmp is shared, and the map must not be appended to a file a link points at. */
static int perf_map_open(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%ld.map", (long)pid);
	return open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
}

static int write_all(int fd, const char *data, size_t length)
{
	while (length > 0) {
		ssize_t written = write(fd, data, length);
		if (written < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		data += written;
		length -= (size_t)written;
	}
	return 0;
}

static void perf_map_give_up(int error)
{
	if (state.map_fd >= 0)
		close(state.map_fd);
	state.map_fd = -1;
	state.map_errno = error;
}

/* In a forked child, the map is still the parent's open file: the child gets a map of its own
 * holding the lines the parent had written when it forked (the child has all those
 * trampolines; later ones of the parent are not its own). Called by the after-fork callback
 * of os.fork() and, for forks that bypass it, before the child's first line. */
static void perf_map_follow_fork(void)
{
	pid_t pid = getpid();
	if (state.map_fd < 0 || state.map_pid == pid)
		return;
	int parent_fd = state.map_fd;
	int fd = perf_map_open(pid);
	int error = fd < 0 ? errno : 0;
	uint64_t copied = 0;
	char buffer[8192];
	while (error == 0 && copied < state.map_bytes) {
		size_t want = sizeof(buffer);
		if (state.map_bytes - copied < want)
			want = (size_t)(state.map_bytes - copied);
		ssize_t got = pread(parent_fd, buffer, want, (off_t)copied);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			error = got < 0 ? errno : EIO; /* the parent's map was cut short */
		else if (write_all(fd, buffer, (size_t)got) != 0)
			error = errno;
		else
			copied += (uint64_t)got;
	}
	close(parent_fd);
	state.map_fd = fd;
	state.map_pid = pid;
	state.map_bytes = copied;
	if (error != 0)
		perf_map_give_up(error);
}

/* Appends `ADDR SIZE LABEL` in one write, so that a process killed at any moment leaves whole
 * lines. A map that cannot be written is given up: trampolines go on working unnamed. */
static void perf_map_write(const struct trampoline *trampoline)
{
	if (state.map_fd >= 0 && state.map_pid != getpid())
		perf_map_follow_fork();
	if (state.map_fd < 0)
		return;
	size_t capacity = trampoline->label_length + 64;
	char *line = PyMem_RawMalloc(capacity);
	if (line == NULL)
		return; /* this line only; the next one may fit */
	int prefix = snprintf(line, capacity, "%lx %zx ",
	                      (unsigned long)(uintptr_t)trampoline->entry, state.template_size);
	if (prefix < 0 || (size_t)prefix + trampoline->label_length + 1 > capacity) {
		PyMem_RawFree(line);
		return;
	}
	memcpy(line + prefix, trampoline->label, trampoline->label_length);
	size_t length = (size_t)prefix + trampoline->label_length;
	line[length++] = '\n';
	if (write_all(state.map_fd, line, length) == 0) {
		state.map_bytes += length;
		state.map_lines++;
	} else {
		perf_map_give_up(errno);
	}
	PyMem_RawFree(line);
}

/* ---- labels ------------------------------------------------------------- */

/* "py::NAME:FILENAME" as CPython 3.12 writes it. NAME is co_qualname on 3.11; before, the
 * code object has no more than co_name. Control characters would break the line format.
 * Returns a PyMem_Raw buffer or NULL with an exception set. */
static char *label_new(PyCodeObject *code, size_t *length)
{
#if PY_VERSION_HEX >= 0x030B0000
	PyObject *name = pystitch_utf8_bytes(code->co_qualname);
#else
	PyObject *name = pystitch_utf8_bytes(code->co_name);
#endif
	PyObject *file = name ? pystitch_utf8_bytes(code->co_filename) : NULL;
	char *label = NULL;
	if (file != NULL) {
		size_t name_length = (size_t)PyBytes_GET_SIZE(name);
		size_t file_length = (size_t)PyBytes_GET_SIZE(file);
		*length = 4 + name_length + 1 + file_length;
		label = PyMem_RawMalloc(*length + 1);
		if (label == NULL) {
			PyErr_NoMemory();
		} else {
			memcpy(label, "py::", 4);
			memcpy(label + 4, PyBytes_AS_STRING(name), name_length);
			label[4 + name_length] = ':';
			memcpy(label + 5 + name_length, PyBytes_AS_STRING(file), file_length);
			label[*length] = '\0';
			for (size_t i = 0; i < *length; i++) {
				if ((unsigned char)label[i] < 0x20 || label[i] == 0x7f)
					label[i] = '?';
			}
		}
	}
	Py_XDECREF(name);
	Py_XDECREF(file);
	return label;
}

static uint64_t label_hash(const char *label, size_t length)
{
	uint64_t hash = 0xcbf29ce484222325u; /* FNV-1a */
	for (size_t i = 0; i < length; i++) {
		hash ^= (unsigned char)label[i];
		hash *= 0x100000001b3u;
	}
	return hash;
}

/* ---- parking ------------------------------------------------------------ */

static void parked_add(struct trampoline *trampoline)
{
	struct trampoline **bucket = &state.buckets[trampoline->label_hash & (PARKED_BUCKETS - 1)];
	trampoline->bucket_next = *bucket;
	*bucket = trampoline;
	trampoline->parked_next = NULL;
	trampoline->parked_prev = state.parked_newest;
	if (state.parked_newest != NULL)
		state.parked_newest->parked_next = trampoline;
	else
		state.parked_oldest = trampoline;
	state.parked_newest = trampoline;
	state.parked++;
}

static void parked_remove(struct trampoline *trampoline)
{
	struct trampoline **link = &state.buckets[trampoline->label_hash & (PARKED_BUCKETS - 1)];
	while (*link != trampoline)
		link = &(*link)->bucket_next;
	*link = trampoline->bucket_next;
	if (trampoline->parked_prev != NULL)
		trampoline->parked_prev->parked_next = trampoline->parked_next;
	else
		state.parked_oldest = trampoline->parked_next;
	if (trampoline->parked_next != NULL)
		trampoline->parked_next->parked_prev = trampoline->parked_prev;
	else
		state.parked_newest = trampoline->parked_prev;
	trampoline->bucket_next = trampoline->parked_prev = trampoline->parked_next = NULL;
	state.parked--;
}

static struct trampoline *parked_find(const char *label, size_t length, uint64_t hash)
{
	struct trampoline *trampoline = state.buckets[hash & (PARKED_BUCKETS - 1)];
	for (; trampoline != NULL; trampoline = trampoline->bucket_next) {
		if (trampoline->label_hash == hash && trampoline->label_length == length &&
		    memcmp(trampoline->label, label, length) == 0)
			return trampoline;
	}
	return NULL;
}

/* The co_extra free function: the code object died (or its extra was replaced). */
static void trampoline_release(void *extra)
{
	struct trampoline *trampoline = extra;

	if (trampoline == NULL)
		return;
	lines_free(trampoline->code);
	trampoline->code = 0;
	parked_add(trampoline);
}

/* ---- trampolines -------------------------------------------------------- */

/* A trampoline named LABEL (whose ownership passes here), with its map line written. */
static struct trampoline *trampoline_take(char *label, size_t length)
{
	uint64_t hash = label_hash(label, length);
	struct trampoline *trampoline = parked_find(label, length, hash);
	if (trampoline != NULL) {
		parked_remove(trampoline); /* its map line still holds */
		PyMem_RawFree(label);
		return trampoline;
	}
	if (state.parked > PARKED_LIMIT) {
		trampoline = state.parked_oldest;
		parked_remove(trampoline);
		PyMem_RawFree(trampoline->label);
	} else {
		trampoline = PyMem_RawCalloc(1, sizeof(*trampoline));
		if (trampoline == NULL) {
			PyMem_RawFree(label);
			return NULL;
		}
		trampoline->entry = (trampoline_entry)arena_take();
		if (trampoline->entry == NULL) {
			PyMem_RawFree(trampoline);
			PyMem_RawFree(label);
			return NULL;
		}
	}
	trampoline->label = label;
	trampoline->label_length = length;
	trampoline->label_hash = hash;
	perf_map_write(trampoline);
	return trampoline;
}

/* The first call of a code object: give it a trampoline. The hook may run with an exception
 * set (a generator's throw()) and must not touch it, nor report its own failures to the
 * Python code it runs: on failure the frame runs without a trampoline, unnamed. */
static __attribute__((noinline)) struct trampoline *trampoline_for(PyCodeObject *code)
{
	PyObject *type, *value, *traceback;
	PyErr_Fetch(&type, &value, &traceback);
	struct trampoline *trampoline = NULL;
	size_t length;
	char *label = label_new(code, &length);
	if (label != NULL)
		trampoline = trampoline_take(label, length);
	if (trampoline != NULL &&
	    _PyCode_SetExtra((PyObject *)code, state.code_index, trampoline) != 0) {
		parked_add(trampoline);
		trampoline = NULL;
	}
	if (trampoline != NULL) {
		trampoline->code = (uintptr_t)code;
		lines_code(code, (uintptr_t)trampoline->entry);
	}
	PyErr_Clear();
	PyErr_Restore(type, value, traceback);
	return trampoline;
}

/* ---- the hook ----------------------------------------------------------- */

#if PY_VERSION_HEX >= 0x03090000
static PyObject *eval_hook(PyThreadState *tstate, eval_frame_type *frame, int throwflag)
#else
static PyObject *eval_hook(eval_frame_type *frame, int throwflag)
#endif
{
	void *extra = NULL;
	if (_PyCode_GetExtra((PyObject *)frame->f_code, state.code_index, &extra) != 0 ||
	    extra == NULL) {
		extra = trampoline_for(frame->f_code);
		if (extra == NULL) {
#if PY_VERSION_HEX >= 0x03090000
			return _PyEval_EvalFrameDefault(tstate, frame, throwflag);
#else
			return _PyEval_EvalFrameDefault(frame, throwflag);
#endif
		}
	}
	trampoline_entry entry = ((struct trampoline *)extra)->entry;
#if PY_VERSION_HEX >= 0x03090000
	return entry(tstate, frame, throwflag, _PyEval_EvalFrameDefault);
#else
	return entry(frame, throwflag, NULL, _PyEval_EvalFrameDefault);
#endif
}

static PyInterpreterState *current_interpreter(void)
{
#if PY_VERSION_HEX >= 0x03090000
	return PyInterpreterState_Get();
#else
	return PyThreadState_Get()->interp;
#endif
}

/* The evaluator installed, the default one when none is (3.11 keeps NULL for it). */
static _PyFrameEvalFunction evaluator_of(PyInterpreterState *interpreter)
{
#if PY_VERSION_HEX >= 0x03090000
	return _PyInterpreterState_GetEvalFrameFunc(interpreter);
#else
	return interpreter->eval_frame ? interpreter->eval_frame : _PyEval_EvalFrameDefault;
#endif
}

static void install_evaluator(PyInterpreterState *interpreter, _PyFrameEvalFunction evaluator)
{
#if PY_VERSION_HEX >= 0x03090000
	_PyInterpreterState_SetEvalFrameFunc(interpreter, evaluator);
#else
	interpreter->eval_frame = evaluator;
#endif
}

static PyObject *module_enable(PyObject *module, PyObject *args, PyObject *kwargs)
{
	int lines = lines_wanted(args, kwargs);
	if (lines < 0)
		return NULL;
	PyInterpreterState *interpreter = current_interpreter();
	_PyFrameEvalFunction current = evaluator_of(interpreter);
	if (current == eval_hook) {
		if (lines && lines_open(true) != 0)
			return NULL;
		Py_RETURN_NONE;
	}
	if (state.interpreter != NULL && state.interpreter != interpreter) {
		PyErr_SetString(PyExc_RuntimeError,
		                "already enabled in another interpreter of this process; "
		                "pystitch_perf works in one interpreter only");
		return NULL;
	}
	if (current != _PyEval_EvalFrameDefault) {
		PyErr_SetString(PyExc_RuntimeError,
		                "another frame evaluation function (PEP 523) is installed, "
		                "by a debugger or a JIT; pystitch_perf cannot run alongside it");
		return NULL;
	}
	if (register_fork_callback(module) != 0)
		return NULL;
	if (state.buckets == NULL) {
		state.buckets = PyMem_RawCalloc(PARKED_BUCKETS, sizeof(*state.buckets));
		if (state.buckets == NULL)
			return PyErr_NoMemory();
	}
	if (state.code_index < 0) {
		Py_ssize_t index = _PyEval_RequestCodeExtraIndex(trampoline_release);
		if (index < 0) {
			if (!PyErr_Occurred())
				PyErr_SetString(PyExc_RuntimeError,
				                "no code-object extra slot left for pystitch_perf");
			return NULL;
		}
		state.code_index = index;
		state.interpreter = interpreter;
		state.template_size = (size_t)((uintptr_t)pystitch_perf_template_end -
		                               (uintptr_t)pystitch_perf_template_start);
		state.slot_size = (state.template_size + 15) & ~(size_t)15;
	}
	/* once per process: disable() and enable() again go on with the same map */
	if (state.map_pid != getpid() && state.map_errno == 0) {
		if (state.map_fd >= 0) {
			perf_map_follow_fork();
		} else {
			pid_t pid = getpid();
			state.map_fd = perf_map_open(pid);
			if (state.map_fd < 0) {
				char path[64];
				snprintf(path, sizeof(path), "/tmp/perf-%ld.map", (long)pid);
				return PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
			}
			state.map_pid = pid;
			state.map_bytes = 0;
		}
	}
	if (lines && lines_open(true) != 0)
		return NULL;
	install_evaluator(interpreter, eval_hook);
	Py_RETURN_NONE;
}

static PyObject *module_disable(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	PyInterpreterState *interpreter = current_interpreter();
	/* an evaluator installed over ours is not ours to remove */
	if (evaluator_of(interpreter) == eval_hook)
		install_evaluator(interpreter, _PyEval_EvalFrameDefault);
	Py_RETURN_NONE;
}

static PyObject *module_is_enabled(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyBool_FromLong(evaluator_of(current_interpreter()) == eval_hook);
}

static PyObject *module_after_fork_child(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	perf_map_follow_fork();
	lines_follow_fork();
	Py_RETURN_NONE;
}

static PyObject *module_stats(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return stats_with_lines(Py_BuildValue(
	        "{snsnsnsnsnsKsisi}", "arenas", (Py_ssize_t)state.arenas, "slots",
	        (Py_ssize_t)state.slots, "parked", (Py_ssize_t)state.parked, "map_lines",
	        (Py_ssize_t)state.map_lines, "template_size", (Py_ssize_t)state.template_size,
	        "map_bytes", (unsigned long long)state.map_bytes, "map_fd_open", state.map_fd >= 0,
	        "map_errno", state.map_errno));
}

#elif PY_VERSION_HEX >= 0x030C0000 && defined(__linux__)

/* atexit.register(module._exit_trampolines), once: the trampolines of the code objects still
 * alive go to the side file while they are. */
static int register_exit(PyObject *module)
{
	static bool registered;
	PyObject *atexit, *callback, *none;

	if (flag_get(&registered))
		return 0;
	atexit = PyImport_ImportModule("atexit");
	callback = atexit ? PyObject_GetAttrString(module, "_exit_trampolines") : NULL;
	none = callback ? PyObject_CallMethod(atexit, "register", "O", callback) : NULL;
	if (none)
		flag_set(&registered);
	Py_XDECREF(none);
	Py_XDECREF(callback);
	Py_XDECREF(atexit);
	return none ? 0 : -1;
}

static PyObject *module_exit_trampolines(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	if (lines_trampolines() != 0)
		return NULL;
	Py_RETURN_NONE;
}

/* CPython 3.12+ has perf-map trampolines of its own (-X perf, sys.activate_stack_trampoline):
 * the module turns them on when they are not, and writes the side file beside them. */
static PyObject *module_enable(PyObject *module, PyObject *args, PyObject *kwargs)
{
	int lines = lines_wanted(args, kwargs);
	PyObject *sys, *active;

	if (lines < 0)
		return NULL;
	sys = PyImport_ImportModule("sys");
	active = sys ? PyObject_CallMethod(sys, "is_stack_trampoline_active", NULL) : NULL;
	if (active && !PyObject_IsTrue(active)) {
		PyObject *none = PyObject_CallMethod(sys, "activate_stack_trampoline", "s", "perf");

		if (!none) {
			Py_DECREF(active);
			active = NULL;
		}
		Py_XDECREF(none);
	}
	Py_XDECREF(sys);
	if (!active)
		return NULL;
	Py_DECREF(active);
	if (register_fork_callback(module) != 0)
		return NULL;
	if (lines && (lines_open(false) != 0 || lines_watch() != 0 || register_exit(module) != 0))
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *module_disable(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	lines_unwatch();
	Py_RETURN_NONE;
}

static PyObject *module_is_enabled(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyBool_FromLong(lines_watching());
}

static PyObject *module_after_fork_child(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	lines_follow_fork();
	Py_RETURN_NONE;
}

static PyObject *module_stats(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return stats_with_lines(PyDict_New());
}

#else /* neither: not x86-64 Linux */

static PyObject *module_enable(PyObject *module, PyObject *args, PyObject *kwargs)
{
	(void)module;
	(void)args;
	(void)kwargs;
	PyErr_SetString(PyExc_RuntimeError, "pystitch_perf works on x86-64 Linux only");
	return NULL;
}

static PyObject *module_disable(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	Py_RETURN_NONE;
}

static PyObject *module_is_enabled(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	Py_RETURN_FALSE;
}

static PyObject *module_after_fork_child(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	Py_RETURN_NONE;
}

static PyObject *module_stats(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyDict_New();
}

#endif

static PyMethodDef module_methods[] = {
	{ "enable", (PyCFunction)(void (*)(void))module_enable, METH_VARARGS | METH_KEYWORDS,
	  "enable(lines=None)\n--\n\nRun every Python function through a trampoline named in "
	  "/tmp/perf-PID.map (CPython 3.8-3.11: the module's own; 3.12+: CPython's -X perf ones, "
	  "turned on if they are not), and with lines write /tmp/perf-PID.pylines, the code "
	  "objects' line tables that give pystitch the line of each Python frame (None: unless "
	  "PYSTITCH_PERF_LINES=0). Enabling twice is harmless." },
	{ "disable", module_disable, METH_NOARGS,
	  "disable()\n--\n\nRestore the default frame evaluator (3.12+: stop watching code "
	  "objects). The map and the side file stay." },
	{ "is_enabled", module_is_enabled, METH_NOARGS,
	  "is_enabled()\n--\n\nWhether the trampolines (3.12+: the code watcher) are in use." },
	{ "_after_fork_child", module_after_fork_child, METH_NOARGS,
	  "Gives a forked child a perf map and side file of its own (registered with "
	  "os.register_at_fork)." },
	{ "_stats", module_stats, METH_NOARGS, "Counters, for tests." },
#if PY_VERSION_HEX >= 0x030C0000 && defined(__linux__)
	{ "_exit_trampolines", module_exit_trampolines, METH_NOARGS,
	  "Writes the trampolines of the code objects alive to the side file (registered with "
	  "atexit)." },
#endif
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_definition = {
	PyModuleDef_HEAD_INIT,
	"_pystitch_perf",
	"perf-map trampolines for Python frames (what -X perf does on CPython 3.12+)",
	-1,
	module_methods,
	NULL,
	NULL,
	NULL,
	NULL,
};

#ifdef Py_GIL_DISABLED
static PyMutex module_mutex;
/* how many times this thread holds module_mutex */
static _Thread_local unsigned lock_depth;

void pystitch_lock(void)
{
	if (lock_depth++ == 0)
		PyMutex_Lock(&module_mutex);
}

void pystitch_unlock(void)
{
	if (--lock_depth == 0)
		PyMutex_Unlock(&module_mutex);
}

/* In a forked child the thread that held the mutex is gone: it starts unlocked (before
 * anything in the child can run a watcher, which os.register_at_fork callbacks cannot
 * promise). */
static void unlock_in_child(void)
{
	/* (a fork with the lock held by the forking thread itself keeps it:
	 * the module runs no Python code with it) */
	if (lock_depth == 0)
		memset(&module_mutex, 0, sizeof(module_mutex));
}
#endif

PyMODINIT_FUNC PyInit__pystitch_perf(void)
{
	PyObject *module = PyModule_Create(&module_definition);

#ifdef Py_GIL_DISABLED
	static bool at_fork;

	/* a module that does not say so turns the GIL on for the whole program */
	if (module && PyUnstable_Module_SetGIL(module, Py_MOD_GIL_NOT_USED) != 0) {
		Py_DECREF(module);
		return NULL;
	}
	if (module && !at_fork) {
		if (pthread_atfork(NULL, NULL, unlock_in_child) != 0) {
			Py_DECREF(module);
			return PyErr_NoMemory();
		}
		at_fork = true;
	}
#endif
	return module;
}
