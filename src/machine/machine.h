/* The machine model: the threads and address spaces of a capture, kept as
 * they were at the time of the event being processed. Events must be fed
 * in perf's delivery order (PS_ORDER_TIME). Follows perf's rules for
 * thread creation, comm inheritance and map overlap.
 *
 * The interface of src/machine to the other modules (see
 * docs/architecture.md for the header rule); machine.c is the module.
 */
#ifndef PS_MACHINE_MACHINE_H
#define PS_MACHINE_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pystitch/pystitch.h"

/* A mapped object, shared by every map of it. `user` lets the consumer
 * (the pipeline: the object's DSO) hang its own per-object state here. */
struct ps_mapped_object {
	char *name; /* as recorded: a path, "[vdso]", "//anon", ... */
	bool has_build_id;
	uint8_t build_id_size;
	uint8_t build_id[20];
	bool kernel; /* [kernel.kallsyms] and kernel modules */
	/* A kernel module (or other kernel-mode MMAP perf takes for one):
	 * perf's name for its DSO, what perf script prints ("[kvm]" for
	 * /lib/modules/.../kvm.ko); NULL for anything else. */
	char *module_name;
	uint64_t module_start; /* where the module's first MMAP put it */
	/* > 0: executable anonymous memory (JIT code) of this process,
	 * named "/tmp/perf-PID.map" after the perf map that names it */
	int32_t jit_pid;
	/* The file's identity, from MMAP2 (device and inode): two files of
	 * one path (a container's and the host's) are two objects, as perf
	 * keeps two DSOs (its dso_id); ino 0 and no device: not known. */
	bool has_file_id;
	uint32_t maj, min;
	uint64_t ino;
	/* Where its file was seen: the process whose MMAP made the object,
	 * and that process's mount namespace when the capture recorded it
	 * (PERF_RECORD_NAMESPACES), so that the file can be read where that
	 * process saw it (its root in another mount namespace). */
	int32_t mapper_pid;
	bool has_mnt_ns;
	uint64_t mnt_ns_dev, mnt_ns_ino;
	void *user;
	struct ps_mapped_object *next; /* registry chain */
};

struct ps_map {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;
	uint32_t prot, flags;
	/* perf addresses anonymous memory ([stack], //anon, ...) by raw
	 * address instead of by file offset */
	bool identity;
	/* the process's program (its count of execs) when the map was made:
	 * perf keeps a program's maps across an exec, where the new
	 * program's do not cover them (ps_process_map_current()) */
	uint32_t program;
	struct ps_mapped_object *object;
};

/* The address space of one process: maps sorted by start, never
 * overlapping, read through ps_process_find_map() and
 * ps_process_next_map(). Its generation changes whenever the set
 * changes, so caches keyed on it (the unwinder's Dwfl) know when to
 * rebuild. */
struct ps_process;

/* State other modules keep per process, freed with it: one slot each. */
enum ps_process_slot {
	PS_PROCESS_SLOT_UNWIND = 0, /* the pipeline's unwinding state */
	PS_PROCESS_SLOT_RULES, /* the state of the pipeline's frame rules */
	PS_PROCESS_NR_SLOTS,
};

struct ps_thread {
	int32_t pid, tid, ppid;
	/* the address space it shares (its leader's when it was made, see
	 * machine.c); NULL while its pid is unknown */
	struct ps_process *process;
	char *comm; /* ":tid" until a COMM names it */
	bool comm_set;
	/* One consumer's state for the thread (the pipeline's LBR stitching,
	 * which perf keeps on its thread), freed with the thread, when it
	 * exits, and with the machine, by the function
	 * ps_machine_set_thread_free() gave; NULL: none. */
	void *state;
	/* An EXIT record was read for it (and no record of its life since):
	 * perf keeps it for the samples still to come, the machine for the
	 * grace period (ps_machine_set_exit_grace()). */
	bool exited;
	/* machine.c's own: when it exited, its place in the queue of exited
	 * threads and among its process's threads, the tid index's chain */
	uint64_t exit_time;
	bool exit_queued;
	struct ps_thread *exited_prev, *exited_next;
	struct ps_thread *sibling_prev, *sibling_next;
	/* Which of the threads the machine made (1, 2, ...): a thread made
	 * again for a tid (perf's FORK of a tid it knows) has another. */
	uint64_t serial;
	struct ps_thread *next;
};

struct ps_machine;

int ps_machine_new(struct ps_machine **out);
void ps_machine_free(struct ps_machine *machine);

/* The function that frees ps_thread.state (NULL: it is not freed). */
void ps_machine_set_thread_free(struct ps_machine *machine, void (*free_state)(void *state));

/* What a consumer is told of a process's end (each optional).
 *  - died: its last thread exited (an EXIT record, or the thread made
 *    way for a new one of its tid): what the consumer keeps only to go
 *    faster can go; the process and its maps stay for the samples perf
 *    still finds it for (see ps_machine_set_exit_grace()).
 *  - gone: the process is about to be freed, with its maps still there;
 *    comm is the name of its leader (or of the last thread it had), or
 *    NULL. Not called when the machine itself is freed. */
struct ps_machine_hooks {
	void (*died)(void *ctx, struct ps_process *process);
	void (*gone)(void *ctx, struct ps_process *process, const char *comm);
};
void ps_machine_set_hooks(struct ps_machine *machine, const struct ps_machine_hooks *hooks,
                          void *ctx);

/* perf 6.1 keeps an exited thread (and so its process's maps) until a
 * FORK reuses its tid: samples of it still come after its EXIT record
 * (its last moments in the kernel; up to tens of milliseconds after it on
 * a loaded machine, some with a user stack). The machine frees them once
 * the capture's time is grace nanoseconds past the EXIT (past the last
 * thread's EXIT for a process and its threads), so that memory follows
 * what is alive, not what the capture saw; a record without a timestamp
 * frees nothing. UINT64_MAX: keep them as perf does. Default
 * PS_MACHINE_EXIT_GRACE_NS. */
#define PS_MACHINE_EXIT_GRACE_NS 1000000000ULL
void ps_machine_set_exit_grace(struct ps_machine *machine, uint64_t grace);

/* The capture's time has reached timestamp (UINT64_MAX: unknown): free
 * what the grace period has run out for. ps_machine_process_event() does
 * it for its record; a caller that looks threads up for a record before
 * applying it calls it first. */
void ps_machine_advance(struct ps_machine *machine, uint64_t timestamp);

/* Counts of the model's threads and processes (address spaces): made
 * over the capture, and kept at once at most. */
struct ps_machine_stats {
	uint64_t threads_made, processes_made;
	uint64_t threads_freed, processes_freed;
	uint64_t threads_peak, processes_peak;
};
const struct ps_machine_stats *ps_machine_stats(const struct ps_machine *machine);

/* Apply COMM, FORK, EXIT, MMAP, MMAP2 and NAMESPACES (other records are
 * ignored). Returns 0 or -ENOMEM. */
int ps_machine_process_event(struct ps_machine *machine, const struct ps_event *event);

/* The thread perf would find for (pid, tid), created as perf creates it
 * when it has not been seen. NULL only when out of memory. */
struct ps_thread *ps_machine_thread(struct ps_machine *machine, int32_t pid, int32_t tid);
/* The thread of tid, or NULL: a lookup that makes nothing. */
struct ps_thread *ps_machine_find_thread(struct ps_machine *machine, int32_t tid);
/* The address space a thread's samples and maps are in: the one it
 * shares, or for a thread of unknown pid the kernel's. NULL only when out
 * of memory. */
struct ps_process *ps_machine_thread_process(struct ps_machine *machine, struct ps_thread *thread);
/* The address space of a process's leader (created empty when unknown);
 * NULL only when out of memory. */
struct ps_process *ps_machine_process(struct ps_machine *machine, int32_t pid);
/* The kernel's address space (maps recorded with pid -1). */
struct ps_process *ps_machine_kernel(struct ps_machine *machine);

/* What identifies a mapped file besides its name (all optional). */
struct ps_object_key {
	const uint8_t *build_id; /* NULL: not recorded */
	uint8_t build_id_size;
	bool has_file_id; /* maj, min and ino are the file's */
	uint32_t maj, min;
	uint64_t ino;
};

/* Object registry: the same name, with the same build-id or else the same
 * device and inode, gives the same object (what one of them does not
 * know is learnt from the other). key may be NULL. */
struct ps_mapped_object *ps_machine_object(struct ps_machine *machine, const char *name,
                                           const struct ps_object_key *key);
/* Walk every object, e.g. to free consumer state. */
void ps_machine_for_each_object(struct ps_machine *machine,
                                void (*fn)(void *ctx, struct ps_mapped_object *object), void *ctx);
/* Walk every process (not the kernel). */
void ps_machine_for_each_process(struct ps_machine *machine,
                                 void (*fn)(void *ctx, struct ps_process *process), void *ctx);
/* Build-ids recorded in the BUILD_ID feature, for objects whose MMAP2
 * carried none. The features must outlive the machine. */
void ps_machine_set_features(struct ps_machine *machine, const struct ps_features *features);

int32_t ps_process_pid(const struct ps_process *process);
/* The process's mount namespace (device and inode of its nsfs file) as
 * the capture's last PERF_RECORD_NAMESPACES of it said; false when it
 * holds none (perf record --namespaces records them). */
bool ps_process_mount_namespace(const struct ps_process *process, uint64_t *dev, uint64_t *ino);
uint64_t ps_process_generation(const struct ps_process *process);
/* The map holding addr, or NULL. */
const struct ps_map *ps_process_find_map(const struct ps_process *process, uint64_t addr);
/* The maps in address order: the first after map (NULL: the first of
 * all), or NULL past the last. Valid until the next event is applied. */
const struct ps_map *ps_process_next_map(const struct ps_process *process,
                                         const struct ps_map *map);
/* Whether map was made by the program the process runs now, not kept
 * from one it ran before its last exec (a COMM record with
 * PERF_RECORD_MISC_COMM_EXEC): a forked child's inherited maps are its
 * parent's program's, which it runs until it execs. */
bool ps_process_map_current(const struct ps_process *process, const struct ps_map *map);
/* The lowest-addressed map of object, or NULL. */
const struct ps_map *ps_process_first_map_of(const struct ps_process *process,
                                             const struct ps_mapped_object *object);

/* The file the process runs: the object of its first executable file
 * map since its last exec (a COMM record with PERF_RECORD_MISC_COMM_EXEC),
 * or since the capture began for a process that was running then; a
 * forked child inherits its parent's. NULL when no such map was seen
 * (kernel threads, a capture without MMAP records). */
const struct ps_mapped_object *ps_process_executable(const struct ps_process *process);

/* Whether Debian's perf unwinds the process's DWARF stacks: perf's
 * maps->addr_space, which unwind__prepare_access() sets when a map it
 * can unwind with (its judge: whoever keeps the DSOs) is inserted, and
 * which an exec keeps. A new process's copy of its parent's maps (FORK)
 * starts without it, to be judged again on the maps copied. */
bool ps_process_unwind_ready(const struct ps_process *process);
void ps_process_set_unwind_ready(struct ps_process *process);

/* A slot's state, or NULL. */
void *ps_process_state(const struct ps_process *process, enum ps_process_slot slot);
/* Keep state in a slot (it must be empty); free_state (may be NULL) is
 * called on it when the process is freed (after its grace period, or
 * with the machine). */
void ps_process_set_state(struct ps_process *process, enum ps_process_slot slot, void *state,
                          void (*free_state)(void *state));

/* Lowest address of kernel space on x86-64. */
#define PS_KERNEL_START 0xffff800000000000ULL

#endif /* PS_MACHINE_MACHINE_H */
