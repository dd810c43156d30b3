/*
 * Heap tracking, what both backends share: once per checkpoint,
 * the backend's running counters per call stack become deltas attributed
 * to the user's line (util/heap/attrib.c). A stack seen for the first time
 * is read from the backend, resolved, given its site and queued for the
 * file; its counters at the previous checkpoint are remembered here.
 */
#include "util/heap/heap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include "util/array.h"
#include "util/db/rows.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/heap/attrib.h"
#include "util/heap/backend.h"
#include "util/heap/history.h"
#include "util/heap/inject.h"
#include "util/infile.h"
#include "util/saturate.h"
#include "util/record/maps.h"
#include "util/record/proc.h"
#include "util/symbols/resolver.h"
#include "util/symbols/symbol.h"

/* What user space remembers of one stack key. */
struct stack_state {
	uint64_t key;
	pid_t pid;			/* the process that allocated */
	pid_t code_pid;			/* whose address space its addresses are in */
	struct heap_site last;		/* counters at the previous collect */
	uint64_t site;			/* attributed site address */
	int64_t stack_id;		/* -1: stack not stored */
	bool gone;			/* its process ended (kept for the history) */
	unsigned int kind;		/* enum heap_region_kind */
};

struct heap {
	const struct heap_backend_ops *ops;
	struct heap_be *be;
	enum heap_attribution attr;
	const struct alloc_fns *fns;
	pid_t pid;			/* the target, whose files (containers) are read */
	unsigned int sample;
	int code_fd;			/* a mapped file, to check call instructions */
	char *code_path;

	struct stack_state *states;	/* every stack key seen */
	size_t n_states, cap_states;
	struct hashmap by_key;		/* stack key -> index in states */

	/* this checkpoint's output, owned until the next collect */
	struct heap_count *rows;
	size_t n_rows, cap_rows;
	struct stack_rec *stacks;
	size_t n_stacks, cap_stacks;

	/* the collect in progress */
	const struct heap_hooks *hooks;
	int64_t site_sum;
	int64_t gone_live;		/* what the stacks forgotten held at their end */

	uint64_t allocs, frees;		/* scaled totals */
	uint64_t temps;			/* temporaries (the backend counts them: tot.temporaries) */
	int64_t live, peak;
	struct heap_totals tot;
	uint64_t dropped_reported;
	uint64_t warned_delta;		/* counters that grew beyond belief */

	/* --alloc-history: the events taken, written up to hist_at */
	struct heap_history *hist;
	const struct heap_hist_event *hist_v;
	size_t hist_n, hist_at;
	uint64_t collects;		/* heap__collect()s so far */
	uint64_t hist_taken_at;		/* collects when the batch was taken */
	uint64_t hist_unknown;		/* events whose stack never came */
};

static const struct {
	const char *name;
	enum heap_backend b;
} backends[] = {
	{ "auto", HEAP_BACKEND_AUTO },
	{ "inject", HEAP_BACKEND_INJECT },
	{ "preload", HEAP_BACKEND_PRELOAD },
	{ "uprobe", HEAP_BACKEND_UPROBE },
};

int heap_backend__parse(const char *name)
{
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (name && !strcmp(name, backends[i].name))
			return backends[i].b;
	return -1;
}

const char *heap_backend__name(enum heap_backend b)
{
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (backends[i].b == b)
			return backends[i].name;
	return "?";
}

/* --- the stack table ---------------------------------------------------- */

static struct stack_state *tab_find(struct heap *h, uint64_t key)
{
	uint64_t i;

	return hashmap__get(&h->by_key, key, &i) ? &h->states[i] : NULL;
}

static struct stack_state *tab_add(struct heap *h, uint64_t key)
{
	struct stack_state *st;

	if (ALLOC_GROW(h->states, h->n_states + 1, h->cap_states, 256))
		return NULL;
	if (hashmap__set(&h->by_key, key, h->n_states))
		return NULL;
	st = &h->states[h->n_states++];
	memset(st, 0, sizeof(*st));
	st->key = key;
	st->stack_id = -1;
	return st;
}

/* A key gone for good: its state goes (the last one moves into its place). */
static void tab_forget(struct heap *h, uint64_t key)
{
	uint64_t i;
	int64_t leak;

	if (!hashmap__get(&h->by_key, key, &i) || h->states[i].gone)
		return;
	/* a process's leaks stay in the live figure, as the launched one's do:
	 * from now on (gone_live), and in this collect's sum, which began from
	 * gone_live before the forgetting (the last checkpoint read 0 live when
	 * the target's region was dropped in it: t1525, t1521) */
	leak = (int64_t)(h->states[i].last.alloc_bytes - h->states[i].last.free_bytes);
	h->gone_live = sat__add(h->gone_live, leak);
	h->site_sum = sat__add(h->site_sum, leak);
	if (h->hist) {
		/* the history's events still to be written name its stack */
		h->states[i].gone = true;
		return;
	}
	hashmap__remove(&h->by_key, key);
	if (i != h->n_states - 1) {
		h->states[i] = h->states[h->n_states - 1];
		hashmap__set(&h->by_key, h->states[i].key, i);
	}
	h->n_states--;
}

/* --- a new stack -------------------------------------------------------- */

/*
 * Whether the instruction before ret is a call (x86-64: call rel32, and
 * the usual forms of an indirect call), read from the mapped file.
 */
static bool follows_call(struct heap *h, struct resolver *r, uint64_t ret)
{
	const struct maps *m = resolver__maps(r);
	const struct map *mp = m ? maps__find(m, ret) : NULL;
	uint8_t b[8];
	uint64_t off;

	if (!mp || !mp->path || mp->path[0] != '/' || ret - mp->start + mp->pgoff < 8)
		return false;
	if (!h->code_path || strcmp(h->code_path, mp->path)) {
		char rooted[PATH_MAX + 32];

		if (h->code_fd >= 0)
			close(h->code_fd);
		free(h->code_path);
		h->code_path = strdup(mp->path);
		/* the target's view of its files first (containers) */
		snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", (int)h->pid,
			 proc__root_relative(h->pid, mp->path));
		h->code_fd = infile__open(rooted, 0, NULL);
		if (h->code_fd < 0)
			h->code_fd = infile__open(mp->path, 0, NULL);
		if (!h->code_path || h->code_fd < 0) {
			if (h->code_fd >= 0)
				close(h->code_fd);
			h->code_fd = -1;
			return false;
		}
	}
	off = ret - mp->start + mp->pgoff;
	if (h->code_fd < 0 || pread(h->code_fd, b, sizeof(b), off - 8) != sizeof(b))
		return false;
	return b[3] == 0xe8 ||						/* call rel32 */
	       (b[2] == 0xff && (b[3] == 0x15 || (b[3] & 0xf8) == 0x90)) ||	/* disp32 */
	       (b[1] == 0x41 && b[2] == 0xff && (b[3] & 0xf8) == 0x90) ||
	       (b[5] == 0xff && (b[6] & 0xf8) == 0x50) ||			/* disp8 */
	       (b[4] == 0x41 && b[5] == 0xff && (b[6] & 0xf8) == 0x50) ||
	       (b[4] == 0xff && b[5] == 0x54 && b[6] == 0x24) ||		/* disp8(%rsp) */
	       (b[6] == 0xff && ((b[7] & 0xf8) == 0xd0 || (b[7] & 0xf8) == 0x10)) ||
	       (b[5] == 0x41 && b[6] == 0xff && ((b[7] & 0xf8) == 0xd0 || (b[7] & 0xf8) == 0x10));
}

/*
 * A stack seen for the first time: read its frames, resolve them, pick the
 * site by the attribution rule, and queue the stack for the file.
 *
 * When the backend kept candidates from the stack (a short frame-pointer
 * chain: words pointing into the executable's text, see bpf/heap.bpf.c and
 * preload/unwind.c), those that follow a call instruction are return
 * addresses the chain missed: they are added after the chain, in stack
 * order, before the rule is applied. They are used when the chain holds at
 * most one frame of the program's own code (by its source, wrappers
 * included): with none, they are the site; with one, it may be a wrapper,
 * and its caller must be in the stored stack for the rule to pass over it,
 * now or when a wrapper is named later (report --alloc-fn). A longer chain
 * is a real one (frame pointers): the scan's words would only add stale
 * frames after it.
 */
static int new_stack(struct heap *h, struct resolver *r, struct stack_state *st)
{
	struct heap_stack ks;
	const struct symbol *syms[HEAP_MAX_DEPTH];
	uint64_t *addrs;
	int depth = 0, chain, site, own = 0, err;
	bool refreshed = false;

	memset(&ks, 0, sizeof(ks));
	if (!h->ops->stack(h->be, st->key, &ks))
		return 0;	/* not stored (table full, counted): site stays 0 */
	addrs = calloc(HEAP_MAX_DEPTH, sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	/* return addresses: - 1 is inside the call instruction, i.e. the call's line */
	while (depth < HEAP_MAX_DEPTH && ks.ips[depth]) {
		addrs[depth] = ks.ips[depth] - 1;
		depth++;
	}
	for (int i = 0; i < depth; i++) {
		syms[i] = r ? resolver__resolve(r, addrs[i]) : NULL;
		if (r && syms[i] && !syms[i]->module && !refreshed && i < 4) {
			/* an address in no known mapping: a library loaded since */
			refreshed = true;
			resolver__refresh_maps(r);
		}
		own += heap_attrib__is_user(syms[i], NULL);
	}
	chain = depth;
	for (int i = 0; r && own < 2 && i < HEAP_MAX_CAND && ks.cand[i]; i++) {
		bool dup = false;

		for (int j = 0; j < depth && !dup; j++)
			dup = addrs[j] == ks.cand[i] - 1;
		if (dup || depth >= HEAP_MAX_DEPTH || !follows_call(h, r, ks.cand[i]))
			continue;
		addrs[depth] = ks.cand[i] - 1;
		syms[depth] = resolver__resolve(r, addrs[depth]);
		depth++;
	}
	if (depth > chain)
		pr_debug(2, "heap: stack %#llx: %d frames from the scan",
			 (unsigned long long)st->key, depth - chain);
	site = heap_attrib__site(syms, depth, h->attr, h->fns, NULL);
	st->site = depth ? addrs[site] : 0;
	if (!depth) {
		free(addrs);
		return 0;
	}
	if (ALLOC_GROW(h->stacks, h->n_stacks + 1, h->cap_stacks, 64)) {
		err = -ENOMEM;
		goto fail;
	}
	err = h->hooks->stack_id(h->hooks->ctx, &st->stack_id);
	if (err) {
		st->stack_id = -1;
		goto fail;
	}
	h->stacks[h->n_stacks++] = (struct stack_rec){
		.id = st->stack_id, .hash = st->key, .addrs = addrs, .depth = depth,
		.pid = st->code_pid,
	};
	return 0;
fail:
	free(addrs);
	return err;
}

/* --- collecting --------------------------------------------------------- */

static void free_output(struct heap *h)
{
	for (size_t i = 0; i < h->n_stacks; i++)
		free((void *)h->stacks[i].addrs);
	h->n_stacks = 0;
	h->n_rows = 0;
}

/*
 * A counter's growth since the last checkpoint. The counters come from the
 * target's memory (the in-process tracker's region), which a target may
 * fill with anything: a growth above DELTA_MAX (a terabyte, or a trillion
 * calls, at one site in one interval) or below zero is not a program's,
 * and is taken as 0 (noted once), so that no sum of rows can overflow
 * downstream (2^18 sites of 2^40 fit in an int64 many times over).
 */
#define DELTA_MAX	(1ULL << 40)

static uint64_t delta(struct heap *h, uint64_t cur, uint64_t last)
{
	uint64_t d = cur - last;

	if (d <= DELTA_MAX)
		return d;
	if (!h->warned_delta++)
		pr_debug(1, "heap: a counter grew by %#llx in one interval: not counted",
			 (unsigned long long)d);
	return 0;
}

/* One stack's running totals: its delta since the last checkpoint, a row. */
static int site_cb(void *ctx, uint64_t key, pid_t pid, pid_t code_pid,
		   const struct heap_site *cur, unsigned int kind)
{
	struct heap *h = ctx;
	struct stack_state *st = tab_find(h, key);
	struct heap_site d;
	struct heap_count *row;
	int err;

	if (!cur) {
		tab_forget(h, key);
		return 0;
	}
	/* saturated: the counters come from the target's memory, which may hold anything */
	h->site_sum = sat__add(h->site_sum, (int64_t)(cur->alloc_bytes - cur->free_bytes));
	if (!st) {
		st = tab_add(h, key);
		if (!st)
			return -ENOMEM;
		st->pid = pid ? pid : h->pid;
		st->kind = kind;
		st->code_pid = code_pid ? code_pid : st->pid;
		err = new_stack(h, h->hooks->resolver(h->hooks->ctx, st->code_pid), st);
		if (err)
			return err;
	}
	d.alloc_bytes = delta(h, cur->alloc_bytes, st->last.alloc_bytes);
	d.alloc_count = delta(h, cur->alloc_count, st->last.alloc_count);
	d.free_bytes = delta(h, cur->free_bytes, st->last.free_bytes);
	d.free_count = delta(h, cur->free_count, st->last.free_count);
	d.temp_count = delta(h, cur->temp_count, st->last.temp_count);
	st->last = *cur;
	if (!d.alloc_count && !d.free_count && !d.alloc_bytes && !d.free_bytes)
		return 0;
	if (!st->site)
		return 0;	/* stack lost: its bytes are in the dropped count */
	if (ALLOC_GROW(h->rows, h->n_rows + 1, h->cap_rows, 256))
		return -ENOMEM;
	row = &h->rows[h->n_rows++];
	row->addr = st->site;
	row->stack_id = st->stack_id;
	row->kind = (int)st->kind;
	row->alloc_bytes = (int64_t)d.alloc_bytes;
	row->free_bytes = (int64_t)d.free_bytes;
	row->alloc_count = (int64_t)d.alloc_count;
	row->free_count = (int64_t)d.free_count;
	row->temp_count = h->tot.temporaries ? (int64_t)d.temp_count : -1;
	h->temps += d.temp_count;
	row->pid = st->pid;
	row->code_pid = st->code_pid;
	h->allocs += row->alloc_count;
	h->frees += row->free_count;
	return 0;
}

static int proc_cb(void *ctx, const struct heap_proc_event *ev)
{
	struct heap *h = ctx;

	return h->hooks->process ? h->hooks->process(h->hooks->ctx, ev->pid, ev->ppid, ev->forked,
						     ev->exec, ev->exited) : 0;
}

int heap__collect(struct heap *h, const struct heap_hooks *hooks, struct checkpoint *cp)
{
	struct heap_visit v = { .site = site_cb, .process = proc_cb, .ctx = h };
	int err;

	if (!h)
		return 0;
	free_output(h);
	h->collects++;
	h->hooks = hooks;
	h->site_sum = h->gone_live;
	err = h->ops->sites(h->be, &v);
	if (err)
		return err;
	h->ops->totals(h->be, &h->tot);
	/* the backend's figures are already weighted by the sampling */
	h->live = h->tot.live == INT64_MIN ? h->site_sum : h->tot.live;
	if (h->tot.peak > h->peak)
		h->peak = h->tot.peak;
	if (h->live > h->peak)
		h->peak = h->live;

	cp->heap = h->rows;
	cp->n_heap = h->n_rows;
	cp->stacks = h->stacks;
	cp->n_stacks = h->n_stacks;
	cp->heap_live_bytes = h->live;
	cp->heap_dropped = h->tot.dropped - h->dropped_reported;
	h->dropped_reported = h->tot.dropped;
	return 0;
}

/* --- the start and the end ---------------------------------------------- */

int heap__new(const struct heap_opts *o, struct heap **out)
{
	struct heap *h;
	int err;

	*out = NULL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		heap_launch__delete(o->launch);
		heap_inject__delete(o->inject);
		return -ENOMEM;
	}
	h->attr = o->attribution;
	h->fns = o->alloc_fns;
	h->pid = o->pid;
	h->sample = o->sample ? o->sample : 1;
	h->code_fd = -1;
	h->ops = o->launch ? &heap_preload_ops : o->inject ? &heap_inject_ops : &heap_uprobe_ops;
	err = o->launch || o->inject ? heap_preload__new(o, &h->be) : heap_uprobe__new(o, &h->be);
	if (err) {
		h->be = NULL;
		heap__delete(h);
		return err;
	}
	h->ops->totals(h->be, &h->tot);
	h->hist = h->ops->history ? h->ops->history(h->be) : NULL;
	*out = h;
	return 0;
}

/* --- the allocation history ---------------------------------------------- */

bool heap__probes(const struct heap *h)
{
	return h && h->ops->probe_at;
}

bool heap__probe_at(struct heap *h, const char *path, uint64_t off)
{
	return h && path && h->ops->probe_at && h->ops->probe_at(h->be, path, off);
}

bool heap__has_history(const struct heap *h)
{
	return h && h->hist;
}

int heap__history_take(struct heap *h)
{
	if (!h || !h->hist || h->hist_at < h->hist_n)
		return 0;
	h->hist_at = h->hist_n = 0;
	h->hist_taken_at = h->collects;
	return heap_history__take(h->hist, &h->hist_v, &h->hist_n);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int heap__history_each(struct heap *h, uint64_t max_ns, bool known_only, heap_hist_cb cb,
		       void *ctx)
{
	uint64_t start = max_ns ? mono_ns() : 0;
	int err = 0;

	if (!h || !h->hist)
		return 0;
	while (h->hist_at < h->hist_n && !err) {
		const struct heap_hist_event *e = &h->hist_v[h->hist_at++];
		struct heap_hist_rec rec = {
			.time_ns = e->time_ns, .ptr = e->ptr, .size = e->size,
			.stack_id = -1, .free = !e->key,
		};

		if (e->key) {
			const struct stack_state *st = tab_find(h, e->key);

			/*
			 * Its stack comes with the next collect; once a collect
			 * has run since the batch was taken, it never will (a
			 * site the tracker could not keep): written without.
			 */
			if (!st && known_only && h->collects == h->hist_taken_at) {
				h->hist_at--;
				break;
			}
			if (!st && !h->hist_unknown++)
				pr_debug(1, "heap: allocation history: no stack for key %#llx",
					 (unsigned long long)e->key);
			if (st) {
				rec.site = st->site;
				rec.stack_id = st->stack_id;
			}
		}
		err = cb(ctx, &rec);
		/* the clock every 4096 events */
		if (max_ns && !(h->hist_at & 4095) && mono_ns() - start > max_ns)
			break;
	}
	return err;
}

int heap__history_end(struct heap *h, heap_hist_cb cb, void *ctx)
{
	int err = 0;

	if (!h || !h->hist)
		return 0;
	heap_history__stop(h->hist);
	for (;;) {
		err = heap__history_each(h, 0, false, cb, ctx);
		if (err)
			break;
		h->hist_at = h->hist_n = 0;
		err = heap_history__take(h->hist, &h->hist_v, &h->hist_n);
		if (err || !h->hist_n)
			break;
	}
	return err;
}

void heap__history_stats(const struct heap *h, struct heap_hist_stats *st)
{
	struct heap_history_stats hs;

	memset(st, 0, sizeof(*st));
	if (!h || !h->hist)
		return;
	heap_history__stats(h->hist, &hs);
	st->events = hs.events;
	st->dropped = hs.dropped;
	st->rings = hs.rings;
	st->wait_ns = hs.wait_ns;
	st->waits = hs.waits;
	st->gave_up = hs.gave_up;
}

void heap__stats(const struct heap *h, struct heap_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!h)
		return;
	st->live_bytes = h->live;
	st->peak_bytes = h->peak;
	st->allocs = h->allocs;
	st->frees = h->frees;
	st->temporaries = h->temps;
	st->has_temporaries = h->tot.temporaries;
	st->unknown_frees = h->tot.unknown_frees;
	st->unknown_free_bytes = h->tot.unknown_free_bytes;
	st->free_sizes_unknown = h->tot.free_sizes_unknown;
	st->dropped = h->tot.dropped;
	st->backend = h->ops->name;
	st->probes = h->tot.probes;
	st->sample = h->sample;
	st->started = h->tot.started;
	st->no_headers = h->tot.no_headers;
	st->limited = h->tot.limited;
}

bool heap__started(struct heap *h)
{
	struct heap_totals t;

	if (!h)
		return false;
	if (!h->tot.started) {
		h->ops->totals(h->be, &t);
		h->tot.started = t.started;
	}
	return h->tot.started;
}

void heap__delete(struct heap *h)
{
	if (!h)
		return;
	if (h->be)
		h->ops->delete(h->be);
	if (h->code_fd >= 0)
		close(h->code_fd);
	free(h->code_path);
	free_output(h);
	free(h->rows);
	free(h->stacks);
	free(h->states);
	hashmap__free(&h->by_key);
	free(h);
}
