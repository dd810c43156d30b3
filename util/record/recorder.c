#include "util/record/recorder.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/record/caps.h"
#include "util/record/checkpoint-writer.h"
#include "util/db/db.h"
#include "util/db/stacks.h"
#include "util/error.h"
#include "util/db/naming.h"
#include "util/record/meta.h"
#include "util/symbols/resolver.h"
#include "util/record/sampler.h"
#include "util/record/target.h"

#define DRAIN_MS	10	/* SPEC §5: rings drained on a ~10 ms loop */
#define RESCAN_MS	100	/* new threads sampled within a second */
#define TICK_MS		250
#define ALIVE_MS	50
#define CHURN_MS	1000	/* fast rescans this long after threads came or went */

struct recorder {
	struct record_opts o;
	struct target t;
	char path[PATH_MAX];

	struct sampler *sampler;
	struct resolver *res;
	struct db *db;
	struct db_stacks *dbst;	/* -g */
	struct heap *heap;
	struct checkpoint_writer *cpw;

	struct timespec t0;
	uint64_t ts_base;	/* --append: the timestamps go on after the file's last */
	const char *stop_reason;
	volatile sig_atomic_t stop;
	bool finalised;
	bool warned_rescan;

	pthread_mutex_t lock;
	struct recorder_stats st;
};

static uint64_t ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - t0->tv_sec) * 1000 +
	       (uint64_t)((now.tv_nsec - t0->tv_nsec) / 1000000);
}

/* ---- the start ------------------------------------------------------- */

static int check_debuginfo(struct recorder *r)
{
	int d = resolver__check_debuginfo(r->res);

	if (d == 1) {
		pr_warn("%s has no DWARF line information: results by function only", r->t.exe);
		pr_hint("rebuild with debug info (gcc/clang -g; Rust: debug = true in the "
			"Cargo profile) for source lines");
		return 0;
	}
	if (d < 0) {
		pr_err("%s has no debug information and no symbol table", r->t.exe);
		pr_hint("rebuild with debug info (gcc/clang -g; Rust: debug = true in the "
			"Cargo profile, or -g) and do not strip it");
		return -RSPROF_ENODEBUG;
	}
	return 0;
}

/* The target's mappings read and its debug information checked. */
static int open_resolver(struct recorder *r)
{
	int err = resolver__new(r->t.pid, &r->res);

	if (err) {
		r->res = NULL;
		if (r->t.launched)
			pr_err("cannot read the mappings of '%s': %s", r->o.argv[0],
			       rsprof_strerror(err));
		else if (err == -ESRCH)
			pr_err("process %d exited", (int)r->t.pid);
		else
			pr_err("cannot read the mappings of process %d: %s",
			       (int)r->t.pid, rsprof_strerror(err));
		return err;
	}
	return check_debuginfo(r);
}

static void disable_heap(struct recorder *r, const char *why)
{
	pr_warn("heap tracking unavailable: %s; recording CPU only", why);
	r->o.heap = false;
}

static int start_heap(struct recorder *r, bool before_exec)
{
	struct heap_opts ho = {
		.pid = r->t.pid,
		.exe = r->t.exe,
		.before_exec = before_exec,
		.probes = r->o.heap_probes,
		.attribution = r->o.heap_attribution,
		.sample = r->o.heap_sample,
	};
	const char *why = NULL;
	int err;

	if (!r->o.heap)
		return 0;
	err = caps__check_bpf(&why);
	if (err) {
		if (r->o.heap_required) {
			pr_err("heap tracking needs BPF: %s", why);
			pr_hint("run as root or give rsprof CAP_BPF and CAP_PERFMON");
			return err;
		}
		disable_heap(r, why);
		return 0;
	}
	err = heap__new(&ho, &r->heap);
	if (err) {
		r->heap = NULL;
		if (r->o.heap_required)
			return err;
		disable_heap(r, rsprof_strerror(err));
	}
	return 0;
}

static int open_output(struct recorder *r)
{
	int err;

	if (r->o.output)
		snprintf(r->path, sizeof(r->path), "%s", r->o.output);
	else
		naming__default(r->o.output_dir, r->t.comm, r->t.pid, time(NULL), r->path,
				sizeof(r->path));
	err = db__create(r->path, r->o.append, &r->db);
	if (err) {	/* printed by db__create(), -EEXIST with its hint */
		r->db = NULL;
		if (err == -ENOENT || err == -EACCES || err == -EROFS)
			pr_hint("write the profile elsewhere with -o FILE or RSPROF_OUTPUT_DIR");
		return err;
	}
	if (r->o.call_graph) {
		err = db_stacks__new(r->db, &r->dbst);
		if (err)
			return err;
	}
	if (r->o.retain_ms) {
		err = db__set_retain(r->db, r->o.retain_ms);
		if (err)
			return err;
	}
	return record_meta__start(r->db, &r->o, &r->t, r->heap != NULL, &r->ts_base);
}

int recorder__new(const struct record_opts *o, struct recorder **out)
{
	struct recorder *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->o = *o;
	target__init(&r->t);
	pthread_mutex_init(&r->lock, NULL);

	if (o->argv) {
		err = target__launch(&r->t, o->argv);
	} else {
		err = target__attach(&r->t, o->pid, o->process);
		if (!err)
			err = open_resolver(r);
	}
	if (err)
		goto fail;

	if (o->cpu) {
		struct sampler_opts so = {
			.pid = r->t.pid,
			.freq = o->freq,
			.call_graph = o->call_graph,
			.enable_on_exec = r->t.launched,
		};

		err = sampler__new(&so, &r->sampler);
		if (err) {
			r->sampler = NULL;
			goto fail;
		}
	}
	err = start_heap(r, r->t.launched);
	if (err)
		goto fail;

	/* the file before the launch: a program is not run for nothing */
	err = open_output(r);
	if (err)
		goto fail;
	if (r->t.launched) {
		clock_gettime(CLOCK_MONOTONIC, &r->t0);
		err = target__go(&r->t, o->argv[0]);
		if (err)
			goto fail;
		if (r->sampler)
			sampler__exec_done(r->sampler);
		target__read(&r->t);
		err = record_meta__process_name(r->db, &r->t);	/* errors printed by db.c */
		if (!err)
			err = open_resolver(r);
		if (err)
			goto fail;
	} else {
		clock_gettime(CLOCK_MONOTONIC, &r->t0);
	}
	err = checkpoint_writer__new(r->db, r->dbst, r->res, r->heap, &r->cpw);
	if (err)
		goto fail;

	/* Probes and events are attached: what else root could do is not needed any more. */
	err = caps__drop_unneeded();
	if (err)
		pr_debug(1, "cannot drop capabilities: %s", strerror(-err));
	r->st.heap_on = r->heap != NULL;
	r->st.exit_status = -1;
	pr_debug(1, "recording process %d (%s, %s) into %s", (int)r->t.pid, r->t.comm, r->t.exe,
		 r->path);
	*out = r;
	return 0;
fail:
	target__abort(&r->t);
	if (r->db) {
		db_stacks__delete(r->dbst);
		r->dbst = NULL;
		db__close(r->db);
		r->db = NULL;
		if (!o->append)
			unlink(r->path);
	}
	r->finalised = true;
	recorder__delete(r);
	return err;
}

/* ---- the loop ---------------------------------------------------------- */

static int write_checkpoint(struct recorder *r, uint64_t now_ms)
{
	struct sampler_stats ss = { 0 };
	struct heap_stats hs = { 0 };
	int err;

	if (r->sampler)
		sampler__stats(r->sampler, &ss);
	err = checkpoint_writer__write(r->cpw, r->ts_base + now_ms, ss.lost);
	if (err)
		return err;
	if (r->heap)
		heap__stats(r->heap, &hs);
	pthread_mutex_lock(&r->lock);
	r->st.checkpoints++;
	r->st.live_bytes = hs.live_bytes;
	r->st.peak_bytes = hs.peak_bytes;
	r->st.allocs = hs.allocs;
	r->st.frees = hs.frees;
	r->st.heap_dropped = hs.dropped;
	r->st.unknown_frees = hs.unknown_frees;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

static void update_stats(struct recorder *r, uint64_t now_ms)
{
	struct sampler_stats ss = { 0 };

	if (r->sampler)
		sampler__stats(r->sampler, &ss);
	pthread_mutex_lock(&r->lock);
	r->st.elapsed_ms = now_ms;
	r->st.samples = ss.samples;
	r->st.lost = ss.lost;
	r->st.threads = ss.threads;
	pthread_mutex_unlock(&r->lock);
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000),
			       .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);	/* a signal cuts it short: fine, the loop looks at r->stop */
}

/* The end: last samples, last checkpoint, meta. Runs once. */
static int finish(struct recorder *r, int err)
{
	uint64_t now = ms_since(&r->t0);
	int err2;

	if (r->finalised)
		return err;
	r->finalised = true;
	if (r->sampler)
		sampler__drain(r->sampler, checkpoint_writer__sample, r->cpw);
	if (r->t.launched && r->t.child.pid > 0)
		target__kill(&r->t);
	if (!r->stop_reason)
		r->stop_reason = r->stop ? "signal" : "error";
	update_stats(r, now);
	if (!err)
		err = write_checkpoint(r, now);
	err2 = record_meta__end(r->db, r->sampler, r->heap, r->ts_base + now, r->stop_reason,
				r->t.exit_status);
	pthread_mutex_lock(&r->lock);
	r->st.target_exited = r->t.exit_status >= 0 || !strcmp(r->stop_reason, "target-exit");
	r->st.exit_status = r->t.exit_status;
	r->st.finished = true;
	pthread_mutex_unlock(&r->lock);
	return err ? err : err2;
}

int recorder__run(struct recorder *r)
{
	/* the first rescan at once: a launched program starts its threads early */
	uint64_t now = 0, next_rescan = 0, next_tick = TICK_MS, next_alive = 0, last_change = 0;
	uint64_t next_cp = r->o.interval_ms;
	int err = 0;

	for (;;) {
		bool exited;

		now = ms_since(&r->t0);
		if (r->sampler)
			sampler__drain(r->sampler, checkpoint_writer__sample, r->cpw);
		err = checkpoint_writer__error(r->cpw);
		if (err)
			break;
		update_stats(r, now);
		if (r->stop) {
			r->stop_reason = "signal";
			break;
		}
		/* launched: waitpid() is cheap; attached: look at /proc every 50 ms */
		exited = (r->t.launched || now >= next_alive) && target__exited(&r->t);
		if (!r->t.launched && now >= next_alive)
			next_alive = now + ALIVE_MS;
		if (exited) {
			r->stop_reason = "target-exit";
			break;
		}
		if (r->o.duration_ms && now >= r->o.duration_ms) {
			r->stop_reason = "duration";
			break;
		}
		if (now >= next_cp) {
			/* stamped with the interval's end, so the series is regular */
			err = write_checkpoint(r, next_cp);
			if (err)
				break;
			next_cp += r->o.interval_ms;
			if (next_cp <= now)	/* a slow write: do not pile checkpoints up */
				next_cp = now + r->o.interval_ms;
		}
		/*
		 * Re-read the mappings while the target lives (a launched program
		 * maps its libraries after exec; dlopen): once it is gone, its
		 * last samples could not be placed any more.
		 */
		checkpoint_writer__refresh_maps(r->cpw, now, RESCAN_MS);
		if (now >= next_rescan && r->sampler) {
			int changes = sampler__rescan(r->sampler);

			if (changes == -ENOMEM) {
				err = changes;
				break;
			}
			/* -ESRCH: the next round sees the end; others: try again later */
			if (changes < 0 && changes != -ESRCH && !r->warned_rescan) {
				pr_warn("cannot list the threads of process %d: %s", (int)r->t.pid,
					strerror(-changes));
				r->warned_rescan = true;
			}
			/*
			 * While threads come and go (and for a second after), look
			 * every 10 ms: short-lived threads are found early in their life.
			 */
			if (changes > 0)
				last_change = now;
			next_rescan = now + (now < last_change + CHURN_MS ? DRAIN_MS : RESCAN_MS);
		}
		if (now >= next_tick) {
			if (r->o.tick)
				r->o.tick(r, r->o.tick_ctx);
			next_tick = now + TICK_MS;
		}
		sleep_ms(DRAIN_MS);
	}
	return finish(r, err);
}

void recorder__stop(struct recorder *r)
{
	if (r)
		r->stop = 1;
}

void recorder__stats(struct recorder *r, struct recorder_stats *st)
{
	pthread_mutex_lock(&r->lock);
	*st = r->st;
	pthread_mutex_unlock(&r->lock);
}

const char *recorder__path(const struct recorder *r)
{
	return r->path;
}

pid_t recorder__pid(const struct recorder *r)
{
	return r->t.pid;
}

const char *recorder__comm(const struct recorder *r)
{
	return r->t.comm;
}

const char *recorder__stop_reason(const struct recorder *r)
{
	return r->finalised ? r->stop_reason : NULL;
}

int recorder__delete(struct recorder *r)
{
	int err = 0, err2;

	if (!r)
		return 0;
	if (!r->finalised && r->db)
		err = finish(r, 0);
	sampler__delete(r->sampler);
	heap__delete(r->heap);
	target__kill(&r->t);
	checkpoint_writer__delete(r->cpw);
	db_stacks__delete(r->dbst);
	err2 = db__close(r->db);
	if (!err)
		err = err2;
	resolver__delete(r->res);
	target__exit(&r->t);
	pthread_mutex_destroy(&r->lock);
	free(r);
	return err;
}
