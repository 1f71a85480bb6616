/*
 * The side file of _pystitch_perf (format in pystitch_perf.h): what pystitch needs to turn the
 * instruction pointer of an eval-loop activation into a line, none of which perf.data holds:
 * each code object's bytecode address range and line table, as the module sees them. On
 * CPython 3.8-3.11 the module's frame hook reports each code object at its first call (with
 * its trampoline) and its death (the co_extra free function); on 3.12+, beside CPython's own
 * -X perf trampolines, a code watcher reports each code object made and freed, after a walk of
 * those that exist when it starts.
 */
#include "pystitch_perf.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#endif

/* Process-wide, under the GIL like the rest of the module (free-threaded: under
 * pystitch_lock()). */
static struct {
	int fd;
	pid_t pid; /* the process fd was opened for */
	uint64_t bytes;
	uint64_t codes, frees, trampolines, copies;
	int error; /* why the file was given up, 0 if it was not */
	bool own_trampolines;
	int watcher; /* 3.12+: the code watcher's id, -1 when not watching */
	/* 3.12+: the co_extra index where CPython keeps each code object's
	 * trampoline, -1 while not known */
	Py_ssize_t trampoline_index;
} side = { .fd = -1, .watcher = -1, .trampoline_index = -1 };

PyObject *pystitch_utf8_bytes(PyObject *text)
{
	PyObject *bytes;

	if (!text || !PyUnicode_Check(text))
		return PyBytes_FromString("?");
	bytes = PyUnicode_AsUTF8String(text);
	if (bytes == NULL) {
		PyErr_Clear();
		bytes = PyUnicode_AsEncodedString(text, "utf-8", "backslashreplace");
	}
	return bytes;
}

static uint64_t now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int write_all(int fd, const void *data, size_t length)
{
	const char *p = data;

	while (length > 0) {
		ssize_t written = write(fd, p, length);
		if (written < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += written;
		length -= (size_t)written;
	}
	return 0;
}

static void give_up(int error)
{
	if (side.fd >= 0)
		close(side.fd);
	side.fd = -1;
	side.error = error;
}

static void put_u16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* O_TRUNC: a file left by an earlier process with the same pid describes other code.
 * O_NOFOLLOW: /tmp is shared. */
static int open_file(pid_t pid)
{
	char path[64];
	unsigned char header[LINES_HEADER_SIZE] = { 0 };
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%ld.pylines", (long)pid);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	memcpy(header, LINES_MAGIC, 8);
	put_u32(header + 8, LINES_VERSION);
	put_u32(header + 12, LINES_HEADER_SIZE);
	put_u32(header + 16, (uint32_t)PY_VERSION_HEX);
	put_u32(header + 20, (uint32_t)pid);
	put_u32(header + 24, side.own_trampolines ? LINES_FLAG_OWN_TRAMPOLINES : 0);
	if (write_all(fd, header, sizeof(header)) != 0) {
		int error = errno;

		close(fd);
		errno = error;
		return -1;
	}
	return fd;
}

static int open_locked(bool own_trampolines)
{
	pid_t pid = getpid();

	if (side.fd >= 0 && side.pid == pid)
		return 0;
	if (side.fd >= 0) {
		lines_follow_fork();
		return 0;
	}
	if (side.error != 0 && side.pid == pid)
		return 0; /* given up in this process: the program runs on */
	side.own_trampolines = own_trampolines;
	side.fd = open_file(pid);
	side.pid = pid;
	side.bytes = LINES_HEADER_SIZE;
	side.error = 0;
	if (side.fd < 0) {
		char path[64];

		snprintf(path, sizeof(path), "/tmp/perf-%ld.pylines", (long)pid);
		PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
		side.error = errno;
		return -1;
	}
	return 0;
}

int lines_open(bool own_trampolines)
{
	int rc;

	pystitch_lock();
	rc = open_locked(own_trampolines);
	pystitch_unlock();
	return rc;
}

bool lines_active(void)
{
	bool active;

	pystitch_lock();
	active = side.fd >= 0;
	pystitch_unlock();
	return active;
}

/* A forked child's code objects are its parent's as they were at the fork: its file starts as
 * a copy of the parent's (with the child's pid in the header), and goes on with its own. */
static void follow_fork_locked(void)
{
	pid_t pid = getpid();
	int parent_fd = side.fd, fd, error = 0;
	uint64_t copied = LINES_HEADER_SIZE;
	char buffer[8192];

	if (side.fd < 0 || side.pid == pid)
		return;
	fd = open_file(pid);
	if (fd < 0)
		error = errno;
	while (error == 0 && copied < side.bytes) {
		size_t want = sizeof(buffer);
		ssize_t got;

		if (side.bytes - copied < want)
			want = (size_t)(side.bytes - copied);
		got = pread(parent_fd, buffer, want, (off_t)copied);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			error = got < 0 ? errno : EIO;
		else if (write_all(fd, buffer, (size_t)got) != 0)
			error = errno;
		else
			copied += (uint64_t)got;
	}
	close(parent_fd);
	side.fd = fd;
	side.pid = pid;
	side.bytes = copied;
	if (error != 0)
		give_up(error);
}

void lines_follow_fork(void)
{
	pystitch_lock();
	follow_fork_locked();
	pystitch_unlock();
}

static void write_record(const unsigned char *record, size_t size)
{
	if (side.fd >= 0 && side.pid != getpid())
		lines_follow_fork();
	if (side.fd < 0)
		return;
	if (write_all(side.fd, record, size) == 0)
		side.bytes += size;
	else
		give_up(errno);
}

static void record_header(unsigned char *p, enum lines_record type, size_t size)
{
	put_u16(p, (uint16_t)type);
	put_u16(p + 2, 0);
	put_u32(p + 4, (uint32_t)size);
	put_u64(p + 8, now());
}

/* The name and file the perf map gives the code object ("py::NAME:FILE"): co_qualname on
 * 3.11+, co_name before; control characters as '?', as the module's map lines have them. */
static void sanitise(char *text, size_t length)
{
	for (size_t i = 0; i < length; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			text[i] = '?';
}

static void code_locked(PyCodeObject *code, uintptr_t trampoline)
{
	PyObject *type, *value, *traceback;
	PyObject *name = NULL, *file = NULL;
	const char *bytecode, *table;
	Py_ssize_t bytecode_size, table_size;
	uint32_t format;
	unsigned char *record;
	size_t name_size, file_size, size;

	if (side.fd < 0)
		return;
	/* the watcher and the frame hook may run with an exception set */
	PyErr_Fetch(&type, &value, &traceback);
#if PY_VERSION_HEX >= 0x030B0000
	bytecode = code->co_code_adaptive;
	bytecode_size = Py_SIZE(code) * 2; /* code units of two bytes */
	table = PyBytes_AS_STRING(code->co_linetable);
	table_size = PyBytes_GET_SIZE(code->co_linetable);
	format = LINES_TABLE_311;
	name = pystitch_utf8_bytes(code->co_qualname);
#else
	bytecode = PyBytes_AS_STRING(code->co_code);
	bytecode_size = PyBytes_GET_SIZE(code->co_code);
#if PY_VERSION_HEX >= 0x030A0000
	table = PyBytes_AS_STRING(code->co_linetable);
	table_size = PyBytes_GET_SIZE(code->co_linetable);
	format = LINES_TABLE_310;
#else
	table = PyBytes_AS_STRING(code->co_lnotab);
	table_size = PyBytes_GET_SIZE(code->co_lnotab);
	format = LINES_TABLE_LNOTAB;
#endif
	name = pystitch_utf8_bytes(code->co_name);
#endif
	file = name ? pystitch_utf8_bytes(code->co_filename) : NULL;
	if (!file || bytecode_size < 0 || table_size < 0 || (uint64_t)bytecode_size > UINT32_MAX ||
	    (uint64_t)table_size > UINT32_MAX)
		goto out;
	name_size = (size_t)PyBytes_GET_SIZE(name);
	file_size = (size_t)PyBytes_GET_SIZE(file);
	size = 56 + (size_t)table_size + name_size + file_size;
	size = (size + 7) & ~(size_t)7;
	if (size > UINT32_MAX)
		goto out;
	record = PyMem_RawCalloc(1, size);
	if (!record)
		goto out; /* this record only */
	record_header(record, LINES_RECORD_CODE, size);
	put_u64(record + 16, (uint64_t)(uintptr_t)code);
	put_u64(record + 24, (uint64_t)(uintptr_t)bytecode);
	put_u32(record + 32, (uint32_t)bytecode_size);
	put_u32(record + 36, (uint32_t)code->co_firstlineno);
	put_u32(record + 40, format);
	put_u32(record + 44, (uint32_t)table_size);
	put_u32(record + 48, (uint32_t)name_size);
	put_u32(record + 52, (uint32_t)file_size);
	memcpy(record + 56, table, (size_t)table_size);
	memcpy(record + 56 + table_size, PyBytes_AS_STRING(name), name_size);
	sanitise((char *)record + 56 + table_size, name_size);
	memcpy(record + 56 + table_size + name_size, PyBytes_AS_STRING(file), file_size);
	sanitise((char *)record + 56 + table_size + name_size, file_size);
	write_record(record, size);
	PyMem_RawFree(record);
	side.codes++;
	if (trampoline) {
		unsigned char small[32];

		record_header(small, LINES_RECORD_TRAMPOLINE, sizeof(small));
		put_u64(small + 16, (uint64_t)(uintptr_t)code);
		put_u64(small + 24, (uint64_t)trampoline);
		write_record(small, sizeof(small));
		side.trampolines++;
	}
out:
	Py_XDECREF(name);
	Py_XDECREF(file);
	PyErr_Clear();
	PyErr_Restore(type, value, traceback);
}

void lines_code(PyCodeObject *code, uintptr_t trampoline)
{
	pystitch_lock();
	code_locked(code, trampoline);
	pystitch_unlock();
}

void lines_free(uintptr_t code)
{
	unsigned char record[24];

	pystitch_lock();
	if (side.fd >= 0 && code) {
		record_header(record, LINES_RECORD_FREE, sizeof(record));
		put_u64(record + 16, (uint64_t)code);
		write_record(record, sizeof(record));
		side.frees++;
	}
	pystitch_unlock();
}

#if PY_VERSION_HEX >= 0x030C0000

/* The trampoline CPython gave a code object (0: none yet, or not known). */
static uintptr_t trampoline_of(PyCodeObject *code)
{
	void *extra = NULL;

	if (side.trampoline_index < 0 ||
	    PyUnstable_Code_GetExtra((PyObject *)code, side.trampoline_index, &extra) != 0) {
		PyErr_Clear();
		return 0;
	}
	return (uintptr_t)extra;
}

static void trampoline_record(PyCodeObject *code)
{
	uintptr_t trampoline;
	unsigned char record[32];

	pystitch_lock();
	trampoline = trampoline_of(code);
	if (trampoline && side.fd >= 0) {
		record_header(record, LINES_RECORD_TRAMPOLINE, sizeof(record));
		put_u64(record + 16, (uint64_t)(uintptr_t)code);
		put_u64(record + 24, (uint64_t)trampoline);
		write_record(record, sizeof(record));
		side.trampolines++;
	}
	pystitch_unlock();
}

#if PY_VERSION_HEX >= 0x030E0000 && defined(Py_GIL_DISABLED)
#define HAVE_COPIES 1

/* The copies of the code object's bytecode that threads run (entry 0 is the code object's
 * own, which its code record gives). */
static void copies_record(PyCodeObject *code)
{
	_PyCodeArray *copies = _Py_atomic_load_ptr_acquire(&code->co_tlbc);
	unsigned char record[32];

	pystitch_lock();
	for (Py_ssize_t i = 1; copies && side.fd >= 0 && i < copies->size; i++) {
		const char *copy = _Py_atomic_load_ptr_relaxed(&copies->entries[i]);

		if (!copy)
			continue;
		record_header(record, LINES_RECORD_COPY, sizeof(record));
		put_u64(record + 16, (uint64_t)(uintptr_t)code);
		put_u64(record + 24, (uint64_t)(uintptr_t)copy);
		write_record(record, sizeof(record));
		side.copies++;
	}
	pystitch_unlock();
}
#else
#define HAVE_COPIES 0

static void copies_record(PyCodeObject *code)
{
	(void)code;
}
#endif

static int code_event(PyCodeEvent event, PyCodeObject *code)
{
	pystitch_lock();
	if (event == PY_CODE_EVENT_CREATE) {
		lines_code(code, 0);
	} else if (event == PY_CODE_EVENT_DESTROY) {
		trampoline_record(code);
		copies_record(code);
		lines_free((uintptr_t)code);
	}
	pystitch_unlock();
	return 0;
}

/* Whether [address, address + size) lies in an executable mapping of the
 * process (where CPython's trampolines are), from /proc/self/maps. */
static bool executable(uintptr_t address, size_t size)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	if (!maps)
		return false;
	while (!found && fgets(line, sizeof(line), maps)) {
		unsigned long start, end;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &start, &end, perms) == 3 && perms[2] == 'x' &&
		    address >= start && address + size <= end)
			found = true;
	}
	fclose(maps);
	return found;
}

/* CPython 3.12+ keeps each code object's trampoline in a co_extra slot of
 * its own, whose index it does not export: run a function made here
 * through the trampolines, and take the slot that then points to a copy
 * of the template (_Py_trampoline_func_start, checked to be executable
 * memory before it is read). Left unknown when none does. */
static void find_trampoline_index(void)
{
	const unsigned char *start = dlsym(RTLD_DEFAULT, "_Py_trampoline_func_start");
	const unsigned char *end = dlsym(RTLD_DEFAULT, "_Py_trampoline_func_end");
	PyObject *globals = PyDict_New(), *result = NULL, *probe = NULL;
	size_t size = start && end && end > start ? (size_t)(end - start) : 0;

	if (globals && size && size <= 64 &&
	    PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) == 0)
		result = PyRun_String("def _pystitch_probe():\n    return 1\n", Py_file_input,
		                      globals, globals);
	probe = result ? PyDict_GetItemString(globals, "_pystitch_probe") : NULL;
	if (probe && PyFunction_Check(probe)) {
		PyObject *one = PyObject_CallNoArgs(probe);
		PyCodeObject *code = (PyCodeObject *)PyFunction_GET_CODE(probe);
		Py_ssize_t found = -1;

		Py_XDECREF(one);
		for (Py_ssize_t index = 0; one && index < 16 && found < 0; index++) {
			void *extra = NULL;

			if (PyUnstable_Code_GetExtra((PyObject *)code, index, &extra) != 0) {
				PyErr_Clear();
				break;
			}
			if (extra && executable((uintptr_t)extra, size) &&
			    memcmp(extra, start, size) == 0)
				found = index;
		}
		/* the probe ran Python code: the lock is taken for the result
		 * alone */
		pystitch_lock();
		if (found >= 0)
			side.trampoline_index = found;
		pystitch_unlock();
	}
	Py_XDECREF(result);
	Py_XDECREF(globals);
	PyErr_Clear();
}

/* A code object that exists already, and those in its constants; seen holds the ids done.
 * trampolines: write the trampolines and bytecode copies they have (at exit), not the code
 * objects. */
static int visit_code(PyObject *code, PyObject *seen, bool trampolines)
{
	PyObject *id;
	PyObject *consts;
	int known;

	if (!PyCode_Check(code))
		return 0;
	id = PyLong_FromVoidPtr(code);
	if (!id)
		return -1;
	known = PySet_Contains(seen, id);
	if (known == 0)
		known = PySet_Add(seen, id) == 0 ? 0 : -1;
	Py_DECREF(id);
	if (known != 0)
		return known < 0 ? -1 : 0;
	if (trampolines) {
		trampoline_record((PyCodeObject *)code);
		copies_record((PyCodeObject *)code);
	} else
		lines_code((PyCodeObject *)code, 0);
	consts = ((PyCodeObject *)code)->co_consts;
	for (Py_ssize_t i = 0; consts && PyTuple_Check(consts) && i < PyTuple_GET_SIZE(consts); i++)
		if (visit_code(PyTuple_GET_ITEM(consts, i), seen, trampolines) < 0)
			return -1;
	return 0;
}

/* The code of a function, generator, coroutine or frame, if it is one. */
static int visit_object(PyObject *object, PyObject *seen, bool trampolines)
{
	static const char *const attributes[] = { "gi_code", "cr_code", "ag_code" };

	if (PyCode_Check(object))
		return visit_code(object, seen, trampolines);
	if (PyFunction_Check(object))
		return visit_code(PyFunction_GET_CODE(object), seen, trampolines);
	if (PyFrame_Check(object)) {
		PyCodeObject *code = PyFrame_GetCode((PyFrameObject *)object);
		int rc = visit_code((PyObject *)code, seen, trampolines);

		Py_DECREF(code);
		return rc;
	}
	if (PyGen_Check(object) || PyCoro_CheckExact(object) || PyAsyncGen_CheckExact(object)) {
		for (size_t i = 0; i < sizeof(attributes) / sizeof(attributes[0]); i++) {
			PyObject *code = PyObject_GetAttrString(object, attributes[i]);
			int rc;

			if (!code) {
				PyErr_Clear();
				continue;
			}
			rc = visit_code(code, seen, trampolines);
			Py_DECREF(code);
			return rc;
		}
	}
	return 0;
}

/* The code objects that exist now: reachable from the objects the garbage collector tracks
 * (functions, generators, ...) and from the frames running in each thread. */
static int walk_existing(bool trampolines)
{
	PyObject *seen = PySet_New(NULL);
	PyObject *gc = seen ? PyImport_ImportModule("gc") : NULL;
	PyObject *objects = gc ? PyObject_CallMethod(gc, "get_objects", NULL) : NULL;
	PyObject *sys = objects ? PyImport_ImportModule("sys") : NULL;
	PyObject *frames = sys ? PyObject_CallMethod(sys, "_current_frames", NULL) : NULL;
	int rc = frames && PyList_Check(objects) && PyDict_Check(frames) ? 0 : -1;

	for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(objects); i++)
		rc = visit_object(PyList_GET_ITEM(objects, i), seen, trampolines);
	if (rc == 0) {
		PyObject *key, *frame;
		Py_ssize_t position = 0;

		while (rc == 0 && PyDict_Next(frames, &position, &key, &frame)) {
			PyFrameObject *f = (PyFrameObject *)frame;

			Py_INCREF(f);
			while (rc == 0 && f) {
				PyFrameObject *back = PyFrame_GetBack(f);

				rc = visit_object((PyObject *)f, seen, trampolines);
				Py_DECREF(f);
				f = back;
			}
			Py_XDECREF(f);
		}
	}
	if (rc < 0 && !PyErr_Occurred())
		PyErr_SetString(PyExc_RuntimeError, "cannot list the code objects that exist");
	Py_XDECREF(frames);
	Py_XDECREF(sys);
	Py_XDECREF(objects);
	Py_XDECREF(gc);
	Py_XDECREF(seen);
	return rc;
}

/* The walks run Python code (the probe, the garbage collector's list, the
 * frames, whatever a reference they drop frees): the lock is taken around
 * the state and the records only, never across them. */
int lines_watch(void)
{
	int watcher;
	bool find_index;

	pystitch_lock();
	watcher = side.watcher;
	pystitch_unlock();
	if (watcher >= 0)
		return 0;
	watcher = PyCode_AddWatcher(code_event);
	if (watcher < 0)
		return -1;
	pystitch_lock();
	side.watcher = watcher;
	find_index = side.trampoline_index < 0;
	pystitch_unlock();
	if (find_index)
		find_trampoline_index();
	/* after the watcher is on: a code object made meanwhile is then written twice, which
	 * the reader takes as one, rather than not at all */
	if (walk_existing(false) < 0) {
		lines_unwatch();
		return -1;
	}
	return 0;
}

void lines_unwatch(void)
{
	int watcher;

	pystitch_lock();
	watcher = side.watcher;
	side.watcher = -1;
	pystitch_unlock();
	if (watcher >= 0 && PyCode_ClearWatcher(watcher) < 0)
		PyErr_Clear();
}

int lines_trampolines(void)
{
	bool walk;

	pystitch_lock();
	walk = side.fd >= 0 && (side.trampoline_index >= 0 || HAVE_COPIES);
	pystitch_unlock();
	return walk ? walk_existing(true) : 0;
}

#else /* before 3.12: the frame hook reports code objects */

int lines_trampolines(void)
{
	return 0; /* written with each code object */
}

int lines_watch(void)
{
	PyErr_SetString(PyExc_RuntimeError, "code watchers need CPython 3.12+");
	return -1;
}

void lines_unwatch(void)
{
}

#endif

bool lines_watching(void)
{
	bool watching;

	pystitch_lock();
	watching = side.watcher >= 0;
	pystitch_unlock();
	return watching;
}

PyObject *lines_stats(void)
{
	PyObject *stats;

	pystitch_lock();
	stats = Py_BuildValue("{sisKsKsKsKsKsi}", "lines_open", side.fd >= 0, "lines_bytes",
	                      (unsigned long long)side.bytes, "lines_codes",
	                      (unsigned long long)side.codes, "lines_frees",
	                      (unsigned long long)side.frees, "lines_trampolines",
	                      (unsigned long long)side.trampolines, "lines_copies",
	                      (unsigned long long)side.copies, "lines_errno", side.error);
	pystitch_unlock();
	return stats;
}
