#include "util/record/recorder.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "util/record/caps.h"
#include "util/record/checkpoint-writer.h"
#include "util/record/proc.h"
#include "preload/heap-region.h"
#include "util/db/db.h"
#include "util/db/write/history.h"
#include "util/db/write/stacks.h"
#include "util/db/write/writer.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/heap/alloc-fn.h"
#include "util/heap/history.h"
#include "util/heap/inject.h"
#include "util/db/naming.h"
#include "util/record/meta.h"
#include "util/record/proc.h"
#include "util/record/process-tree.h"
#include "util/record/scope.h"
#include "util/push/pusher.h"
#include "util/symbols/frame-pointers.h"
#include "util/symbols/resolver.h"
#include "util/symbols/symcache.h"
#include "util/record/sampler.h"
#include "util/record/target.h"

#define DRAIN_MS	10	/* the rings are drained on a ~10 ms loop */
#define RESCAN_MS	100	/* --no-inherit: new threads sampled within 0.1 s */
#define TICK_MS		250
#define ALIVE_MS	50
#define CHURN_MS	1000	/* fast rescans this long after threads came or went */
#define CATCH_UP	10	/* checkpoints written late rather than skipped */

struct recorder {
	struct record_opts o;
	struct target t;
	char path[PATH_MAX];

	struct sampler *sampler;
	struct process_tree *pt;
	struct db_writer *db;
	struct heap *heap;
	struct alloc_fns *alloc_fns;	/* the heap tracker's wrappers: built-in + --alloc-fn */
	struct heap_launch *heap_launch;	/* until heap__new() takes it */
	const char *heap_why;			/* why uprobes, not the in-process tracker */
	struct checkpoint_writer *cpw;
	struct history_writer *hw;	/* --alloc-history */
	struct pusher *pusher;		/* --push */
	struct scope *scope;		/* -a: whose samples are kept */

	struct timespec t0;
	uint64_t ts_base;	/* --append: the timestamps go on after the file's last */
	const char *stop_reason;
	volatile sig_atomic_t stop;
	bool finalised;
	bool warned_rescan;
	bool discard;		/* nothing recorded has debug info: the file goes */
	bool fp_checked;	/* launched, -g: frame pointers of the busiest program */
	bool keep_dac;		/* CAP_DAC_OVERRIDE kept permitted for the end */
	pid_t gained;		/* a process that exec'd into privileges (stop) */
	struct hashmap exec_unchecked;	/* exec'd, gone before its check: pid -> time (ns) */

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

/*
 * --call-graph fp walks the frame-pointer chain: say once, when the program
 * that got the samples (not a wrapper around it) keeps none in its own code
 * and its CPU stacks will be short.
 */
static void check_frame_pointers(struct recorder *r, struct resolver *res, const char *exe)
{
	struct fp_census c;

	if (!r->o.call_graph || !r->o.call_graph_fp || !r->o.cpu || !res ||
	    resolver__frame_pointers(res, &c))
		return;
	pr_debug(1, "%s: %u of %u functions with a stack frame set up %%rbp", exe,
		 c.with_fp, c.functions);
	if (!frame_pointers__missing(&c))
		return;
	pr_warn("%s keeps no frame pointers (%u of %u functions of its own code set one up): "
		"with --call-graph fp its CPU call stacks stop after a frame or two", exe,
		c.with_fp, c.functions);
	pr_hint("record with -g (--call-graph dwarf: unwound through the code's CFI), or build "
		"with -fno-omit-frame-pointer (C, C++) or -C force-frame-pointers=yes (Rust)");
}

/*
 * An attached process: its program's debug information, checked at the
 * start (a launched command may be a wrapper: checked at the end). With
 * inherit, a process without any (a shell) may start programs that have
 * it: a warning now, the verdict at the end.
 */
static int check_attached(struct recorder *r, pid_t pid)
{
	char exe[PATH_MAX] = "?";
	struct resolver *res;
	int d, err = resolver__new(pid, &res);

	if (err) {
		if (err == -ESRCH)
			pr_err("process %d exited", (int)pid);
		else
			pr_err("cannot read the mappings of process %d: %s", (int)pid,
			       rsprof_strerror(err));
		return err;
	}
	d = resolver__check_debuginfo(res);
	proc__exe(pid, exe, sizeof(exe));
	check_frame_pointers(r, res, exe);
	resolver__delete(res);
	if (d == 1) {
		pr_warn("%s has no DWARF line information: results by function only", exe);
		pr_hint("rebuild with debug info (gcc/clang -g; Rust: debug = true in the "
			"Cargo profile) for source lines");
		return 0;
	}
	if (d < 0 && r->o.inherit) {
		pr_warn("%s has no debug information and no symbol table: its own samples "
			"will be [unknown]", exe);
		pr_hint("the programs it starts are recorded too; rsprof exits with status 5 "
			"at the end if none of them has debug information either");
		return 0;
	}
	if (d < 0) {
		pr_err("%s has no debug information and no symbol table", exe);
		pr_hint("rebuild with debug info (gcc/clang -g; Rust: debug = true in the "
			"Cargo profile, or -g) and do not strip it");
		return -RSPROF_ENODEBUG;
	}
	return 0;
}

static void disable_heap(struct recorder *r, const char *why)
{
	pr_warn("heap tracking unavailable: %s; recording CPU only", why);
	r->o.heap = false;
}

/*
 * Launch: before the fork, which heap backend (util/heap/heap.h) and, for
 * the in-process tracker, its directory and the environment to exec with.
 */
static int plan_heap(struct recorder *r)
{
	char exe[PATH_MAX];
	int err;

	if (!r->o.heap || !r->o.argv || proc__which(r->o.argv[0], exe, sizeof(exe)))
		return 0;	/* not found: target__launch() says so */
	err = heap_launch__new(exe, r->o.heap_backend, r->o.heap_probes, r->o.heap_sample,
			       r->o.inherit, &r->heap_launch, &r->heap_why);
	if (err) {
		r->heap_launch = NULL;
		if (r->o.heap_required)
			return err;
		disable_heap(r, rsprof_strerror(err));
		return 0;
	}
	if (r->heap_why && r->o.alloc_history) {
		pr_err("--alloc-history needs the in-process heap tracker, which cannot serve "
		       "'%s': %s", r->o.argv[0], r->heap_why);
		pr_hint("record without --alloc-history (uprobes see no event stream)");
		return -ENOTSUP;
	}
	if (r->heap_why && r->o.heap_sample_bytes) {
		if (r->o.heap_backend == HEAP_BACKEND_UPROBE) {
			pr_err("--heap-sample-bytes needs the in-process heap tracker: the uprobes "
			       "cannot sample by bytes");
			pr_hint("use --heap-sample N with uprobes, or --heap-backend auto");
			return -RSPROF_EUSAGE;
		}
		pr_warn("--heap-sample-bytes: '%s' is tracked with uprobes (%s), which track "
			"every allocation: they cannot sample by bytes", r->o.argv[0], r->heap_why);
	}
	if (r->heap_launch && r->o.heap_sample_bytes)
		heap_launch__sample_bytes(r->heap_launch, r->o.heap_sample_bytes);
	if (r->heap_why && r->o.heap_backend == HEAP_BACKEND_AUTO)
		pr_debug(1, "heap: uprobes, not the in-process tracker: %s", r->heap_why);
	return 0;
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
		.launch = r->heap_launch,
		.alloc_history = r->o.alloc_history,
	};
	const char *why = NULL;
	int err;

	if (!r->o.heap)
		return 0;
	r->alloc_fns = alloc_fns__new(true);
	if (!r->alloc_fns)
		return -ENOMEM;
	for (size_t i = 0; r->o.alloc_fn && r->o.alloc_fn[i]; i++) {
		err = alloc_fns__add(r->alloc_fns, r->o.alloc_fn[i]);
		if (err)
			return err;
	}
	ho.alloc_fns = r->alloc_fns;
	if (ho.launch) {
		/* no BPF: the tracker runs in the program */
		r->heap_launch = NULL;	/* heap__new() takes it, even when it fails */
		err = heap__new(&ho, &r->heap);
		goto out;
	}
	if (!r->t.launched && r->t.n_pids > 1 && r->o.heap_backend != HEAP_BACKEND_UPROBE) {
		r->heap_why = "several processes: the in-process tracker is put into one at a time";
		if (r->o.heap_backend == HEAP_BACKEND_INJECT || r->o.alloc_history) {
			pr_err("the heap tracker cannot be injected: %s", r->heap_why);
			pr_hint("attach to one process (-p PID), or use --heap-backend uprobe");
			return -ENOTSUP;
		}
	} else if (!r->t.launched) {
		/* attach: the tracker put into the running process, unless refused */
		err = heap_inject__new(r->t.pid, r->o.heap_backend, r->o.heap_sample,
				       r->o.heap_sample_bytes, r->o.alloc_history, &ho.inject,
				       &r->heap_why);
		if (err) {
			if (r->o.heap_required || err == -ESRCH)
				return err;
			disable_heap(r, r->heap_why ? r->heap_why : rsprof_strerror(err));
			return 0;
		}
		if (ho.inject) {
			err = heap__new(&ho, &r->heap);
			goto out;
		}
		if (r->o.alloc_history) {
			pr_err("--alloc-history needs the in-process heap tracker, which cannot "
			       "be put into process %d: %s", (int)r->t.pid, r->heap_why);
			pr_hint("record without --alloc-history (uprobes see no event stream)");
			return -ENOTSUP;
		}
		if (r->heap_why && r->o.heap_backend == HEAP_BACKEND_AUTO)
			pr_debug(1, "heap: uprobes, not the in-process tracker: %s", r->heap_why);
	}
	if (!r->t.launched && r->o.heap_sample_bytes) {
		if (r->o.heap_backend == HEAP_BACKEND_UPROBE) {
			pr_err("--heap-sample-bytes needs the in-process heap tracker: the uprobes "
			       "cannot sample by bytes");
			pr_hint("use --heap-sample N with uprobes, or --heap-backend auto");
			return -RSPROF_EUSAGE;
		}
		pr_warn("--heap-sample-bytes: process %d is tracked with uprobes (%s), which "
			"track every allocation: they cannot sample by bytes", (int)r->t.pid,
			r->heap_why ? r->heap_why : "the tracker cannot be injected");
	}
	for (size_t i = 0; !r->t.launched && i < r->t.n_pids; i++) {
		if (!heap_inject__present(r->t.pids[i]))
			continue;
		/* its jumps at glibc's free & co. would not survive uprobes there */
		why = "the heap tracker of an earlier rsprof is in the process: uprobes would "
		      "break it";
		if (r->o.heap_required) {
			pr_err("heap tracking of process %d: %s (%s)", (int)r->t.pids[i], why,
			       r->heap_why ? r->heap_why : "--heap-backend uprobe");
			pr_hint("stop the other rsprof first, then attach again");
			return -EBUSY;
		}
		if (r->heap_why && r->o.heap_backend != HEAP_BACKEND_UPROBE) {
			static char both[320];

			snprintf(both, sizeof(both), "%s, and uprobes would break its tracker",
				 r->heap_why);
			why = both;
		}
		disable_heap(r, why);
		return 0;
	}
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
out:
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
	err = db_writer__create(r->path, r->o.append, &r->db);
	if (err) {	/* printed by db_writer__create(), -EEXIST with its hint */
		r->db = NULL;
		if (err == -ENOENT || err == -EACCES || err == -EROFS)
			pr_hint("write the profile elsewhere with -o FILE or RSPROF_OUTPUT_DIR");
		/* rsprof-record(1): 6, the profile file could not be written */
		return err == -ENOMEM ? err : -RSPROF_EDB;
	}
	/* removing -wal and -shm at the end may need what root has now (CAP_DAC_OVERRIDE) */
	r->keep_dac = caps__dir_needs_privilege(r->path);
	if (r->o.call_graph) {
		err = db_stacks__create(db_writer__db(r->db));
		if (err)
			return err;
	}
	if (r->o.retain_ms) {
		err = db_writer__set_retain(r->db, r->o.retain_ms);
		if (err)
			return err;
	}
	if (r->o.compact_set) {
		err = db_writer__set_compact(r->db, r->o.compact_ms);
		if (err)
			return err;
	}
	return record_meta__start(r->db, &r->o, &r->t, r->heap, r->heap_why, &r->ts_base);
}

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ULL + (uint64_t)t->tv_nsec;
}

int recorder__new(const struct record_opts *o, struct recorder **out)
{
	struct recorder *r = calloc(1, sizeof(*r));
	struct sampler_opts so = { 0 };
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->o = *o;
	target__init(&r->t);
	pthread_mutex_init(&r->lock, NULL);

	/* the store's URL and credentials checked before anything starts */
	if (o->push) {
		err = pusher__new(o->push, &r->pusher);
		if (err) {
			r->pusher = NULL;
			goto fail;
		}
	}
	if (o->all) {
		target__system(&r->t);
		err = scope__new(o->comm, o->cgroup, &r->scope);
	} else if (o->argv) {
		err = plan_heap(r);
		if (!err)
			err = target__launch(&r->t, o->argv,
					     r->heap_launch ? heap_launch__env(r->heap_launch) : NULL);
	} else {
		err = target__attach(&r->t, o->pids, o->n_pids, o->process);
		for (size_t i = 0; !err && i < r->t.n_pids; i++)
			err = check_attached(r, r->t.pids[i]);
	}
	if (err)
		goto fail;

	/*
	 * The sampler also when the CPU is not sampled: its side-band records
	 * tell the heap's resolver what the target maps.
	 */
	so.pids = r->t.pids;
	so.n_pids = r->t.n_pids;
	so.freq = o->freq;
	so.call_graph = o->call_graph;
	so.stack_copy = o->stack_copy;
	so.enable_on_exec = r->t.launched;
	so.inherit = o->inherit;
	so.user_only = o->user_only;
	so.sideband_only = !o->cpu;
	so.system_wide = o->all;
	/* uprobes: a kernel sample at a probe is the tracking's (checkpoint-writer.c) */
	so.user_ip = o->heap && o->cpu && !r->heap_launch;
	err = sampler__new(&so, &r->sampler);
	if (err) {
		r->sampler = NULL;
		if (o->cpu)
			goto fail;
		pr_debug(1, "no side-band records: mappings read from /proc");
	}
	err = start_heap(r, r->t.launched);
	if (err)
		goto fail;

	/* the file before the launch: a program is not run for nothing */
	err = open_output(r);
	if (!err && o->cpu)
		err = record_meta__cpu_scope(r->db, sampler__user_only(r->sampler));
	if (!err && r->pusher)
		err = pusher__start(r->pusher, r->path);
	if (err)
		goto fail;
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	/* -a: every process that forks is in it */
	err = process_tree__new(ns_of(&r->t0), r->ts_base, o->inherit || o->all,
				r->sampler && o->cpu && !sampler__user_only(r->sampler), &r->pt);
	if (!err && o->all)
		process_tree__system_wide(r->pt);
	for (size_t i = 0; !err && i < r->t.n_pids; i++)
		err = process_tree__add(r->pt, r->t.pids[i], !r->t.launched);
	if (err)
		goto fail;
	if (r->t.launched) {
		err = target__go(&r->t, o->argv[0]);
		if (err)
			goto fail;
		if (r->sampler)
			sampler__exec_done(r->sampler);
		target__read(&r->t);
		err = record_meta__process_name(r->db, &r->t);	/* errors printed by db.c */
		if (err)
			goto fail;
		if (!r->sampler)
			process_tree__refresh(r->pt, r->t.pid);
	}
	err = checkpoint_writer__new(r->db, r->o.call_graph, r->pt, r->heap, r->t.pid, &r->cpw);
	if (err)
		goto fail;
	checkpoint_writer__watch_rss(r->cpw, r->t.pid);
	if (r->o.alloc_history && heap__has_history(r->heap)) {
		err = history_writer__new(db_writer__db(r->db), &r->hw);
		/* the history's time 0 on the system's CLOCK_MONOTONIC (the
		 * program's own clock), less the --append base */
		if (!err)
			err = db_writer__meta_set_int(r->db, "alloc_history_monotonic_ns",
					       (long long)(ns_of(&r->t0) - r->ts_base * 1000000));
		if (err)
			goto fail;
		/* a quarter of the interval at most: the loop drains the samples too */
		checkpoint_writer__history(r->cpw, r->hw, ns_of(&r->t0), r->ts_base * 1000000,
					   r->o.interval_ms / 4);
	}

	/* Probes and events are attached: what else root could do is not needed any more. */
	err = caps__drop_unneeded(r->keep_dac);
	if (err)
		pr_debug(1, "cannot drop capabilities: %s", strerror(-err));
	r->st.heap_on = r->heap != NULL;
	if (r->heap) {
		struct heap_stats hs = { 0 };

		heap__stats(r->heap, &hs);	/* the probes are attached: rust or libc */
		r->st.heap_probes = hs.probes;
		r->st.heap_backend = hs.backend;
		r->st.freq = o->cpu ? o->freq : 0;
		r->st.heap_why = r->heap_why;
		if (strcmp(hs.backend, "uprobe"))
			r->st.heap_sample_bytes = r->o.heap_sample_bytes;
	}
	r->st.exit_status = -1;
	pr_debug(1, "recording process %d (%s, %s) into %s", (int)r->t.pid, r->t.comm, r->t.exe,
		 r->path);
	*out = r;
	return 0;
fail:
	target__abort(&r->t);
	if (r->db) {
		/* a new file goes with its -wal/-shm; an appended one is closed */
		db_writer__discard(r->db);
		r->db = NULL;
	}
	r->finalised = true;
	heap_launch__delete(r->heap_launch);
	r->heap_launch = NULL;
	recorder__delete(r);
	return err;
}

/* ---- the loop ---------------------------------------------------------- */

static int write_checkpoint(struct recorder *r, uint64_t now_ms)
{
	struct sampler_stats ss = { 0 };
	struct heap_stats hs = { 0 };
	uint64_t t0 = ms_since(&r->t0);
	int err;

	if (r->sampler)
		sampler__stats(r->sampler, &ss);
	else if (!r->t.launched || r->t.child.pid > 0)
		process_tree__refresh(r->pt, r->t.pid);	/* no records: /proc tells */
	err = checkpoint_writer__write(r->cpw, r->ts_base + now_ms, ss.lost);
	if (err)
		return err;
	if (r->pusher) {
		/* the interval is in the file: the pusher may read it; what it sent goes in */
		pusher__checkpoint(r->pusher, r->ts_base + now_ms);
		err = pusher__write_ledger(r->pusher, db_writer__db(r->db));
		if (err)
			return err;
	}
	pr_debug(2, "checkpoint at %llu ms written in %llu ms", (unsigned long long)now_ms,
		 (unsigned long long)(ms_since(&r->t0) - t0));
	/* launched: the program that got the samples, not a wrapper, once some came */
	if (r->t.launched && !r->fp_checked && ss.samples) {
		const char *exe = NULL;
		struct resolver *res = process_tree__busiest(r->pt, &exe);

		r->fp_checked = true;
		check_frame_pointers(r, res, exe ? exe : r->t.exe);
	}
	if (r->heap)
		heap__stats(r->heap, &hs);
	pthread_mutex_lock(&r->lock);
	r->st.checkpoints++;
	if (r->heap)
		r->st.heap_probes = hs.probes;
	r->st.live_bytes = hs.live_bytes;
	r->st.peak_bytes = hs.peak_bytes;
	r->st.allocs = hs.allocs;
	r->st.frees = hs.frees;
	r->st.heap_dropped = hs.dropped;
	r->st.unknown_frees = hs.unknown_frees;
	r->st.tracking_samples = checkpoint_writer__tracking_samples(r->cpw);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

static void update_stats(struct recorder *r, uint64_t now_ms)
{
	struct sampler_stats ss = { 0 };
	struct push_stats ps = { 0 };
	size_t procs = 0, spaces = 0;

	if (r->sampler)
		sampler__stats(r->sampler, &ss);
	if (r->pt)
		process_tree__counts(r->pt, &procs, &spaces);
	if (r->pusher)
		pusher__stats(r->pusher, &ps);
	pthread_mutex_lock(&r->lock);
	r->st.elapsed_ms = now_ms;
	r->st.samples = ss.samples;
	r->st.lost = ss.lost;
	r->st.threads = ss.threads;
	r->st.processes = procs;
	if (r->pusher) {
		r->st.push_on = true;
		r->st.pushed = ps.pushed;
		r->st.pushed_bytes = ps.pushed_bytes;
		r->st.push_queued = ps.queued;
		r->st.push_failed = ps.failed;
		r->st.push_dropped = ps.dropped;
		r->st.push_rejected = ps.rejected;
		snprintf(r->st.push_store, sizeof(r->st.push_store), "%s", ps.store);
		snprintf(r->st.push_spool, sizeof(r->st.push_spool), "%s", ps.spool);
	}
	pthread_mutex_unlock(&r->lock);
}

static void sleep_ms(uint64_t ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000),
			       .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);	/* a signal cuts it short: fine, the loop looks at r->stop */
}

/* The programs that ran and got samples, for the verdict on debug information. */
struct debug_seen {
	struct {
		char *exe;
		uint64_t samples;
		int verdict;
	} v[16];
	int n, more;
	uint64_t total;
	bool usable;		/* one of them has lines or symbols */
};

static void debug_cb(void *ctx, const char *exe, uint64_t samples, int verdict)
{
	struct debug_seen *d = ctx;

	d->total += samples;
	d->usable |= verdict >= 0;
	if (d->n == (int)(sizeof(d->v) / sizeof(d->v[0]))) {
		d->more++;
		return;
	}
	d->v[d->n].exe = strdup(exe);
	d->v[d->n].samples = samples;
	d->v[d->n].verdict = verdict;
	d->n++;
}

/*
 * Debug information is judged on the programs that got samples or heap
 * rows (a stripped wrapper that execs or forks the real program is not an
 * error, even when it took the only samples): exit 5 when none of them (or,
 * without either, none of the programs that ran) has DWARF or a symbol
 * table and nothing recorded (a library's function, the kernel's) could be
 * named either; a stripped program whose libraries or kernel time are
 * named is kept, with a warning; a warning for each one with a tenth of
 * the samples or more that has symbols only, or nothing.
 */
static int check_debuginfo_end(struct recorder *r)
{
	struct debug_seen d = { 0 };
	bool hinted = false;
	int err = 0;

	process_tree__debuginfo(r->pt, debug_cb, &d);
	if (!d.n)
		return 0;
	if (!d.usable && (r->t.launched || r->o.inherit) && !process_tree__named(r->pt)) {
		pr_err("%s has no debug information and no symbol table, and nothing recorded "
		       "could be named", d.v[0].exe);
		for (int i = 1; i < d.n; i++)
			fprintf(stderr, "  nor has %s\n", d.v[i].exe);
		pr_hint("install its debug symbols (Debian: the -dbgsym package), set "
			"DEBUGINFOD_URLS, or rebuild with debug info (gcc/clang -g; Rust: debug = "
			"true in the Cargo profile) and do not strip it");
		err = -RSPROF_ENODEBUG;
	} else if (!d.usable && (r->t.launched || r->o.inherit)) {
		/* a stripped program: its libraries and the kernel are named, its own
		 * code is [unknown] by module and address (as perf records it) */
		pr_warn("%s has no debug information and no symbol table: its own code is "
			"[unknown], its libraries and the kernel are named", d.v[0].exe);
		pr_hint("install its debug symbols (Debian: the -dbgsym package) or set "
			"DEBUGINFOD_URLS for its lines");
	} else {
		for (int i = 0; i < d.n; i++) {
			if (d.v[i].verdict == 0 || !d.v[i].samples ||
			    d.v[i].samples * 10 < d.total)
				continue;
			if (d.v[i].verdict == 1)
				pr_warn("%s has no DWARF line information: results by function only",
					d.v[i].exe);
			else
				pr_warn("%s has no debug information and no symbol table: its "
					"samples are [unknown]", d.v[i].exe);
			if (!hinted)
				pr_hint("rebuild with debug info (gcc/clang -g; Rust: debug = true "
					"in the Cargo profile) for source lines");
			hinted = true;
		}
	}
	for (int i = 0; i < d.n; i++)
		free(d.v[i].exe);
	return err;
}

/*
 * Every record goes to the checkpoint writer through here. A process of an
 * attached tree that execs must still be one this user may trace (the exec
 * is done when its record arrives): one that ran a setuid program stops
 * the recording before its interval is written. A launched tree runs with
 * no_new_privs (util/record/target.c) and gains nothing.
 */
static void on_event(void *ctx, const struct sampler_event *ev)
{
	struct recorder *r = ctx;

	/*
	 * -a: the samples of the processes in scope; what a privileged perf
	 * -a may see (it needs CAP_PERFMON or root), with no process of ours
	 * to guard against an exec into privileges
	 */
	if (r->scope) {
		if (scope__keep(r->scope, ev))
			checkpoint_writer__event(r->cpw, ev);
		return;
	}
	if (ev->type == SEV_COMM && ev->exec && !r->t.launched && !r->gained) {
		int err = target__may_trace(ev->pid);

		if (err == -EPERM)
			r->gained = ev->pid;
		else if (err && hashmap__set(&r->exec_unchecked, (uint64_t)ev->pid,
					     ev->time ? ev->time : 1))
			r->gained = ev->pid;	/* cannot keep track: as if it had */
	}
	/*
	 * A process that exec'd and was gone (exited and reaped) before its
	 * record was read: the kernel stops its events at an exec that
	 * gains privileges (not dumpable), so its new program's mappings
	 * come only when it gained none; the file it maps first (its own
	 * text, before the interpreter's) is checked too.
	 */
	if (ev->type == SEV_MMAP && (ev->prot & PROT_EXEC) && !r->gained &&
	    hashmap__remove(&r->exec_unchecked, (uint64_t)ev->pid) && ev->filename &&
	    ev->filename[0] == '/') {
		const char *why = target__exec_gains(ev->filename);

		if (why) {
			pr_err("process %d ran %s, %s", (int)ev->pid, ev->filename, why);
			r->gained = ev->pid;
		}
	}
	checkpoint_writer__event(r->cpw, ev);
}

/* records are read 2 ms behind (the sampler's HOLD_NS); an exec maps its program at once */
#define UNVERIFIED_NS	50000000ULL

/*
 * After a drain: a process gone before its exec was checked whose new
 * program sent no mapping 50 ms later (all: at the end) is
 * one the kernel stopped recording at that exec, one that gained
 * privileges (see on_event()).
 */
static void check_unverified(struct recorder *r, bool all)
{
	struct timespec ts;
	uint64_t now;

	if (!hashmap__size(&r->exec_unchecked))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	hashmap__for_each(&r->exec_unchecked, i) {
		if (!r->gained && (all || r->exec_unchecked.vals[i] + UNVERIFIED_NS <= now)) {
			pr_err("process %d ran a program the kernel stopped recording at once "
			       "(a setuid or setgid one) and was gone before it could be checked",
			       (int)r->exec_unchecked.keys[i]);
			r->gained = (pid_t)r->exec_unchecked.keys[i];
		}
	}
}

/* An attached process that gained privileges: say so; -EPERM (exit 4). */
static int gained_privileges(pid_t pid)
{
	pr_err("process %d gained privileges while recording (a setuid or setgid program): "
	       "stopped, the interval since the last checkpoint not written", (int)pid);
	pr_hint("what the kernel would let a debugger see is all rsprof records "
		"(rsprof-record(1), PERMISSIONS)");
	return -EPERM;
}

/* --alloc-history: the tracker's last events, the last slice, what was dropped. */
static int finish_history(struct recorder *r)
{
	struct heap_hist_stats hs;
	struct history_stats ws;
	int err = checkpoint_writer__history_end(r->cpw);

	if (!err)
		err = history_writer__flush(r->hw);
	heap__history_stats(r->heap, &hs);
	history_writer__stats(r->hw, &ws);
	if (!err)
		err = db_writer__meta_set_int(r->db, "alloc_history_events", (long long)hs.events);
	if (!err)
		err = db_writer__meta_set_int(r->db, "alloc_history_dropped", (long long)hs.dropped);
	if (!err)
		err = db_writer__meta_set_int(r->db, "alloc_history_wait_ns", (long long)hs.wait_ns);
	pthread_mutex_lock(&r->lock);
	r->st.hist_on = true;
	r->st.hist_events = hs.events;
	r->st.hist_dropped = hs.dropped;
	r->st.hist_wait_ns = hs.wait_ns;
	r->st.hist_waits = hs.waits;
	pthread_mutex_unlock(&r->lock);
	pr_debug(1, "alloc history: %llu events drained (%llu rings), %llu dropped, %llu waits "
		 "(%llu ns); %llu "
		 "allocations written, %llu frees matched, %llu of blocks from before, %llu "
		 "reordered, %llu slices, %llu chunks", (unsigned long long)hs.events,
		 (unsigned long long)hs.rings, (unsigned long long)hs.dropped,
		 (unsigned long long)hs.waits, (unsigned long long)hs.wait_ns,
		 (unsigned long long)ws.events, (unsigned long long)ws.frees,
		 (unsigned long long)ws.unknown_frees, (unsigned long long)ws.reordered,
		 (unsigned long long)ws.slices, (unsigned long long)ws.chunks);
	if (hs.dropped && hs.gave_up)
		pr_warn("allocation history: %llu of %llu events dropped (rsprof gave no sign of "
			"life for %d s: the program went on without waiting)",
			(unsigned long long)hs.dropped, (unsigned long long)(hs.events + hs.dropped),
			HEAP_HIST_PATIENCE_MS / 1000);
	else if (hs.dropped)
		pr_warn("allocation history: %llu of %llu events dropped (threads beyond the "
			"tracker's %d rings)", (unsigned long long)hs.dropped,
			(unsigned long long)(hs.events + hs.dropped), HEAP_HISTORY_RINGS);
	return err;
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
		sampler__drain(r->sampler, true, on_event, r);
	check_unverified(r, true);
	if (!err && r->gained)
		err = gained_privileges(r->gained);
	if (r->t.launched && r->t.child.pid > 0)
		target__kill(&r->t);
	if (!r->stop_reason)
		r->stop_reason = r->stop ? "signal" : "error";
	update_stats(r, now);
	if (!err)
		err = write_checkpoint(r, now);
	/* the last intervals pushed (or left in the spool), their ledger rows written */
	if (r->pusher) {
		pusher__finish(r->pusher, r->ts_base + now);
		if (!err)
			err = pusher__write_ledger(r->pusher, db_writer__db(r->db));
		update_stats(r, now);
	}
	if (!err && r->hw)
		err = finish_history(r);
	/* the kernel's peak of the resident memory (VmHWM), not the highest checkpoint's */
	if (!err && r->cpw && checkpoint_writer__rss_peak(r->cpw) > 0)
		err = db_writer__meta_set_int(r->db, "rss_peak_bytes",
				       (long long)checkpoint_writer__rss_peak(r->cpw));
	if (!err && r->cpw && r->o.call_graph) {
		uint64_t unwound, truncated;

		checkpoint_writer__stacks(r->cpw, &unwound, &truncated);
		err = db_writer__meta_set_int(r->db, "cpu_stacks_unwound", (long long)unwound);
		if (!err)
			err = db_writer__meta_set_int(r->db, "cpu_stacks_truncated",
						     (long long)truncated);
	}
	if (!err && r->heap) {
		struct heap_stats hs;

		heap__stats(r->heap, &hs);
		if (!hs.started) {
			pr_warn("the in-process heap tracker did not start in '%s': no heap figures",
				r->t.comm);
			pr_hint("the program may have cleared LD_PRELOAD before its first "
				"allocation; use --heap-backend uprobe");
		}
	}
	{
		uint64_t shared, bytes, reused;

		symcache__stats(&shared, &bytes, &reused);
		pr_debug(2, "symbols: %llu addresses named for all processes of their file "
			 "(%llu KiB), %llu names taken by another process",
			 (unsigned long long)shared, (unsigned long long)bytes >> 10,
			 (unsigned long long)reused);
	}
	err2 = record_meta__end(r->db, r->sampler, r->heap, r->ts_base + now, r->stop_reason,
				r->t.exit_status);
	if (!err2)
		err2 = db__verify(db_writer__db(r->db));	/* deleted or replaced meanwhile: lost */
	/* -a: whatever runs on the host, with or without debug information */
	if (!err && !err2 && r->o.cpu && !r->o.all) {
		err = check_debuginfo_end(r);
		r->discard = err == -RSPROF_ENODEBUG && !r->o.append;
	}
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
			sampler__drain(r->sampler, false, on_event, r);
		check_unverified(r, false);
		err = checkpoint_writer__error(r->cpw);
		if (err)
			break;
		if (r->gained) {
			err = gained_privileges(r->gained);
			break;
		}
		update_stats(r, now);
		if (r->stop) {
			r->stop_reason = "signal";
			break;
		}
		/* launched: waitpid() is cheap; attached: look at /proc every 50 ms; -a: never */
		exited = !r->o.all && (r->t.launched || now >= next_alive) &&
			 target__exited(&r->t);
		/* without records (no CPU events): /proc, every 50 ms and before a checkpoint */
		for (size_t i = 0; !exited && !r->t.launched && (now >= next_alive || now >= next_cp) &&
				   i < r->t.n_pids && !r->gained; i++)
			if (target__may_trace(r->t.pids[i]) == -EPERM)
				r->gained = r->t.pids[i];
		if (r->gained) {
			err = gained_privileges(r->gained);
			break;
		}
		if (!r->t.launched && now >= next_alive)
			next_alive = now + ALIVE_MS;
		if (exited)
			r->stop_reason = "target-exit";
		else if (r->o.duration_ms && now >= r->o.duration_ms)
			r->stop_reason = "duration";
		if (r->stop_reason) {
			/* boundaries passed during a slow write: written before the last one */
			while (!err && next_cp < now && next_cp + CATCH_UP * r->o.interval_ms > now &&
			       !hashmap__size(&r->exec_unchecked)) {
				err = write_checkpoint(r, next_cp);
				next_cp += r->o.interval_ms;
			}
			break;
		}
		/* an exec not judged yet (check_unverified()): its interval waits */
		if (now >= next_cp && !hashmap__size(&r->exec_unchecked)) {
			/* stamped with the interval's end, so the series is regular */
			err = write_checkpoint(r, next_cp);
			if (err)
				break;
			next_cp += r->o.interval_ms;
			/*
			 * A slow write (a large library's DWARF read for the first
			 * time: libc's takes ~0.1 s, ~1 s on a loaded machine with
			 * ASan): the boundaries it passed are written next, so the
			 * series stays regular; more than CATCH_UP intervals
			 * behind, do not pile checkpoints up.
			 */
			if (next_cp + CATCH_UP * r->o.interval_ms <= now)
				next_cp = now + r->o.interval_ms;
		}
		/*
		 * --alloc-history: half of each round at most while CPU samples
		 * wait in their rings; without them (--no-cpu) four rounds' worth
		 */
		if (r->hw) {
			err = checkpoint_writer__history_pump(r->cpw, r->sampler ? DRAIN_MS / 2 :
								       4 * DRAIN_MS);
			if (err)
				break;
		}
		/* --no-inherit: the threads are found by looking at /proc */
		if (now >= next_rescan && r->sampler && !r->o.inherit) {
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
	hashmap__free(&r->exec_unchecked);
	heap_launch__delete(r->heap_launch);
	alloc_fns__delete(r->alloc_fns);
	scope__delete(r->scope);
	target__kill(&r->t);
	checkpoint_writer__delete(r->cpw);
	if (history_writer__delete(r->hw) && !err)
		err = -RSPROF_EDB;
	if (r->keep_dac)
		caps__raise_dac();	/* SQLite removes -wal and -shm on close */
	err2 = db_writer__close(r->db);
	if (!err)
		err = err2;
	/* its reader of the file after the writer (see check_fd in util/db/db.c) */
	pusher__delete(r->pusher);
	if (r->discard) {
		char side[PATH_MAX + 8];

		unlink(r->path);
		snprintf(side, sizeof(side), "%s-wal", r->path);
		unlink(side);
		snprintf(side, sizeof(side), "%s-shm", r->path);
		unlink(side);
	}
	process_tree__delete(r->pt);
	target__exit(&r->t);
	pthread_mutex_destroy(&r->lock);
	free(r);
	return err;
}
