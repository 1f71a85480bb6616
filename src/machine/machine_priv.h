/* Private to src/machine: the machine's and processes' state, and what
 * its files share.
 *  - machine.c: the handle, objects, processes by pid, threads, records;
 *  - maps.c: a process's maps (perf's overlap rules, MMAP records);
 *  - lifetime.c: what holds a process, exits and the grace period after
 *    them, freeing what has ended.
 */
#ifndef PS_MACHINE_MACHINE_PRIV_H
#define PS_MACHINE_MACHINE_PRIV_H

#include "machine/machine.h"

#include "base/hash.h"

#define BUCKETS 4096

struct ps_process {
	int32_t pid;
	bool has_mnt_ns; /* from PERF_RECORD_NAMESPACES */
	uint64_t mnt_ns_dev, mnt_ns_ino;
	struct ps_map *maps;
	size_t nr_maps, cap_maps;
	uint64_t generation;
	uint32_t program; /* its execs: see struct ps_map's program */
	bool unwind_ready;
	/* the file it runs (ps_process_executable()); NULL until known */
	const struct ps_mapped_object *executable;
	struct {
		void *state;
		void (*free_state)(void *state);
	} slots[PS_PROCESS_NR_SLOTS];
	/* held by each thread on its list, and by the pid index while listed */
	unsigned refs;
	unsigned live; /* its threads that have not exited */
	bool listed;
	bool gone_told; /* the gone hook has seen it */
	struct ps_thread *threads;
	/* in the queue of dead processes: since when */
	bool dead_queued;
	uint64_t death_time;
	struct ps_process *dead_prev, *dead_next;
	struct ps_process *next; /* the pid index's chain */
};

struct ps_machine {
	struct ps_thread *threads[BUCKETS];
	struct ps_process *processes[BUCKETS]; /* each pid's leader's */
	struct ps_mapped_object *objects[BUCKETS];
	struct ps_process kernel;
	const struct ps_features *features;
	void (*free_thread_state)(void *state);
	struct ps_machine_hooks hooks;
	void *hooks_ctx;
	/* the capture's time as far as the records have told it */
	uint64_t grace;
	uint64_t now;
	bool have_now;
	/* exited threads and dead processes, oldest first, each waiting for
	 * its grace period to run out */
	struct ps_thread *exited_head, *exited_tail;
	struct ps_process *dead_head, *dead_tail;
	struct ps_machine_stats stats;
	uint64_t threads_kept, processes_kept;
};

static inline size_t ps_machine_hash_pid(int32_t v)
{
	return (size_t)(ps_hash_u64((uint32_t)v) % BUCKETS);
}

static inline void ps_machine_count_process(struct ps_machine *machine)
{
	machine->stats.processes_made++;
	if (++machine->processes_kept > machine->stats.processes_peak)
		machine->stats.processes_peak = machine->processes_kept;
}

/* ---- machine.c ------------------------------------------------------ */

/* Free a thread's consumer state (ps_thread.state). */
void ps_machine_free_thread_state(struct ps_machine *machine, struct ps_thread *t);
/* Take a thread off the index and free it, letting go of its process. */
void ps_machine_remove_thread(struct ps_machine *machine, struct ps_thread *victim);
/* Free what a process holds: the consumers' slots and its maps. */
void ps_machine_process_release(struct ps_process *p);

/* ---- maps.c --------------------------------------------------------- */

/* MMAP and MMAP2: the map goes into the address space its thread holds
 * (the kernel's for kernel maps). 0 or -ENOMEM. */
int ps_machine_process_mmap(struct ps_machine *machine, const struct ps_event *ev);
/* A new process's maps: a copy of its parent's. 0 or -ENOMEM. */
int ps_machine_clone_maps(struct ps_process *to, const struct ps_process *from);

/* ---- lifetime.c ----------------------------------------------------- */

/* t holds p from now on (p may be NULL: a thread of unknown pid). */
void ps_machine_thread_attach(struct ps_machine *machine, struct ps_thread *t,
                              struct ps_process *p);
/* t leaves the queue of exited threads and lets go of its process,
 * which is freed when nothing holds it. */
void ps_machine_thread_detach(struct ps_machine *machine, struct ps_thread *t);
/* An EXIT record for t, at time (UINT64_MAX: unknown). */
void ps_machine_thread_exits(struct ps_machine *machine, struct ps_thread *t, uint64_t time);
/* A record of t's life after its EXIT record. */
void ps_machine_thread_lives(struct ps_machine *machine, struct ps_thread *t);
/* Take p off the pid index (comm names it if that frees it). */
void ps_machine_process_unlist(struct ps_machine *machine, struct ps_process *p, const char *comm);

#endif /* PS_MACHINE_MACHINE_PRIV_H */
