/* Unwinding on worker threads (ps_session_opts.jobs).
 *
 * Unwinding is most of the work of a DWARF capture, and samples can be
 * unwound independently once each thread's address space at that moment
 * is known. But everything that knows it (the machine model, libdwfl's
 * handles, the per-DSO caches) is built up as the records are read and is
 * not safe to share between threads. So each worker owns a reading of
 * its own over the whole capture (a feed: reader, pipeline, Python side):
 * it reads every record, keeps its own model and unwinders, and unwinds
 * the samples of every (jobs - 1)-th block of PS_SESSION_BLOCK samples
 * (reading and skipping a sample costs little next to unwinding it). It
 * hands each result (the PCs and why the walk ended) to the session
 * through a ring of a bounded number of entries. Entries are written and
 * read outside the lock: the lock only passes counts, entries written one
 * way and entries read in batches the other, since both sides taking it
 * for every sample made them wait on each other (futex calls were a
 * tenth of the session's thread on a C capture).
 *
 * The session itself reads the capture too, and for every sample it would
 * have unwound it takes the worker's result instead, then names the
 * frames, merges the Python frames and delivers the stack, in order, on
 * the caller's thread. Naming stays on that thread: addr2line's inline
 * answers for some addresses depend on which addresses of the same DSO
 * were asked before (see symbols.h), so each DSO's resolver must be asked
 * its distinct addresses in the capture's order. The dependence is that
 * resolver's own bookkeeping (symbols/addr2line.c: which compilation units
 * bfd has read so far, which units' line tables were decoded, and the ELF
 * name a function keeps once a query gave it one); DSOs do not depend on
 * one another. The stacks are exactly those of a session without workers.
 *
 * All the sessions meet the same warnings, since they read the same
 * records. The workers' messages wait in a queue until the session's
 * thread passes them on (the caller's log function is only ever called on
 * the caller's thread), and each is passed on as often as the session that
 * says it most often says it, not once per session. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/hash.h"
#include "base/message.h"
#include "reader/reader.h"
#include "session/session_priv.h"

#define JOBS_MAX 64
/* distinct messages remembered; past this they are passed on unchecked */
#define JOBS_MAX_MESSAGES 4096
/* results a worker may be ahead: enough to ride out the other side's
 * one-time costs (opening a DSO's DWARF, loading kallsyms), within a
 * budget of memory (an entry has room for the deepest stack: 4 KB with
 * the default --max-stack, so 1024 of them) */
#define JOBS_RING_MAX 4096
#define JOBS_RING_MIN 256
#define JOBS_RING_BYTES (4u << 20)

/* One result in a worker's ring; pcs[] holds max_stack entries, then come
 * the room for the unwinder's libunwind lookups (jobs->max_steps of them,
 * nsteps used; UINT32_MAX: more than fit), then max_stack notes of the
 * frames (written only when noted). */
struct jobs_entry {
	uint64_t seq;
	int32_t n;
	uint32_t stop;
	uint32_t nsteps;
	bool noted;
	uint64_t pcs[];
};

/* A distinct message; count[i] is how many times source i said it. */
struct jobs_message {
	char *text;
	uint64_t hash;
	unsigned printed;
	unsigned count[];
};

/* A worker's message waiting for the session's thread. */
struct jobs_pending {
	unsigned source;
	enum ps_log_level level;
	char *text;
};

/* Who logs: worker i, or the session itself (the last index). */
struct jobs_source {
	struct ps_jobs *jobs;
	unsigned index;
};

struct jobs_worker {
	struct ps_jobs *jobs;
	unsigned index;
	pthread_t thread;
	bool started;
	struct ps_session_opts opts; /* its feed's */
	struct ps_feed feed;
	uint64_t pcs[PS_PIPELINE_MAX_PCS];
	uint64_t notes[PS_PIPELINE_MAX_PCS];
	bool noted;
	/* the libunwind lookups of the sample just unwound (the unwinder's) */
	const struct ps_unwind_step *steps;
	size_t nsteps;
	char feed_errmsg[PS_MSG_MAX];
	/* the ring: head and count under jobs->lock. Entries
	 * [head, head + count) are written, and no other entry is read. */
	unsigned char *ring;
	size_t head, count;
	/* the worker's own: where it writes next (head + count once it is
	 * counted) and how many entries it knows are free */
	size_t tail, space;
	/* the session's own: of the entries from head on, consumed ones
	 * read already (given back in batches) and then avail more it knows
	 * are written */
	size_t consumed, avail;
	pthread_cond_t cond; /* count changed, the worker ended, or stop */
	/* who waits on cond: signals are sent only then (a futex call each) */
	bool worker_waits, session_waits;
	bool done;
	int err; /* why it ended: 0 (the capture's end) or -errno */
	char errmsg[PS_MSG_MAX];
};

struct ps_jobs {
	pthread_mutex_t lock;
	ps_log_fn log; /* the caller's */
	void *log_ctx;
	unsigned nr_workers;
	bool running;
	bool stop; /* the session is closing: workers end */
	size_t entry_size;
	size_t ring_size; /* entries in a worker's ring */
	size_t max_pcs, max_steps; /* room in an entry */
	struct jobs_source *sources; /* nr_workers + 1 */
	struct jobs_worker *workers;
	/* messages seen, an open-addressing table by hash (the session's
	 * thread only) */
	struct jobs_message **messages;
	size_t nr_messages, cap_messages;
	/* the workers' messages not passed on yet, under the lock
	 * (nr_pending is also read without it, atomically, as a hint) */
	struct jobs_pending *pending;
	size_t nr_pending, cap_pending;
};

/* The record of msg, added if new; NULL without memory or room. */
static struct jobs_message *message_of(struct ps_jobs *jobs, const char *msg)
{
	uint64_t hash = ps_hash_string(msg, 0);
	struct jobs_message *m;
	size_t mask, i;

	if (jobs->nr_messages >= JOBS_MAX_MESSAGES)
		return NULL;
	if (2 * (jobs->nr_messages + 1) > jobs->cap_messages) {
		size_t cap = jobs->cap_messages ? 2 * jobs->cap_messages : 64;
		struct jobs_message **table = calloc(cap, sizeof(*table));

		if (!table)
			return NULL;
		for (size_t k = 0; k < jobs->cap_messages; k++) {
			m = jobs->messages[k];
			if (!m)
				continue;
			for (i = m->hash & (cap - 1); table[i]; i = (i + 1) & (cap - 1))
				;
			table[i] = m;
		}
		free(jobs->messages);
		jobs->messages = table;
		jobs->cap_messages = cap;
	}
	mask = jobs->cap_messages - 1;
	for (i = hash & mask; (m = jobs->messages[i]); i = (i + 1) & mask)
		if (m->hash == hash && strcmp(m->text, msg) == 0)
			return m;
	m = calloc(1, sizeof(*m) + (jobs->nr_workers + 1) * sizeof(m->count[0]));
	if (!m || !(m->text = strdup(msg))) {
		free(m);
		return NULL;
	}
	m->hash = hash;
	jobs->messages[i] = m;
	jobs->nr_messages++;
	return m;
}

/* Pass a message of source on, unless another source already said it as
 * many times. On the session's thread. */
static void deliver(struct ps_jobs *jobs, unsigned source, enum ps_log_level level, const char *msg)
{
	struct jobs_message *m = message_of(jobs, msg);

	/* without room to remember it, pass it on rather than lose it */
	if (!m || ++m->count[source] > m->printed) {
		if (m)
			m->printed++;
		jobs->log(jobs->log_ctx, level, msg);
	}
}

/* Pass on what the workers said so far. On the session's thread. */
static void drain(struct ps_jobs *jobs)
{
	struct jobs_pending *pending;
	size_t nr;

	/* most of the time there is nothing: no lock taken for that */
	if (!__atomic_load_n(&jobs->nr_pending, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&jobs->lock);
	pending = jobs->pending;
	nr = jobs->nr_pending;
	jobs->pending = NULL;
	__atomic_store_n(&jobs->nr_pending, 0, __ATOMIC_RELAXED);
	jobs->cap_pending = 0;
	pthread_mutex_unlock(&jobs->lock);
	for (size_t i = 0; i < nr; i++) {
		deliver(jobs, pending[i].source, pending[i].level, pending[i].text);
		free(pending[i].text);
	}
	free(pending);
}

/* ps_log_fn of every session of the run. */
static void jobs_log(void *ctx, enum ps_log_level level, const char *msg)
{
	const struct jobs_source *source = ctx;
	struct ps_jobs *jobs = source->jobs;
	char *text;

	if (!jobs->log)
		return;
	if (source->index == jobs->nr_workers) {
		drain(jobs);
		deliver(jobs, source->index, level, msg);
		return;
	}
	text = strdup(msg);
	pthread_mutex_lock(&jobs->lock);
	if (text && ps_array_reserve((void **)&jobs->pending, &jobs->cap_pending,
	                             jobs->nr_pending + 1, sizeof(*jobs->pending), 16)) {
		jobs->pending[jobs->nr_pending] = (struct jobs_pending){ .source = source->index,
			                                                 .level = level,
			                                                 .text = text };
		__atomic_store_n(&jobs->nr_pending, jobs->nr_pending + 1, __ATOMIC_RELAXED);
		text = NULL;
	}
	pthread_mutex_unlock(&jobs->lock);
	/* out of memory: the session says the same, or fails */
	free(text);
}

int ps_jobs_new(struct ps_session_opts *opts, struct ps_jobs **out)
{
	/* the caller's thread is one of the jobs: it names and delivers */
	unsigned n = (opts->jobs > JOBS_MAX ? JOBS_MAX : opts->jobs) - 1;
	struct ps_jobs *jobs;

	*out = NULL;
	jobs = calloc(1, sizeof(*jobs));
	if (!jobs)
		return -ENOMEM;
	pthread_mutex_init(&jobs->lock, NULL);
	jobs->nr_workers = n;
	jobs->log = opts->log;
	jobs->log_ctx = opts->log_ctx;
	jobs->sources = calloc(n + 1, sizeof(*jobs->sources));
	jobs->workers = calloc(n, sizeof(*jobs->workers));
	*out = jobs;
	if (!jobs->sources || !jobs->workers) {
		jobs->nr_workers = 0; /* nothing for ps_jobs_free() to undo */
		return -ENOMEM;
	}
	for (unsigned i = 0; i <= n; i++)
		jobs->sources[i] = (struct jobs_source){ .jobs = jobs, .index = i };
	for (unsigned i = 0; i < n; i++) {
		jobs->workers[i].jobs = jobs;
		jobs->workers[i].index = i;
		pthread_cond_init(&jobs->workers[i].cond, NULL);
	}
	opts->log = jobs_log;
	opts->log_ctx = &jobs->sources[n];
	return 0;
}

static struct jobs_entry *entry_at(struct jobs_worker *w, size_t slot)
{
	return (struct jobs_entry *)(w->ring + (slot % w->jobs->ring_size) * w->jobs->entry_size);
}

static struct ps_unwind_step *entry_steps(const struct ps_jobs *jobs, struct jobs_entry *e)
{
	return (struct ps_unwind_step *)(void *)(e->pcs + jobs->max_pcs);
}

static uint64_t *entry_notes(const struct ps_jobs *jobs, struct jobs_entry *e)
{
	return (uint64_t *)(void *)(entry_steps(jobs, e) + jobs->max_steps);
}

/* Hand one result to the session. false: the session is closing. */
static bool push(struct jobs_worker *w, uint64_t seq, int n, enum ps_unwind_stop stop)
{
	struct ps_jobs *jobs = w->jobs;
	struct jobs_entry *e;
	bool ok;

	if (!w->space) {
		pthread_mutex_lock(&jobs->lock);
		while (w->count == jobs->ring_size && !jobs->stop) {
			w->worker_waits = true;
			pthread_cond_wait(&w->cond, &jobs->lock);
			w->worker_waits = false;
		}
		w->space = jobs->ring_size - w->count;
		ok = !jobs->stop;
		pthread_mutex_unlock(&jobs->lock);
		if (!ok)
			return false;
	}
	/* a free entry: the session reads none past head + count */
	e = entry_at(w, w->tail);
	e->seq = seq;
	e->n = n;
	e->stop = (uint32_t)stop;
	if (n > 0)
		memcpy(e->pcs, w->pcs, (size_t)n * sizeof(e->pcs[0]));
	e->noted = w->noted && n > 0;
	if (e->noted)
		memcpy(entry_notes(jobs, e), w->notes, (size_t)n * sizeof(w->notes[0]));
	e->nsteps = w->steps && w->nsteps <= jobs->max_steps ? (uint32_t)w->nsteps : UINT32_MAX;
	if (e->nsteps != UINT32_MAX && e->nsteps)
		memcpy(entry_steps(jobs, e), w->steps, w->nsteps * sizeof(*w->steps));
	w->tail = (w->tail + 1) % jobs->ring_size;
	w->space--;
	pthread_mutex_lock(&jobs->lock);
	ok = !jobs->stop;
	w->count++;
	if (w->session_waits)
		pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&jobs->lock);
	return ok;
}

/* The worker's next sample to unwind, unwound: its number among the
 * samples that passed the filters, its PCs in w->pcs (*n of them) and why
 * the walk ended. 1, 0 at the end (or when the session closes), or
 * -errno (message in the feed's errmsg). */
static int unwind_next(struct jobs_worker *w, uint64_t *seq, int *n, enum ps_unwind_stop *stop)
{
	struct ps_pipeline *pipeline = w->feed.pipeline;
	struct ps_feed_sample sample;
	int ret;

	while ((ret = ps_feed_next(&w->feed, &sample)) > 0) {
		if (__atomic_load_n(&w->jobs->stop, __ATOMIC_RELAXED))
			return 0; /* the session is closing */
		if ((sample.seq / PS_SESSION_BLOCK) % w->jobs->nr_workers != w->index)
			continue;
		if (!ps_pipeline_has_user_stack(pipeline, sample.event, sample.process))
			continue;
		*n = ps_pipeline_unwind(pipeline, sample.event, sample.process, w->pcs, stop,
		                        w->notes, &w->noted);
		if (*n < 0) {
			ps_feed_fail(&w->feed, *n, "out of memory");
			return *n;
		}
		w->steps = ps_pipeline_steps(pipeline, sample.process, &w->nsteps);
		*seq = sample.seq;
		return 1;
	}
	return ret;
}

static void *worker_main(void *arg)
{
	struct jobs_worker *w = arg;
	struct ps_jobs *jobs = w->jobs;
	enum ps_unwind_stop stop;
	uint64_t seq;
	int n, ret;

	while ((ret = unwind_next(w, &seq, &n, &stop)) > 0)
		if (!push(w, seq, n, stop))
			break;
	pthread_mutex_lock(&jobs->lock);
	w->done = true;
	w->err = ret < 0 ? ret : 0;
	if (ret < 0)
		snprintf(w->errmsg, sizeof(w->errmsg), "%s", w->feed_errmsg);
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&jobs->lock);
	return NULL;
}

int ps_jobs_start(struct ps_jobs *jobs, const char *path, const struct ps_feed *feed, char *errmsg,
                  size_t errmsg_size)
{
	/* every worker reads the capture again: standard input and FIFOs
	 * cannot be, nor a file that is not the one the session reads (it
	 * was replaced, or is still growing) */
	if (!ps_reader_reads_file(feed->reader, path))
		return 0;
	jobs->max_pcs = feed->opts.max_stack;
	/* a lookup per frame, the last one's included (libunwind style only) */
	jobs->max_steps =
	        feed->opts.unwind_style == PS_UNWIND_PERF_LIBUNWIND ? jobs->max_pcs + 2 : 0;
	jobs->entry_size = sizeof(struct jobs_entry) + 2 * jobs->max_pcs * sizeof(uint64_t) +
	                   jobs->max_steps * sizeof(struct ps_unwind_step);
	jobs->ring_size = JOBS_RING_BYTES / jobs->entry_size;
	if (jobs->ring_size > JOBS_RING_MAX)
		jobs->ring_size = JOBS_RING_MAX;
	if (jobs->ring_size < JOBS_RING_MIN)
		jobs->ring_size = JOBS_RING_MIN;
	for (unsigned i = 0; i < jobs->nr_workers; i++) {
		struct jobs_worker *w = &jobs->workers[i];
		int err;

		w->opts = feed->opts;
		w->opts.log_ctx = &jobs->sources[i];
		w->opts.file_used = NULL; /* the session reports the files */
		w->opts.time_percent = false; /* resolved into time_start/end */
		w->opts.jobs = 0;
		w->opts.record = NULL; /* the session's reading tells of records */
		w->ring = malloc(jobs->ring_size * jobs->entry_size);
		if (!w->ring) {
			snprintf(errmsg, errmsg_size, "out of memory");
			return -ENOMEM;
		}
		err = ps_feed_open(&w->feed, path, &w->opts, false, true, w->feed_errmsg,
		                   sizeof(w->feed_errmsg));
		if (err) {
			snprintf(errmsg, errmsg_size, "%s", w->feed_errmsg);
			return err;
		}
		/* a worker unwinds some samples of a process only: the session
		 * keeps libunwind's cache, from the lookups it is handed */
		ps_pipeline_unwind_afresh(w->feed.pipeline);
	}
	for (unsigned i = 0; i < jobs->nr_workers; i++) {
		struct jobs_worker *w = &jobs->workers[i];
		int err = pthread_create(&w->thread, NULL, worker_main, w);

		if (err) {
			snprintf(errmsg, errmsg_size, "cannot start worker thread %u of %u: %s",
			         i + 1, jobs->nr_workers, strerror(err));
			return -err;
		}
		w->started = true;
	}
	jobs->running = true;
	return 0;
}

bool ps_jobs_running(const struct ps_jobs *jobs)
{
	return jobs && jobs->running;
}

/* The entries the session consumed go back to the worker, under the
 * lock. */
static void give_back(struct ps_jobs *jobs, struct jobs_worker *w)
{
	w->head = (w->head + w->consumed) % jobs->ring_size;
	w->count -= w->consumed;
	w->consumed = 0;
	if (w->worker_waits)
		pthread_cond_signal(&w->cond);
}

/* Under the lock: whether the worker wrote entries the session has not
 * read, waiting for them while it runs; they are avail then. */
static bool refill(struct ps_jobs *jobs, struct jobs_worker *w)
{
	give_back(jobs, w);
	while (!w->count && !w->done) {
		w->session_waits = true;
		pthread_cond_wait(&w->cond, &jobs->lock);
		w->session_waits = false;
	}
	w->avail = w->count;
	return w->avail > 0;
}

int ps_jobs_take(struct ps_jobs *jobs, uint64_t seq, uint64_t *pcs, uint64_t *notes, bool *noted,
                 int *n, enum ps_unwind_stop *stop, struct ps_unwind_step *steps, size_t *nsteps,
                 char *errmsg, size_t errmsg_size)
{
	struct jobs_worker *w = &jobs->workers[(seq / PS_SESSION_BLOCK) % jobs->nr_workers];
	bool found = false;
	int err = 0;

	if (jobs->log)
		drain(jobs);
	for (;;) {
		struct jobs_entry *e;
		bool more;

		if (!w->avail) {
			pthread_mutex_lock(&jobs->lock);
			more = refill(jobs, w);
			pthread_mutex_unlock(&jobs->lock);
			if (!more)
				break;
		}
		/* written before it was counted, and the worker writes it no
		 * more until it is given back */
		e = entry_at(w, w->head + w->consumed);
		if (e->seq > seq)
			break;
		found = e->seq == seq;
		if (found) {
			*n = e->n;
			*stop = (enum ps_unwind_stop)e->stop;
			if (e->n > 0)
				memcpy(pcs, e->pcs, (size_t)e->n * sizeof(pcs[0]));
			*noted = e->noted;
			if (e->noted)
				memcpy(notes, entry_notes(jobs, e),
				       (size_t)e->n * sizeof(notes[0]));
			*nsteps = e->nsteps == UINT32_MAX ? SIZE_MAX : e->nsteps;
			if (e->nsteps != UINT32_MAX && e->nsteps)
				memcpy(steps, entry_steps(jobs, e), e->nsteps * sizeof(*steps));
		}
		w->consumed++;
		w->avail--;
		if (found)
			break;
	}
	/* entries go back an eighth of the ring at a time: a worker that
	 * waits for room waits for that many */
	if (found && w->consumed < jobs->ring_size / 8)
		return 0;
	pthread_mutex_lock(&jobs->lock);
	give_back(jobs, w);
	if (!found) {
		/* the worker went past this sample, or ended before it: it
		 * failed, or (a capture changed since it was opened) read other
		 * records, and the session unwinds the sample itself */
		if (w->err) {
			snprintf(errmsg, errmsg_size, "unwinding worker %u: %.400s", w->index + 1,
			         w->errmsg);
			err = w->err;
		} else {
			err = 1;
		}
	}
	pthread_mutex_unlock(&jobs->lock);
	return err;
}

void ps_jobs_free(struct ps_jobs *jobs)
{
	if (!jobs)
		return;
	pthread_mutex_lock(&jobs->lock);
	__atomic_store_n(&jobs->stop, true, __ATOMIC_RELAXED);
	for (unsigned i = 0; jobs->workers && i < jobs->nr_workers; i++)
		pthread_cond_signal(&jobs->workers[i].cond);
	pthread_mutex_unlock(&jobs->lock);
	for (unsigned i = 0; jobs->workers && i < jobs->nr_workers; i++) {
		struct jobs_worker *w = &jobs->workers[i];

		if (w->started)
			pthread_join(w->thread, NULL);
		ps_feed_close(&w->feed); /* closed or never opened: all zero */
		free(w->ring);
		pthread_cond_destroy(&w->cond);
	}
	if (jobs->log)
		drain(jobs);
	for (size_t i = 0; i < jobs->cap_messages; i++) {
		if (jobs->messages[i]) {
			free(jobs->messages[i]->text);
			free(jobs->messages[i]);
		}
	}
	free(jobs->messages);
	free(jobs->workers);
	free(jobs->sources);
	pthread_mutex_destroy(&jobs->lock);
	free(jobs);
}
