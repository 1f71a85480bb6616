/* The machine model: threads, processes and their maps, updated from
 * COMM/FORK/EXIT/MMAP/MMAP2 as perf's machine.c does: a thread seen first
 * in a sample gets the comm ":tid" (the idle task, tid 0, is "swapper"
 * from the start), threads share the address space their process leader
 * had when they were made (a leader made again, as FORK makes it, starts
 * a new one: the threads already there keep the old, as in perf, where a
 * thread holds its maps), FORK of a new process copies the parent's maps,
 * a new map cuts away what
 * it overlaps of older ones, and a kernel module's map is named as perf
 * names its DSO.
 */
#include "machine/machine.h"

#include "base/array.h"
#include "base/hash.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BUCKETS 4096

struct ps_process {
	int32_t pid;
	bool has_mnt_ns; /* from PERF_RECORD_NAMESPACES */
	uint64_t mnt_ns_dev, mnt_ns_ino;
	struct ps_map *maps;
	size_t nr_maps, cap_maps;
	uint64_t generation;
	bool unwind_ready;
	struct {
		void *state;
		void (*free_state)(void *state);
	} slots[PS_PROCESS_NR_SLOTS];
	struct ps_process *next;
};

struct ps_machine {
	struct ps_thread *threads[BUCKETS];
	struct ps_process *processes[BUCKETS]; /* each pid's leader's */
	/* address spaces a leader made again left to the threads that had
	 * them, freed with the machine */
	struct ps_process *retired;
	struct ps_mapped_object *objects[BUCKETS];
	struct ps_process kernel;
	const struct ps_features *features;
	void (*free_thread_state)(void *state);
};

static size_t hash_int(int32_t v)
{
	return (size_t)(ps_hash_u64((uint32_t)v) % BUCKETS);
}

static size_t hash_str(const char *s)
{
	return (size_t)(ps_hash_string(s, 0) % BUCKETS);
}

static struct ps_thread *new_thread(struct ps_machine *machine, int32_t pid, int32_t tid);
static int set_comm(struct ps_thread *t, const char *comm);

int ps_machine_new(struct ps_machine **out)
{
	struct ps_machine *machine = calloc(1, sizeof(*machine));
	struct ps_thread *idle;

	*out = NULL;
	if (!machine)
		return -ENOMEM;
	machine->kernel.pid = -1;
	/* perf_session__register_idle_thread(): the idle task of every CPU is
	 * one thread, pid and tid 0, named before any record is read (it has
	 * no COMM record) */
	idle = new_thread(machine, 0, 0);
	if (!idle || set_comm(idle, "swapper")) {
		ps_machine_free(machine);
		return -ENOMEM;
	}
	*out = machine;
	return 0;
}

void ps_machine_set_features(struct ps_machine *machine, const struct ps_features *features)
{
	machine->features = features;
}

static void free_thread_state(struct ps_machine *machine, struct ps_thread *t)
{
	if (t->state && machine->free_thread_state)
		machine->free_thread_state(t->state);
	t->state = NULL;
}

void ps_machine_set_thread_free(struct ps_machine *machine, void (*free_state)(void *state))
{
	machine->free_thread_state = free_state;
}

static void process_free(struct ps_process *p)
{
	for (size_t i = 0; i < PS_PROCESS_NR_SLOTS; i++)
		if (p->slots[i].state && p->slots[i].free_state)
			p->slots[i].free_state(p->slots[i].state);
	free(p->maps);
}

void ps_machine_free(struct ps_machine *machine)
{
	if (!machine)
		return;
	for (size_t b = 0; b < BUCKETS; b++) {
		for (struct ps_thread *t = machine->threads[b], *n; t; t = n) {
			n = t->next;
			free_thread_state(machine, t);
			free(t->comm);
			free(t);
		}
		for (struct ps_process *p = machine->processes[b], *n; p; p = n) {
			n = p->next;
			process_free(p);
			free(p);
		}
		if (b == 0)
			for (struct ps_process *p = machine->retired, *n; p; p = n) {
				n = p->next;
				process_free(p);
				free(p);
			}
		for (struct ps_mapped_object *o = machine->objects[b], *n; o; o = n) {
			n = o->next;
			free(o->name);
			free(o->module_name);
			free(o);
		}
	}
	process_free(&machine->kernel);
	free(machine);
}

/* ---- objects ------------------------------------------------------ */

static bool kernel_name(const char *name)
{
	return name[0] == '[' && strcmp(name, "[vdso]") != 0 && strcmp(name, "[vsyscall]") != 0 &&
	       strcmp(name, "[stack]") != 0 && strcmp(name, "[heap]") != 0 &&
	       strcmp(name, "[vvar]") != 0 && strncmp(name, "[anon", 5) != 0;
}

/* The build-id the BUILD_ID feature records for name, when it records
 * exactly one: a path several files had (containers' files, a library
 * replaced during the capture) has no build-id by its name. */
static const struct ps_build_id *feature_build_id(const struct ps_machine *machine,
                                                  const char *name)
{
	const struct ps_build_id *found = NULL;

	for (size_t i = 0; machine->features && i < machine->features->nr_build_ids; i++) {
		const struct ps_build_id *bid = &machine->features->build_ids[i];

		if (!bid->filename || strcmp(bid->filename, name) != 0 || bid->size > 20)
			continue;
		if (found && (found->size != bid->size || memcmp(found->id, bid->id, bid->size)))
			return NULL;
		found = bid;
	}
	return found;
}

static void learn_build_id(struct ps_mapped_object *o, const uint8_t *id, uint8_t size)
{
	o->has_build_id = true;
	o->build_id_size = size;
	memcpy(o->build_id, id, size);
}

static void learn_file_id(struct ps_mapped_object *o, const struct ps_object_key *key)
{
	o->has_file_id = true;
	o->maj = key->maj;
	o->min = key->min;
	o->ino = key->ino;
}

struct ps_mapped_object *ps_machine_object(struct ps_machine *machine, const char *name,
                                           const struct ps_object_key *key)
{
	static const struct ps_object_key none;
	size_t b = hash_str(name);
	struct ps_mapped_object *o;
	const struct ps_build_id *bid;

	if (!key || (key->build_id && key->build_id_size > 20))
		key = &none;
	for (o = machine->objects[b]; o; o = o->next) {
		if (strcmp(o->name, name) != 0)
			continue;
		if (key->build_id && o->has_build_id &&
		    (o->build_id_size != key->build_id_size ||
		     memcmp(o->build_id, key->build_id, key->build_id_size) != 0))
			continue;
		if (key->has_file_id && o->has_file_id &&
		    (o->maj != key->maj || o->min != key->min || o->ino != key->ino))
			continue;
		/* the same file: what one knows and the other did not */
		if (key->build_id && !o->has_build_id)
			learn_build_id(o, key->build_id, key->build_id_size);
		if (key->has_file_id && !o->has_file_id)
			learn_file_id(o, key);
		return o;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->name = strdup(name);
	if (!o->name) {
		free(o);
		return NULL;
	}
	o->kernel = kernel_name(name);
	if (key->build_id)
		learn_build_id(o, key->build_id, key->build_id_size);
	else if ((bid = feature_build_id(machine, name)) != NULL)
		/* the BUILD_ID feature names the objects samples hit */
		learn_build_id(o, bid->id, (uint8_t)bid->size);
	if (key->has_file_id)
		learn_file_id(o, key);
	o->next = machine->objects[b];
	machine->objects[b] = o;
	return o;
}

void ps_machine_for_each_object(struct ps_machine *machine,
                                void (*fn)(void *ctx, struct ps_mapped_object *object), void *ctx)
{
	for (size_t b = 0; b < BUCKETS; b++)
		for (struct ps_mapped_object *o = machine->objects[b]; o; o = o->next)
			fn(ctx, o);
}

void ps_machine_for_each_process(struct ps_machine *machine,
                                 void (*fn)(void *ctx, struct ps_process *process), void *ctx)
{
	for (size_t b = 0; b < BUCKETS; b++)
		for (struct ps_process *p = machine->processes[b]; p; p = p->next)
			fn(ctx, p);
}

/* ---- processes and maps ------------------------------------------- */

static struct ps_process *find_process(struct ps_machine *machine, int32_t pid)
{
	for (struct ps_process *p = machine->processes[hash_int(pid)]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

struct ps_process *ps_machine_process(struct ps_machine *machine, int32_t pid)
{
	struct ps_process *p;
	if (pid == -1)
		return &machine->kernel;
	p = find_process(machine, pid);
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->next = machine->processes[hash_int(pid)];
	machine->processes[hash_int(pid)] = p;
	return p;
}

/* A new address space for pid's leader; the one it had, if any, stays
 * with the threads that share it. */
static struct ps_process *new_process(struct ps_machine *machine, int32_t pid)
{
	struct ps_process **pp = &machine->processes[hash_int(pid)];
	struct ps_process *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	if (*pp) {
		struct ps_process *old = *pp;

		*pp = old->next;
		old->next = machine->retired;
		machine->retired = old;
	}
	p->pid = pid;
	p->next = machine->processes[hash_int(pid)];
	machine->processes[hash_int(pid)] = p;
	return p;
}

struct ps_process *ps_machine_kernel(struct ps_machine *machine)
{
	return &machine->kernel;
}

/* First map whose end is above addr. */
static size_t lower_bound(const struct ps_process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct ps_map *ps_process_find_map(const struct ps_process *p, uint64_t addr)
{
	size_t i = lower_bound(p, addr);
	if (i < p->nr_maps && p->maps[i].start <= addr)
		return &p->maps[i];
	return NULL;
}

const struct ps_map *ps_process_next_map(const struct ps_process *p, const struct ps_map *map)
{
	size_t next = map ? (size_t)(map - p->maps) + 1 : 0;

	return next < p->nr_maps ? &p->maps[next] : NULL;
}

const struct ps_map *ps_process_first_map_of(const struct ps_process *p,
                                             const struct ps_mapped_object *object)
{
	/* maps are sorted: the first found is the lowest */
	for (size_t i = 0; i < p->nr_maps; i++)
		if (p->maps[i].object == object)
			return &p->maps[i];
	return NULL;
}

int32_t ps_process_pid(const struct ps_process *p)
{
	return p->pid;
}

bool ps_process_mount_namespace(const struct ps_process *p, uint64_t *dev, uint64_t *ino)
{
	if (!p->has_mnt_ns)
		return false;
	*dev = p->mnt_ns_dev;
	*ino = p->mnt_ns_ino;
	return true;
}

uint64_t ps_process_generation(const struct ps_process *p)
{
	return p->generation;
}

bool ps_process_unwind_ready(const struct ps_process *p)
{
	return p->unwind_ready;
}

void ps_process_set_unwind_ready(struct ps_process *p)
{
	p->unwind_ready = true;
}

void *ps_process_state(const struct ps_process *p, enum ps_process_slot slot)
{
	return p->slots[slot].state;
}

void ps_process_set_state(struct ps_process *p, enum ps_process_slot slot, void *state,
                          void (*free_state)(void *state))
{
	p->slots[slot].state = state;
	p->slots[slot].free_state = free_state;
}

static int reserve_maps(struct ps_process *p, size_t extra)
{
	if (extra > SIZE_MAX - p->nr_maps ||
	    !ps_array_reserve((void **)&p->maps, &p->cap_maps, p->nr_maps + extra, sizeof(*p->maps),
	                      32))
		return -ENOMEM;
	return 0;
}

/* Insert a map, cutting away what it overlaps of existing maps (perf's
 * maps__fixup_overlappings): an old map may lose its head, its tail, or be
 * split in two around the new one. */
static int insert_map(struct ps_process *p, const struct ps_map *map)
{
	size_t i, j;
	if (map->end <= map->start)
		return 0;
	if (reserve_maps(p, 2))
		return -ENOMEM;
	i = lower_bound(p, map->start);
	/* maps [i, j) overlap the new one */
	for (j = i; j < p->nr_maps && p->maps[j].start < map->end; j++)
		;
	struct ps_map before = { 0 }, after = { 0 };
	bool keep_before = false, keep_after = false;
	if (i < j && p->maps[i].start < map->start) {
		before = p->maps[i];
		before.end = map->start;
		keep_before = true;
	}
	if (i < j && p->maps[j - 1].end > map->end) {
		after = p->maps[j - 1];
		after.pgoff += map->end - after.start;
		after.start = map->end;
		keep_after = true;
	}
	size_t add = 1 + keep_before + keep_after;
	size_t removed = j - i;
	memmove(&p->maps[i + add], &p->maps[j], (p->nr_maps - j) * sizeof(*p->maps));
	p->nr_maps = p->nr_maps - removed + add;
	size_t k = i;
	if (keep_before)
		p->maps[k++] = before;
	p->maps[k++] = *map;
	if (keep_after)
		p->maps[k++] = after;
	p->generation++;
	return 0;
}

static int clone_maps(struct ps_process *to, const struct ps_process *from)
{
	if (to == from)
		return 0;
	to->nr_maps = 0;
	if (reserve_maps(to, from->nr_maps))
		return -ENOMEM;
	if (from->nr_maps) /* (to->maps may be NULL then) */
		memcpy(to->maps, from->maps, from->nr_maps * sizeof(*from->maps));
	to->nr_maps = from->nr_maps;
	to->generation++;
	/* perf gives the child maps of its own, checked again map by map */
	to->unwind_ready = false;
	return 0;
}

/* ---- threads ------------------------------------------------------ */

static struct ps_thread *find_thread(struct ps_machine *machine, int32_t tid)
{
	for (struct ps_thread *t = machine->threads[hash_int(tid)]; t; t = t->next)
		if (t->tid == tid)
			return t;
	return NULL;
}

static int set_comm(struct ps_thread *t, const char *comm)
{
	char *c = strdup(comm);
	if (!c)
		return -ENOMEM;
	free(t->comm);
	t->comm = c;
	t->comm_set = true;
	return 0;
}

/* The address space a thread of pid gets (perf's thread__init_maps()):
 * a leader a new one, another thread its leader's (the leader made first
 * when unknown); NULL for pid -1, which perf gives maps of its own that no
 * record fills. */
static struct ps_process *process_for(struct ps_machine *machine, int32_t pid, int32_t tid)
{
	struct ps_thread *leader;

	if (pid == -1)
		return NULL;
	if (pid == tid)
		return new_process(machine, pid);
	leader = find_thread(machine, pid);
	if (!leader)
		leader = new_thread(machine, pid, pid);
	if (!leader)
		return NULL;
	if (!leader->process)
		leader->process = new_process(machine, pid);
	return leader->process;
}

static struct ps_thread *new_thread(struct ps_machine *machine, int32_t pid, int32_t tid)
{
	char name[16];
	struct ps_process *process = process_for(machine, pid, tid);
	struct ps_thread *t;

	if (pid != -1 && !process)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->process = process;
	snprintf(name, sizeof(name), ":%d", tid);
	t->comm = strdup(name);
	if (!t->comm) {
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	t->ppid = -1;
	t->next = machine->threads[hash_int(tid)];
	machine->threads[hash_int(tid)] = t;
	return t;
}

static void remove_thread(struct ps_machine *machine, struct ps_thread *victim)
{
	struct ps_thread **pp = &machine->threads[hash_int(victim->tid)];
	while (*pp && *pp != victim)
		pp = &(*pp)->next;
	if (*pp)
		*pp = victim->next;
	free_thread_state(machine, victim);
	free(victim->comm);
	free(victim);
}

struct ps_thread *ps_machine_thread(struct ps_machine *machine, int32_t pid, int32_t tid)
{
	struct ps_thread *t = find_thread(machine, tid);
	if (t) {
		if (t->pid == -1 && pid != -1) {
			/* machine__update_thread_pid(): a thread now known to
			 * be another's takes its leader's address space */
			struct ps_process *process = process_for(machine, pid, tid);

			if (!process)
				return NULL;
			t->pid = pid;
			t->process = process;
		}
		return t;
	}
	return new_thread(machine, pid, tid);
}

struct ps_process *ps_machine_thread_process(struct ps_machine *machine, struct ps_thread *thread)
{
	return thread->process ? thread->process : ps_machine_process(machine, thread->pid);
}

static int process_fork(struct ps_machine *machine, const struct ps_event *ev)
{
	const struct ps_record_fork *f = &ev->u.fork;
	struct ps_thread *parent = ps_machine_thread(machine, (int32_t)f->ppid, (int32_t)f->ptid);
	struct ps_thread *old, *child;

	if (!parent)
		return -ENOMEM;
	if (parent->pid != (int32_t)f->ppid) {
		/* a stale thread under the parent's tid: start over, as perf does */
		remove_thread(machine, parent);
		parent = ps_machine_thread(machine, (int32_t)f->ppid, (int32_t)f->ptid);
		if (!parent)
			return -ENOMEM;
	}
	/* looked up only now: the child's tid may be the stale thread just
	 * removed as the parent */
	old = find_thread(machine, (int32_t)f->tid);
	if (old && old != parent)
		remove_thread(machine, old);
	child = new_thread(machine, (int32_t)f->pid, (int32_t)f->tid);
	if (!child)
		return -ENOMEM;
	child->ppid = parent->tid;
	if (parent->comm_set && set_comm(child, parent->comm))
		return -ENOMEM;
	if ((int32_t)f->pid != parent->pid && !(ev->misc & PERF_RECORD_MISC_FORK_EXEC)) {
		/* a new process starts with a copy of its parent's maps */
		struct ps_process *to = ps_machine_process(machine, (int32_t)f->pid);
		struct ps_process *from = find_process(machine, parent->pid);
		if (!to)
			return -ENOMEM;
		if (from && clone_maps(to, from))
			return -ENOMEM;
	}
	return 0;
}

static bool is_anon_memory(const char *name)
{
	return strcmp(name, "//anon") == 0 || strncmp(name, "/dev/zero", 9) == 0 ||
	       strncmp(name, "/anon_hugepage", 14) == 0;
}

static bool is_no_dso_memory(const char *name)
{
	return strncmp(name, "[stack", 6) == 0 || strncmp(name, "/SYSV", 5) == 0 ||
	       strcmp(name, "[heap]") == 0;
}

/* perf's __kmod_path__parse(): the DSO name of a module map. "[name]"
 * stays as it is; otherwise the file name, without ".ko" (and ".gz" or
 * ".xz" after it, the compressions Debian's perf reads) and in brackets
 * when it has that suffix, with every '-' turned into '_'. */
static char *kmod_name(const char *path)
{
	const char *name = strrchr(path, '/');
	const char *ext = strrchr(path, '.');
	bool kmod = false;
	char *out;

	name = name ? name + 1 : path;
	if (name[0] == '[' || !ext)
		return strdup(name);
	if (strcmp(ext, ".gz") == 0 || strcmp(ext, ".xz") == 0)
		ext -= 3;
	if (ext > name)
		kmod = strncmp(ext, ".ko", 3) == 0;
	if (kmod) {
		size_t len = (size_t)(ext - name);
		out = malloc(len + 3);
		if (!out)
			return NULL;
		out[0] = '[';
		memcpy(out + 1, name, len);
		out[len + 1] = ']';
		out[len + 2] = 0;
	} else {
		out = strdup(name);
		if (!out)
			return NULL;
	}
	for (char *c = out; *c; c++)
		if (*c == '-')
			*c = '_';
	return out;
}

/* machine__process_kernel_mmap_event(): a kernel-mode map is a module
 * when its name is a path, or in brackets but not the kernel's
 * ("[kernel.kallsyms]_text"). */
static bool kernel_module_map(const char *name)
{
	return name[0] == '/' || (name[0] == '[' && strncmp(name, "[kernel.kallsyms", 16) != 0);
}

static int process_mmap(struct ps_machine *machine, const struct ps_event *ev)
{
	const struct ps_record_mmap *m = &ev->u.mmap;
	unsigned cpumode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool kernel = cpumode == PERF_RECORD_MISC_KERNEL;
	struct ps_process *p;
	struct ps_map map = { 0 };
	struct ps_object_key key = { 0 };

	if (kernel) {
		p = &machine->kernel;
	} else {
		/* into the address space the thread holds (perf's
		 * thread__insert_map()) */
		struct ps_thread *t = ps_machine_thread(machine, (int32_t)m->pid, (int32_t)m->tid);

		p = t ? ps_machine_thread_process(machine, t) : NULL;
	}
	if (!p)
		return -ENOMEM;
	const char *name = m->filename ? m->filename : "";
	char perf_map[40];
	/* an MMAP (not MMAP2) has no prot: perf takes it for executable
	 * unless its data bit is set (machine__process_mmap_event) */
	uint32_t prot = ev->type == PERF_RECORD_MMAP2             ? m->prot
	                : (ev->misc & PERF_RECORD_MISC_MMAP_DATA) ? 0
	                                                          : PROT_EXEC;
	uint32_t flags = ev->type == PERF_RECORD_MMAP2 ? m->flags : 0;
	map.identity = !kernel &&
	               (is_anon_memory(name) || is_no_dso_memory(name) || (flags & MAP_HUGETLB));
	if ((prot & PROT_EXEC) && map.identity) {
		/* executable anonymous memory is JIT code: perf names it after
		 * the perf map the JIT writes for it */
		snprintf(perf_map, sizeof(perf_map), "/tmp/perf-%d.map", (int32_t)m->pid);
		name = perf_map;
	}
	key.build_id = m->has_build_id ? m->build_id : NULL;
	key.build_id_size = m->has_build_id ? m->build_id_size : 0;
	/* a file's device and inode (an MMAP2 without build-id carries
	 * them; anonymous and special mappings have none) */
	key.has_file_id = ev->type == PERF_RECORD_MMAP2 && !m->has_build_id && !map.identity &&
	                  (m->ino || m->maj || m->min);
	key.maj = m->maj;
	key.min = m->min;
	key.ino = m->ino;
	map.object = ps_machine_object(machine, name, &key);
	if (!map.object)
		return -ENOMEM;
	if (!map.object->mapper_pid && !kernel) {
		map.object->mapper_pid = (int32_t)m->pid;
		map.object->has_mnt_ns = p->has_mnt_ns;
		map.object->mnt_ns_dev = p->mnt_ns_dev;
		map.object->mnt_ns_ino = p->mnt_ns_ino;
	}
	if (kernel) {
		map.object->kernel = true;
		if (!map.object->module_name && kernel_module_map(name)) {
			map.object->module_name = kmod_name(name);
			if (!map.object->module_name)
				return -ENOMEM;
		}
	}
	if (name == perf_map)
		map.object->jit_pid = (int32_t)m->pid;
	map.start = m->start;
	map.end = m->start + m->len;
	if (map.end < map.start)
		map.end = UINT64_MAX;
	map.pgoff = m->pgoff;
	if (ev->type == PERF_RECORD_MMAP2) {
		map.prot = m->prot;
		map.flags = m->flags;
	} else {
		/* MMAP has no prot: its data bit says whether it is executable */
		map.prot = (ev->misc & PERF_RECORD_MISC_MMAP_DATA) ? 3 : 5;
	}
	return insert_map(p, &map);
}

/* A thread's namespaces, recorded at its creation and at setns() or
 * unshare(): its process's mount namespace (the last one said). */
static int process_namespaces(struct ps_machine *machine, const struct ps_event *ev)
{
	const struct ps_record_namespaces *n = &ev->u.namespaces;
	struct ps_thread *t;
	struct ps_process *p;

	if (n->nr <= MNT_NS_INDEX || !n->dev_ino)
		return 0;
	t = ps_machine_thread(machine, (int32_t)n->pid, (int32_t)n->tid);
	p = t ? ps_machine_thread_process(machine, t) : NULL;
	if (!p)
		return -ENOMEM;
	if (p == &machine->kernel)
		return 0;
	p->has_mnt_ns = true;
	p->mnt_ns_dev = n->dev_ino[2 * MNT_NS_INDEX];
	p->mnt_ns_ino = n->dev_ino[2 * MNT_NS_INDEX + 1];
	return 0;
}

int ps_machine_process_event(struct ps_machine *machine, const struct ps_event *ev)
{
	switch (ev->type) {
	case PERF_RECORD_COMM: {
		struct ps_thread *t = ps_machine_thread(machine, (int32_t)ev->u.comm.pid,
		                                        (int32_t)ev->u.comm.tid);
		if (!t)
			return -ENOMEM;
		return set_comm(t, ev->u.comm.comm ? ev->u.comm.comm : "");
	}
	case PERF_RECORD_FORK:
		return process_fork(machine, ev);
	case PERF_RECORD_EXIT: {
		/* perf keeps exited threads around for later samples; the
		 * state kept for the samples of a live thread goes */
		struct ps_thread *t = find_thread(machine, (int32_t)ev->u.fork.tid);
		if (t)
			free_thread_state(machine, t);
		return 0;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return process_mmap(machine, ev);
	case PERF_RECORD_NAMESPACES:
		return process_namespaces(machine, ev);
	default:
		return 0;
	}
}
