/* The machine model: threads, processes and their maps, updated from
 * COMM/FORK/EXIT/MMAP/MMAP2 as perf's machine.c does: a thread seen first
 * in a sample gets the comm ":tid" (the idle task, tid 0, is "swapper"
 * from the start), threads share the address space their process leader
 * had when they were made (a leader made again, as FORK makes it, starts
 * a new one: the threads already there keep the old, as in perf, where a
 * thread holds its maps), FORK of a new process copies the parent's maps
 * (maps.c has them), and what has ended is freed once the grace period
 * after it is over (lifetime.c).
 */
#include "machine/machine_priv.h"

#include "base/hash.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	machine->grace = PS_MACHINE_EXIT_GRACE_NS;
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

void ps_machine_free_thread_state(struct ps_machine *machine, struct ps_thread *t)
{
	if (t->state && machine->free_thread_state)
		machine->free_thread_state(t->state);
	t->state = NULL;
}

void ps_machine_set_thread_free(struct ps_machine *machine, void (*free_state)(void *state))
{
	machine->free_thread_state = free_state;
}

void ps_machine_process_release(struct ps_process *p)
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
	/* every process is on the pid index or held by a thread: the
	 * threads let go of theirs first */
	for (size_t b = 0; b < BUCKETS; b++)
		for (struct ps_thread *t = machine->threads[b], *n; t; t = n) {
			n = t->next;
			ps_machine_free_thread_state(machine, t);
			if (t->process && --t->process->refs == 0) {
				ps_machine_process_release(t->process);
				free(t->process);
			}
			free(t->comm);
			free(t);
		}
	for (size_t b = 0; b < BUCKETS; b++) {
		for (struct ps_process *p = machine->processes[b], *n; p; p = n) {
			n = p->next;
			ps_machine_process_release(p);
			free(p);
		}
		for (struct ps_mapped_object *o = machine->objects[b], *n; o; o = n) {
			n = o->next;
			free(o->name);
			free(o->module_name);
			free(o);
		}
	}
	ps_machine_process_release(&machine->kernel);
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

/* The name the BUILD_ID feature gives an object: perf's kernel DSO is
 * "[kernel.kallsyms]", whose map perf record names "[kernel.kallsyms]_text"
 * (maps of a vmlinux's other sections, "[kernel.kallsyms].init.text", are
 * not in the table). */
static const char *feature_name(const char *name)
{
	if (strncmp(name, "[kernel.kallsyms]", 17) == 0 && name[17] != '.')
		return "[kernel.kallsyms]";
	return name;
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
	else if ((bid = feature_build_id(machine, feature_name(name))) != NULL)
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
	for (struct ps_process *p = machine->processes[ps_machine_hash_pid(pid)]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

/* A new process, listed as its pid's current one. */
static struct ps_process *list_new(struct ps_machine *machine, int32_t pid)
{
	struct ps_process *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->listed = true;
	p->refs = 1;
	p->next = machine->processes[ps_machine_hash_pid(pid)];
	machine->processes[ps_machine_hash_pid(pid)] = p;
	ps_machine_count_process(machine);
	return p;
}

struct ps_process *ps_machine_process(struct ps_machine *machine, int32_t pid)
{
	struct ps_process *p;
	if (pid == -1)
		return &machine->kernel;
	p = find_process(machine, pid);
	return p ? p : list_new(machine, pid);
}

/* A new address space for pid's leader; the one it had, if any, stays
 * with the threads that share it, and is freed with the last of them. */
static struct ps_process *new_process(struct ps_machine *machine, int32_t pid)
{
	struct ps_process *old = find_process(machine, pid);

	if (old)
		ps_machine_process_unlist(machine, old, NULL);
	return list_new(machine, pid);
}

struct ps_process *ps_machine_kernel(struct ps_machine *machine)
{
	return &machine->kernel;
}

/* ---- threads ------------------------------------------------------ */

static struct ps_thread *find_thread(struct ps_machine *machine, int32_t tid)
{
	for (struct ps_thread *t = machine->threads[ps_machine_hash_pid(tid)]; t; t = t->next)
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
	if (!leader->process) {
		struct ps_process *p = new_process(machine, pid);

		if (!p)
			return NULL;
		ps_machine_thread_attach(machine, leader, p);
	}
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
	snprintf(name, sizeof(name), ":%d", tid);
	t->comm = strdup(name);
	if (!t->comm) {
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	t->ppid = -1;
	ps_machine_thread_attach(machine, t, process);
	t->next = machine->threads[ps_machine_hash_pid(tid)];
	machine->threads[ps_machine_hash_pid(tid)] = t;
	t->serial = ++machine->stats.threads_made;
	if (++machine->threads_kept > machine->stats.threads_peak)
		machine->stats.threads_peak = machine->threads_kept;
	return t;
}

void ps_machine_remove_thread(struct ps_machine *machine, struct ps_thread *victim)
{
	struct ps_thread **pp = &machine->threads[ps_machine_hash_pid(victim->tid)];
	while (*pp && *pp != victim)
		pp = &(*pp)->next;
	if (*pp)
		*pp = victim->next;
	ps_machine_free_thread_state(machine, victim);
	ps_machine_thread_detach(machine, victim);
	free(victim->comm);
	free(victim);
	machine->stats.threads_freed++;
	machine->threads_kept--;
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
			ps_machine_thread_attach(machine, t, process);
		}
		return t;
	}
	return new_thread(machine, pid, tid);
}

struct ps_thread *ps_machine_find_thread(struct ps_machine *machine, int32_t tid)
{
	return find_thread(machine, tid);
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
	ps_machine_thread_lives(machine, parent);
	if (parent->pid != (int32_t)f->ppid) {
		/* a stale thread under the parent's tid: start over, as perf does */
		ps_machine_remove_thread(machine, parent);
		parent = ps_machine_thread(machine, (int32_t)f->ppid, (int32_t)f->ptid);
		if (!parent)
			return -ENOMEM;
	}
	/* looked up only now: the child's tid may be the stale thread just
	 * removed as the parent */
	old = find_thread(machine, (int32_t)f->tid);
	if (old && old != parent)
		ps_machine_remove_thread(machine, old);
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
		if (from && ps_machine_clone_maps(to, from))
			return -ENOMEM;
	}
	return 0;
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
		struct ps_thread *t;

		ps_machine_advance(machine, ev->timestamp);
		t = ps_machine_thread(machine, (int32_t)ev->u.comm.pid, (int32_t)ev->u.comm.tid);
		if (!t)
			return -ENOMEM;
		ps_machine_thread_lives(machine, t);
		if (ev->misc & PERF_RECORD_MISC_COMM_EXEC) {
			/* a new program: its maps follow */
			struct ps_process *p = ps_machine_thread_process(machine, t);
			if (!p)
				return -ENOMEM;
			p->executable = NULL;
			p->program++;
		}
		return set_comm(t, ev->u.comm.comm ? ev->u.comm.comm : "");
	}
	case PERF_RECORD_NAMESPACES:
		ps_machine_advance(machine, ev->timestamp);
		return process_namespaces(machine, ev);
	case PERF_RECORD_FORK:
		ps_machine_advance(machine, ev->timestamp);
		return process_fork(machine, ev);
	case PERF_RECORD_EXIT: {
		/* perf keeps exited threads around for later samples (this
		 * machine for the grace period); the state kept for the
		 * samples of a live thread goes */
		struct ps_thread *t;

		ps_machine_advance(machine, ev->timestamp);
		t = find_thread(machine, (int32_t)ev->u.fork.tid);
		if (t)
			ps_machine_thread_exits(machine, t, ev->timestamp);
		return 0;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		ps_machine_advance(machine, ev->timestamp);
		return ps_machine_process_mmap(machine, ev);
	default:
		ps_machine_advance(machine, ev->timestamp);
		return 0;
	}
}
