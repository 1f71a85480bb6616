/* Private to src/session: the session's state and what its files share.
 *  - session.c: the public stack API (ps_session_*): opening, each
 *    sample's stack (unwound here or taken from a worker, then merged
 *    with its Python frames), the per-process report;
 *  - feed.c: one reading of the capture: the reader, the pipeline it keeps
 *    in step, the Python side plugged into it, and the filters. The
 *    session owns one, and so does each unwinding worker;
 *  - jobs.c: the unwinding workers (--jobs) and the log they share;
 *  - model.c: the public machine model (ps_model_*), a pipeline that
 *    follows the records its caller reads.
 * session.c uses feed.c and jobs.c, jobs.c and model.c use feed.c; nothing
 * calls back up.
 */
#ifndef PS_SESSION_SESSION_PRIV_H
#define PS_SESSION_SESSION_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/file_hooks.h"
#include "base/message.h"
#include "pipeline/pipeline.h"
#include "pystitch/pystitch.h"
#include "python/python.h"
#include "session/session.h"

/* Samples per block of the work split between the workers: enough to keep
 * a worker's caches warm, few enough to share the work evenly. */
#define PS_SESSION_BLOCK 64

/* ---- feed.c --------------------------------------------------------- */

struct ps_feed {
	/* the session's options, resolved: an archive's own, the time range
	 * of --time percentages, max_stack set */
	struct ps_session_opts opts;
	struct ps_reader *reader;
	struct ps_pipeline *pipeline;
	struct ps_python *python;
	/* where symbols, perf maps and jitdumps are read from: the file
	 * system, or the archive the capture came in */
	struct ps_file_hooks files;
	uint64_t passed; /* samples that passed the filters so far */
	/* samples waiting for their deferred user callchain (NULL until
	 * the first one) */
	struct ps_deferred *deferred;
	bool deferred_flushed; /* the capture ended: what waited goes out */
	bool deferred_full_warned;
	/* the last value of each PERF_SAMPLE_READ counter (NULL until the
	 * first such sample) */
	struct ps_read_tracker *reads;
	char *errmsg; /* the owner's, errmsg_size bytes */
	size_t errmsg_size;
};

/* A sample that passed the filters: seq is its number among them. process
 * is NULL only when out of memory. Valid until the next ps_feed_next(). */
struct ps_feed_sample {
	const struct ps_event *event;
	struct ps_thread *thread;
	struct ps_process *process;
	uint64_t seq;
	/* PERF_SAMPLE_READ: how perf delivers it (ps_stack.deliveries) */
	const struct ps_sample_delivery *deliveries;
	size_t nr_deliveries;
};

/* Open a reading of the capture at path with opts (checked by the caller,
 * max_stack set); with record_names the symbols keep the answers of
 * separate debug files; with unwind_only (a worker's) they keep no symbol
 * tables. 0 or -errno with the reason in errmsg, which the
 * feed keeps writing its failures to; nothing is logged of a failure. A
 * failed feed must still be closed. */
int ps_feed_open(struct ps_feed *feed, const char *path, const struct ps_session_opts *opts,
                 bool record_names, bool unwind_only, char *errmsg, size_t errmsg_size);
void ps_feed_close(struct ps_feed *feed);
/* Read up to the next sample that passes the filters, keeping the model in
 * step with the records before it. 1, 0 at the end, or -errno. */
int ps_feed_next(struct ps_feed *feed, struct ps_feed_sample *out);
/* Read the rest of the capture, keeping the model in step, without
 * stopping at samples. 0 or -errno. */
int ps_feed_read_to_end(struct ps_feed *feed);
/* Whether an event of the capture records user stacks to unwind. */
bool ps_feed_has_user_stacks(const struct ps_feed *feed);
/* A capture that came in an archive is analysed as it was where the
 * archive was made: o takes the options it was made with, files reads
 * only the files it holds (a path it does not hold does not exist), and
 * *path becomes the capture's path as given then, whose directory is
 * searched for perf maps. */
struct ps_archive;
void ps_feed_archive_opts(struct ps_archive *archive, struct ps_session_opts *o,
                          struct ps_file_hooks *files, const char **path);
/* Write the failure to errmsg; returns err. */
int ps_feed_fail(struct ps_feed *feed, int err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* ---- jobs.c --------------------------------------------------------- */

/* deferred.c: samples held until their user callchain arrives */
#define PS_DEFERRED_MAX_HELD 65536
struct ps_deferred;

int ps_deferred_new(struct ps_deferred **out);
void ps_deferred_free(struct ps_deferred *d);
/* ev is a sample whose user callchain was deferred. */
bool ps_deferred_is_deferred(const struct ps_event *ev);
/* Keep a copy of ev. 1: kept, but the oldest had waited too long and is
 * delivered unmerged; -ENOMEM. */
int ps_deferred_hold(struct ps_deferred *d, const struct ps_event *ev);
/* A CALLCHAIN_DEFERRED record: its thread's samples are ready. */
int ps_deferred_release(struct ps_deferred *d, const struct ps_event *rec);
/* The capture ended: every held sample is ready, unmerged. */
void ps_deferred_flush(struct ps_deferred *d);
/* The oldest ready sample, valid until the next call, or NULL. */
const struct ps_event *ps_deferred_next(struct ps_deferred *d, const struct ps_reader *reader);

struct ps_jobs;

/* Route every message of the run through one lock: opts->log becomes the
 * jobs' (the session's own entry). Called at open before anything can
 * log, when opts->jobs > 1. 0 or -ENOMEM. */
int ps_jobs_new(struct ps_session_opts *opts, struct ps_jobs **out);
/* Open the workers' feeds on the capture at path (the one the session's
 * feed reads, with its resolved options) and start their threads. 0
 * (also when the capture cannot be read again: then no worker runs) or
 * -errno with the reason in errmsg. */
int ps_jobs_start(struct ps_jobs *jobs, const char *path, const struct ps_feed *feed, char *errmsg,
                  size_t errmsg_size);
/* Whether the workers are running (else the session unwinds itself). */
bool ps_jobs_running(const struct ps_jobs *jobs);
/* The unwound stack of sample seq from its worker: PCs in pcs and their
 * notes in notes (room for PS_PIPELINE_MAX_PCS each; *noted: whether
 * notes were given), the unwinder's libunwind lookups in steps (room
 * for PS_PIPELINE_MAX_STEPS; *nsteps SIZE_MAX when the worker kept too
 * many to pass on). 0; 1 when the worker ended without it (the
 * capture changed under it?): the caller unwinds it itself; or the
 * worker's -errno with the reason in errmsg. */
int ps_jobs_take(struct ps_jobs *jobs, uint64_t seq, uint64_t *pcs, uint64_t *notes, bool *noted,
                 int *n, enum ps_unwind_stop *stop, struct ps_unwind_step *steps, size_t *nsteps,
                 char *errmsg, size_t errmsg_size);
/* Stop the workers, close their feeds, pass on what they said, free
 * everything. NULL is a no-op. */
void ps_jobs_free(struct ps_jobs *jobs);

/* ---- session.c ------------------------------------------------------ */

/* PYSTITCH_BENCH_STAGE (bench/stages.sh): the session does every sample's
 * work up to this stage and delivers none, so that each stage's cost is
 * the difference between two runs. Read once at open; off, it costs one
 * test per ps_session_next(). */
enum ps_bench_stage {
	PS_BENCH_OFF = 0,
	PS_BENCH_READ, /* read and order the records, keep the model in step */
	PS_BENCH_UNWIND, /* and unwind user stacks, naming nothing */
	PS_BENCH_NAME, /* and build the named stacks */
	PS_BENCH_MERGE, /* and merge their Python frames */
};

struct ps_session {
	enum ps_bench_stage bench_stage;
	struct ps_feed feed;
	/* opts.jobs > 1: the workers that unwind, and the log that
	 * serialises everyone's messages */
	struct ps_jobs *jobs;
	uint64_t pcs[PS_PIPELINE_MAX_PCS];
	uint64_t notes[PS_PIPELINE_MAX_PCS];
	struct ps_unwind_step steps[PS_PIPELINE_MAX_STEPS];
	struct ps_stack stack;
	char errmsg[PS_MSG_MAX];
	bool errmsg_set; /* errmsg holds a worker's failure */
	/* what ps_session_build_ids() last gave */
	struct ps_build_id *build_ids;
	size_t nr_build_ids, build_ids_cap;
	bool native_arch; /* see ps_session_native_arch() */
	bool record_names; /* an archive writer's: see ps_pipeline_name_as_perf() */
	char srccode_file[4096]; /* the stack's srccode_file */
	struct ps_branch *branches; /* the stack's branches */
	size_t cap_branches;
	struct ps_branch_line *branch_lines; /* the stack's branch listing */
	size_t cap_branch_lines;
	struct listing *listing; /* listing.c's buffers */
};

/* ---- extras.c, listing.c -------------------------------------------- */

/* perf script -F brstackinsn's listing of the sample's branch stack into
 * s->stack. 0 or -ENOMEM. */
struct listing;
int ps_session_branch_listing(struct ps_session *s, const struct ps_feed_sample *sample);
void ps_session_listing_free(struct listing *l);

/* Whether perf fetches the sampled instructions of this capture: made on
 * a machine of this architecture, or in pipe mode. */
bool ps_session_native_arch(const struct ps_reader *reader);
/* What the options ask of a sample besides its stack (the sampled
 * instruction, its source line, its branches named), into s->stack. 0
 * or -ENOMEM. */
int ps_session_sample_extras(struct ps_session *s, const struct ps_feed_sample *sample);

#endif /* PS_SESSION_SESSION_PRIV_H */
