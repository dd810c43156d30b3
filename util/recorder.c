#include "util/recorder.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/caps.h"
#include "util/count-map.h"
#include "util/db.h"
#include "util/db-stacks.h"
#include "util/error.h"
#include "util/maps.h"
#include "util/naming.h"
#include "util/record-meta.h"
#include "util/resolver.h"
#include "util/sampler.h"
#include "util/symbol.h"
#include "util/target.h"

#define DRAIN_MS	10	/* SPEC §5: rings drained on a ~10 ms loop */
#define RESCAN_MS	100	/* new threads sampled within a second */
#define TICK_MS		250
#define ALIVE_MS	50
#define CHURN_MS	1000	/* fast rescans this long after threads came or went */
#define MAX_STACK	128
/* CPU stacks take ids far above the heap tracker's, so both fit in `stacks` */
#define CPU_STACK_ID0	(1LL << 40)

/* A growable array of elements of one size. */
struct vec {
	void *v;
	size_t n, cap, elem;
};

static void *vec__push(struct vec *a)
{
	if (a->n == a->cap) {
		size_t ncap = a->cap ? a->cap * 2 : 256;
		void *nv = realloc(a->v, ncap * a->elem);

		if (!nv)
			return NULL;
		a->v = nv;
		a->cap = ncap;
	}
	return (char *)a->v + a->elem * a->n++;
}

/* -g: a deduplicated call stack (seed 004), written once. */
struct stack_ent {
	uint64_t hash;
	int64_t id;
	uint64_t *addrs;
	int depth;
};

struct recorder {
	struct record_opts o;
	struct target t;
	char path[PATH_MAX];

	struct sampler *sampler;
	struct resolver *res;
	struct db *db;
	struct db_stacks *dbst;	/* -g */
	struct heap *heap;

	struct timespec t0;
	uint64_t ts_base;	/* --append: the timestamps go on after the file's last */
	uint64_t last_cp_ms;
	uint64_t lost_at_cp;	/* sampler's lost total at the previous checkpoint */
	const char *stop_reason;
	volatile sig_atomic_t stop;
	bool finalised;
	bool maps_written;
	bool maps_stale;	/* a sample fell outside the known mappings: re-read them */
	uint64_t maps_read_ms;

	struct count_map cpu;		/* ip -> samples, this checkpoint */
	struct count_map known;		/* addresses whose symbols are in the file */
	struct vec cpu_rows;		/* struct cpu_count */
	struct vec syms;		/* const struct symbol * */
	uint64_t *heap_new;		/* heap__collect()'s new addresses */
	size_t heap_new_n, heap_new_cap;

	/* -g */
	struct count_map stack_counts;	/* stack hash -> samples, this checkpoint */
	struct vec stacks;		/* struct stack_ent, every stack of the file */
	struct count_map stack_index;	/* hash -> index + 1 in stacks */
	size_t stacks_written;
	struct vec stack_rows;		/* struct stack_count, this checkpoint */
	int64_t next_stack_id;
	bool sample_err;
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
	r->cpu_rows.elem = sizeof(struct cpu_count);
	r->syms.elem = sizeof(const struct symbol *);
	r->stacks.elem = sizeof(struct stack_ent);
	r->stack_rows.elem = sizeof(struct stack_count);
	r->next_stack_id = CPU_STACK_ID0;
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
		err = record_meta__process_name(r->db, &r->t);
		if (err)	/* printed by db.c; and, as before the split, with this line */
			pr_err("cannot read the mappings of '%s': %s", o->argv[0],
			       rsprof_strerror(err));
		else
			err = open_resolver(r);
		if (err)
			goto fail;
	} else {
		clock_gettime(CLOCK_MONOTONIC, &r->t0);
	}

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

/* ---- sampling and checkpoints ------------------------------------------ */

static uint64_t stack_hash(const uint64_t *a, unsigned int n)
{
	uint64_t h = 1469598103934665603ULL ^ n;

	for (unsigned int i = 0; i < n; i++) {
		h ^= a[i];
		h *= 1099511628211ULL;
		h ^= h >> 29;
	}
	return h ? h : 1;
}

static void on_sample(void *ctx, pid_t tid, uint64_t ip, const uint64_t *chain,
		      unsigned int depth)
{
	struct recorder *r = ctx;
	bool fresh;

	if (count_map__add(&r->cpu, ip, 1, &fresh))
		r->sample_err = true;
	if (fresh && !r->maps_stale && !count_map__has(&r->known, ip) &&
	    !maps__find(resolver__maps(r->res), ip))
		r->maps_stale = true;
	if (r->o.call_graph && depth) {
		uint64_t h = stack_hash(chain, depth);

		if (count_map__add(&r->stack_counts, h, 1, &fresh))
			r->sample_err = true;
		if (!count_map__has(&r->stack_index, h)) {
			for (unsigned int i = 0; i < depth && !r->maps_stale; i++)
				if (!maps__find(resolver__maps(r->res), chain[i]))
					r->maps_stale = true;
			struct stack_ent *e = vec__push(&r->stacks);

			if (!e) {
				r->sample_err = true;
				return;
			}
			e->hash = h;
			e->id = r->next_stack_id++;
			e->depth = (int)(depth > MAX_STACK ? MAX_STACK : depth);
			e->addrs = malloc(sizeof(uint64_t) * e->depth);
			if (!e->addrs) {
				r->stacks.n--;
				r->sample_err = true;
				return;
			}
			memcpy(e->addrs, chain, sizeof(uint64_t) * e->depth);
			if (count_map__add(&r->stack_index, h, r->stacks.n, &fresh))
				r->sample_err = true;
		}
	}
}

/* The symbol of addr goes into this checkpoint unless the file has it already. */
static int want_symbol(struct recorder *r, uint64_t addr, bool *maps_refreshed)
{
	const struct symbol *sym, **slot;
	bool fresh;

	if (count_map__has(&r->known, addr))
		return 0;
	/* an address in no known mapping: a library loaded since (dlopen) */
	if (!*maps_refreshed && !maps__find(resolver__maps(r->res), addr)) {
		*maps_refreshed = true;
		if (!resolver__refresh_maps(r->res))
			r->maps_written = false;
	}
	sym = resolver__resolve(r->res, addr);
	if (!sym)
		return -ENOMEM;
	slot = vec__push(&r->syms);
	if (!slot)
		return -ENOMEM;
	*slot = sym;
	return count_map__add(&r->known, addr, 1, &fresh);
}

/* Index + 1 of the stack with hash h in r->stacks, 0 when unknown. */
static size_t stack_index_of(struct recorder *r, uint64_t h)
{
	return (size_t)count_map__get(&r->stack_index, h);
}

/* -g: samples per stack of this checkpoint, after the checkpoint (its id) is written. */
static int write_stack_counts(struct recorder *r, int64_t cid)
{
	struct count_map *m = &r->stack_counts;

	r->stack_rows.n = 0;
	for (size_t i = 0; i < m->cap; i++) {
		struct stack_count *c;
		size_t idx;

		if (!m->keys[i])
			continue;
		idx = stack_index_of(r, m->keys[i]);
		if (!idx)
			continue;
		c = vec__push(&r->stack_rows);
		if (!c)
			return -ENOMEM;
		c->stack_id = ((struct stack_ent *)r->stacks.v)[idx - 1].id;
		c->count = m->vals[i];
	}
	return db_stacks__write(r->dbst, cid, r->stack_rows.v, r->stack_rows.n);
}

static int write_checkpoint(struct recorder *r, uint64_t now_ms)
{
	struct checkpoint cp = { 0 };
	struct sampler_stats ss = { 0 };
	struct heap_stats hs = { 0 };
	struct vec new_stacks = { .elem = sizeof(struct stack_rec) };
	bool refreshed = false;
	int64_t id;
	int err = 0;

	r->cpu_rows.n = 0;
	r->syms.n = 0;
	for (size_t i = 0; i < r->cpu.cap; i++) {
		struct cpu_count *c;

		if (!r->cpu.keys[i])
			continue;
		c = vec__push(&r->cpu_rows);
		if (!c)
			return -ENOMEM;
		c->addr = r->cpu.keys[i];
		c->count = r->cpu.vals[i];
	}
	if (r->cpu.has_zero) {
		struct cpu_count *c = vec__push(&r->cpu_rows);

		if (!c)
			return -ENOMEM;
		c->addr = 0;
		c->count = r->cpu.zero;
	}
	for (size_t i = 0; i < r->cpu_rows.n && !err; i++)
		err = want_symbol(r, ((struct cpu_count *)r->cpu_rows.v)[i].addr, &refreshed);

	/* -g: the stacks first seen since the last checkpoint */
	for (size_t i = r->stacks_written; i < r->stacks.n && !err; i++) {
		struct stack_ent *e = (struct stack_ent *)r->stacks.v + i;
		struct stack_rec *s = vec__push(&new_stacks);

		if (!s) {
			err = -ENOMEM;
			break;
		}
		s->id = e->id;
		s->hash = e->hash;
		s->addrs = e->addrs;
		s->depth = e->depth;
		for (int d = 0; d < e->depth && !err; d++)
			err = want_symbol(r, e->addrs[d], &refreshed);
	}
	if (!err && r->heap) {
		r->heap_new_n = 0;
		err = heap__collect(r->heap, r->res, &cp, &r->heap_new, &r->heap_new_n,
				    &r->heap_new_cap);
		for (size_t i = 0; i < r->heap_new_n && !err; i++)
			err = want_symbol(r, r->heap_new[i], &refreshed);
		/* the heap's new stacks go in the same list as ours */
		for (size_t i = 0; i < cp.n_stacks && new_stacks.n && !err; i++) {
			struct stack_rec *s = vec__push(&new_stacks);

			if (!s)
				err = -ENOMEM;
			else
				*s = cp.stacks[i];
		}
	}
	if (new_stacks.n) {
		cp.stacks = new_stacks.v;
		cp.n_stacks = new_stacks.n;
	}
	if (err) {
		free(new_stacks.v);
		return err;
	}
	if (r->sampler)
		sampler__stats(r->sampler, &ss);
	cp.timestamp_ms = r->ts_base + now_ms;
	cp.cpu = r->cpu_rows.v;
	cp.n_cpu = r->cpu_rows.n;
	cp.symbols = r->syms.v;
	cp.n_symbols = r->syms.n;
	cp.lost_samples = ss.lost - r->lost_at_cp;
	err = db__write_checkpoint(r->db, &cp, &id);
	free(new_stacks.v);
	if (!err && r->dbst)
		err = write_stack_counts(r, id);
	if (err)
		return err;
	r->lost_at_cp = ss.lost;
	r->stacks_written = r->stacks.n;
	count_map__clear(&r->cpu);
	count_map__clear(&r->stack_counts);
	if (!r->maps_written) {
		err = db__write_maps(r->db, resolver__maps(r->res));
		if (err)
			return err;
		r->maps_written = true;
	}
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
	r->last_cp_ms = now_ms;
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
		sampler__drain(r->sampler, on_sample, r);
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
			sampler__drain(r->sampler, on_sample, r);
		if (r->sample_err) {
			err = -ENOMEM;
			break;
		}
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
		if (r->maps_stale && now >= r->maps_read_ms + RESCAN_MS) {
			if (!resolver__refresh_maps(r->res))
				r->maps_written = false;
			r->maps_stale = false;
			r->maps_read_ms = now;
		}
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
	db_stacks__delete(r->dbst);
	err2 = db__close(r->db);
	if (!err)
		err = err2;
	resolver__delete(r->res);
	for (size_t i = 0; i < r->stacks.n; i++)
		free(((struct stack_ent *)r->stacks.v)[i].addrs);
	free(r->stacks.v);
	free(r->stack_rows.v);
	free(r->cpu_rows.v);
	free(r->syms.v);
	free(r->heap_new);
	count_map__free(&r->cpu);
	count_map__free(&r->known);
	count_map__free(&r->stack_counts);
	count_map__free(&r->stack_index);
	target__exit(&r->t);
	pthread_mutex_destroy(&r->lock);
	free(r);
	return err;
}
