/* The end of threads and processes: what holds a process (its threads,
 * the pid index), EXIT records, and the grace period after them, at the
 * end of which the machine frees what perf would keep until a FORK reused
 * the tid (see ps_machine_set_exit_grace()).
 */
#include "machine/machine_priv.h"

#include <stdlib.h>

void ps_machine_set_hooks(struct ps_machine *machine, const struct ps_machine_hooks *hooks,
                          void *ctx)
{
	machine->hooks = hooks ? *hooks : (struct ps_machine_hooks){ 0 };
	machine->hooks_ctx = ctx;
}

void ps_machine_set_exit_grace(struct ps_machine *machine, uint64_t grace)
{
	machine->grace = grace;
}

const struct ps_machine_stats *ps_machine_stats(const struct ps_machine *machine)
{
	return &machine->stats;
}

/* ---- the end of processes and threads ------------------------------ */

static void dead_unqueue(struct ps_machine *machine, struct ps_process *p)
{
	if (!p->dead_queued)
		return;
	if (p->dead_prev)
		p->dead_prev->dead_next = p->dead_next;
	else
		machine->dead_head = p->dead_next;
	if (p->dead_next)
		p->dead_next->dead_prev = p->dead_prev;
	else
		machine->dead_tail = p->dead_prev;
	p->dead_prev = p->dead_next = NULL;
	p->dead_queued = false;
}

static void dead_enqueue(struct ps_machine *machine, struct ps_process *p, uint64_t time)
{
	dead_unqueue(machine, p);
	p->death_time = time;
	p->dead_prev = machine->dead_tail;
	if (machine->dead_tail)
		machine->dead_tail->dead_next = p;
	else
		machine->dead_head = p;
	machine->dead_tail = p;
	p->dead_queued = true;
}

static void exited_unqueue(struct ps_machine *machine, struct ps_thread *t)
{
	if (!t->exit_queued)
		return;
	if (t->exited_prev)
		t->exited_prev->exited_next = t->exited_next;
	else
		machine->exited_head = t->exited_next;
	if (t->exited_next)
		t->exited_next->exited_prev = t->exited_prev;
	else
		machine->exited_tail = t->exited_prev;
	t->exited_prev = t->exited_next = NULL;
	t->exit_queued = false;
}

static void exited_enqueue(struct ps_machine *machine, struct ps_thread *t)
{
	t->exited_prev = machine->exited_tail;
	if (machine->exited_tail)
		machine->exited_tail->exited_next = t;
	else
		machine->exited_head = t;
	machine->exited_tail = t;
	t->exit_queued = true;
}

static void tell_gone(struct ps_machine *machine, struct ps_process *p, const char *comm)
{
	if (p->gone_told)
		return;
	p->gone_told = true;
	if (machine->hooks.gone)
		machine->hooks.gone(machine->hooks_ctx, p, comm);
}

static void process_destroy(struct ps_machine *machine, struct ps_process *p, const char *comm)
{
	dead_unqueue(machine, p);
	tell_gone(machine, p, comm);
	ps_machine_process_release(p);
	free(p);
	machine->stats.processes_freed++;
	machine->processes_kept--;
}

/* Let go of a hold on p; comm names it if this frees it. */
static void process_put(struct ps_machine *machine, struct ps_process *p, const char *comm)
{
	if (--p->refs == 0)
		process_destroy(machine, p, comm);
}

/* Take p off the pid index: it is no longer its pid's current one, or it
 * has no thread left (perf reaches maps through threads alone: a later
 * thread of the pid gets a leader, and maps, of its own). */
void ps_machine_process_unlist(struct ps_machine *machine, struct ps_process *p, const char *comm)
{
	struct ps_process **pp = &machine->processes[ps_machine_hash_pid(p->pid)];

	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	p->next = NULL;
	p->listed = false;
	process_put(machine, p, comm);
}

/* The last live thread of p is gone at time (UINT64_MAX: unknown, and
 * then p waits for no grace period to end: it stays while held). */
static void process_dies(struct ps_machine *machine, struct ps_process *p, uint64_t time)
{
	if (machine->hooks.died)
		machine->hooks.died(machine->hooks_ctx, p);
	if (time != UINT64_MAX)
		dead_enqueue(machine, p, time);
}

static void process_lives(struct ps_machine *machine, struct ps_process *p)
{
	if (p->live++ == 0)
		dead_unqueue(machine, p);
}

void ps_machine_thread_attach(struct ps_machine *machine, struct ps_thread *t, struct ps_process *p)
{
	t->process = p;
	if (!p)
		return;
	t->sibling_prev = NULL;
	t->sibling_next = p->threads;
	if (p->threads)
		p->threads->sibling_prev = t;
	p->threads = t;
	p->refs++;
	if (!t->exited)
		process_lives(machine, p);
}

void ps_machine_thread_detach(struct ps_machine *machine, struct ps_thread *t)
{
	struct ps_process *p = t->process;

	exited_unqueue(machine, t);
	if (!p)
		return;
	if (t->sibling_prev)
		t->sibling_prev->sibling_next = t->sibling_next;
	else
		p->threads = t->sibling_next;
	if (t->sibling_next)
		t->sibling_next->sibling_prev = t->sibling_prev;
	t->sibling_prev = t->sibling_next = NULL;
	t->process = NULL;
	if (!t->exited && --p->live == 0)
		process_dies(machine, p, machine->have_now ? machine->now : UINT64_MAX);
	/* held by the index too, but unreachable now */
	if (!p->threads && p->listed)
		ps_machine_process_unlist(machine, p, t->comm);
	process_put(machine, p, t->comm);
}

/* An EXIT record for t, at time (UINT64_MAX: unknown). */
void ps_machine_thread_exits(struct ps_machine *machine, struct ps_thread *t, uint64_t time)
{
	ps_machine_free_thread_state(machine, t);
	if (t->exited)
		return;
	t->exited = true;
	t->exit_time = time;
	if (time != UINT64_MAX)
		exited_enqueue(machine, t);
	if (t->process && --t->process->live == 0)
		process_dies(machine, t->process, time);
}

/* A record of t's life after its EXIT record (an exec from another thread
 * of its process hands the leader's tid on to that thread). */
void ps_machine_thread_lives(struct ps_machine *machine, struct ps_thread *t)
{
	if (!t->exited)
		return;
	t->exited = false;
	exited_unqueue(machine, t);
	if (t->process)
		process_lives(machine, t->process);
}

/* Free a process whose grace period is over, with its threads. */
static void reap_process(struct ps_machine *machine, struct ps_process *p)
{
	const struct ps_thread *leader = p->threads;

	for (const struct ps_thread *t = p->threads; t; t = t->sibling_next)
		if (t->tid == p->pid)
			leader = t;
	dead_unqueue(machine, p);
	tell_gone(machine, p, leader ? leader->comm : NULL);
	/* held while its threads go, so that it is freed once, here */
	p->refs++;
	while (p->threads)
		ps_machine_remove_thread(machine, p->threads);
	if (p->listed)
		ps_machine_process_unlist(machine, p, NULL);
	process_put(machine, p, NULL);
}

static bool grace_over(const struct ps_machine *machine, uint64_t since)
{
	return machine->grace != UINT64_MAX && since <= machine->now &&
	       machine->now - since >= machine->grace;
}

void ps_machine_advance(struct ps_machine *machine, uint64_t timestamp)
{
	if (timestamp == UINT64_MAX)
		return;
	if (machine->have_now && timestamp <= machine->now)
		return;
	machine->now = timestamp;
	machine->have_now = true;
	while (machine->dead_head && grace_over(machine, machine->dead_head->death_time))
		reap_process(machine, machine->dead_head);
	while (machine->exited_head && grace_over(machine, machine->exited_head->exit_time)) {
		struct ps_thread *t = machine->exited_head;

		exited_unqueue(machine, t);
		/* the threads of a dead process go with it; a live process
		 * keeps its leader, through which its next threads find it */
		if (t->process && (t->process->live == 0 || t->tid == t->pid))
			continue;
		ps_machine_remove_thread(machine, t);
	}
}
