#include "util/record/checkpoint-writer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/hashmap.h"
#include "util/db/write/writer.h"
#include "util/db/write/history.h"
#include "util/heap/heap.h"
#include "util/record/maps.h"
#include "util/record/proc.h"
#include "util/record/process-tree.h"
#include "util/record/sampler.h"
#include "util/symbols/resolver.h"
#include "util/symbols/symbol.h"
#include "util/unwind/walk.h"

#define MAX_STACK	128

/* A growable array of elements of one size. */
struct vec {
	void *v;
	size_t n, cap, elem;
};

static void *vec__push(struct vec *a)
{
	if (array__grow(&a->v, &a->cap, a->n + 1, a->elem, 256))
		return NULL;
	return (char *)a->v + a->elem * a->n++;
}

/* -g: a deduplicated call stack (seed 004), written once. */
struct stack_ent {
	uint64_t hash;
	int64_t id;
	uint64_t *addrs;
	int depth;
};

/* Samples of one process at one key, this checkpoint. */
struct pid_addr {
	pid_t pid;
	uint64_t key;
};

struct checkpoint_writer {
	struct db_writer *db;
	bool call_graph;		/* -g */
	struct process_tree *pt;
	struct heap *heap;
	pid_t heap_pid;
	pid_t rss_pid;			/* resident memory of this process, 0: none */
	int64_t rss_peak;		/* its highest VmHWM read, 0: none */

	uint64_t lost_at_cp;	/* sampler's lost total at the previous checkpoint */

	struct hashmap cpu;		/* (pid, key) -> index in cpu_rows, this checkpoint */
	struct vec cpu_rows;		/* struct cpu_count */
	uint64_t now_ms;		/* the checkpoint being written */
	struct vec heap_rows;		/* struct heap_count, keys and pid set */
	struct vec heap_addrs;		/* the heap's stacks' frames as keys */
	struct hashmap heap_site_keys;	/* heap stack id -> its site's key */

	/* -g */
	uint64_t chain[MAX_STACK];
	struct hashmap stack_counts;	/* stack hash -> samples, this checkpoint */
	struct vec stacks;		/* struct stack_ent, every stack of the file */
	struct hashmap stack_index;	/* hash -> index + 1 in stacks */
	size_t stacks_written;
	struct vec stack_rows;		/* struct stack_count, this checkpoint */
	struct vec map_rows;		/* struct map_row, one process's at a time */
	struct vec build_ids;		/* their build-ids, 41 bytes each (hex) */
	uint64_t stacks_seen;		/* unwound from their stack copies */
	uint64_t tracking_samples;	/* taken while the kernel handled a heap uprobe */
	struct hashmap probe_fns;	/* kernel ip -> 2: the probes' code, 1: not */
	struct hashmap irq_fns;		/* kernel ip -> 2: an interrupt's entry, 1: not */
	uint64_t stacks_truncated;	/* of those, not down to their first frame */
	bool sample_err;

	/* --alloc-history */
	struct history_writer *hw;
	uint64_t hist_t0_ns, hist_base_ns, hist_budget_ns;
};

int checkpoint_writer__new(struct db_writer *db, bool call_graph, struct process_tree *pt,
			   struct heap *heap, pid_t heap_pid, struct checkpoint_writer **out)
{
	struct checkpoint_writer *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->db = db;
	w->call_graph = call_graph;
	w->pt = pt;
	w->heap = heap;
	w->heap_pid = heap_pid;
	w->cpu_rows.elem = sizeof(struct cpu_count);
	w->heap_rows.elem = sizeof(struct heap_count);
	w->heap_addrs.elem = sizeof(uint64_t);
	w->stacks.elem = sizeof(struct stack_ent);
	w->stack_rows.elem = sizeof(struct stack_count);
	w->map_rows.elem = sizeof(struct map_row);
	w->build_ids.elem = 41;
	*out = w;
	return 0;
}

void checkpoint_writer__watch_rss(struct checkpoint_writer *w, pid_t pid)
{
	w->rss_pid = pid;
}

int64_t checkpoint_writer__rss_peak(const struct checkpoint_writer *w)
{
	return w->rss_peak;
}

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

static bool cpu_row_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct cpu_count *c = (const struct cpu_count *)((const struct vec *)ctx)->v + val;
	const struct pid_addr *k = key;

	return c->pid == k->pid && c->addr == k->key;
}

/* One more sample of pid at key. */
static int count_sample(struct checkpoint_writer *w, pid_t pid, uint64_t key)
{
	struct pid_addr k = { pid, key };
	uint64_t h = hashmap__hash_u64(key ^ ((uint64_t)pid << 47) ^ (uint64_t)pid);
	uint64_t idx = w->cpu_rows.n;
	bool fresh;
	int err;

	err = hashmap__intern(&w->cpu, h, cpu_row_eq, &k, &w->cpu_rows, &idx, &fresh);
	if (err)
		return err;
	if (fresh) {
		struct cpu_count *c = vec__push(&w->cpu_rows);

		if (!c)
			return -ENOMEM;
		c->pid = pid;
		c->addr = key;
		c->count = 0;
	}
	((struct cpu_count *)w->cpu_rows.v)[idx].count++;
	return 0;
}

/* -g: the stack of keys, counted and queued for the file when new. */
static int count_stack(struct checkpoint_writer *w, const uint64_t *chain, unsigned int depth)
{
	uint64_t h = stack_hash(chain, depth);
	struct stack_ent *e;
	bool fresh;
	int err;

	if (hashmap__add(&w->stack_counts, h, 1, &fresh))
		return -ENOMEM;
	if (hashmap__get(&w->stack_index, h, NULL))
		return 0;
	e = vec__push(&w->stacks);
	if (!e)
		return -ENOMEM;
	e->hash = h;
	err = db_writer__stack_id(w->db, &e->id);
	if (err) {
		w->stacks.n--;
		return err;
	}
	e->depth = (int)(depth > MAX_STACK ? MAX_STACK : depth);
	e->addrs = malloc(sizeof(uint64_t) * e->depth);
	if (!e->addrs) {
		w->stacks.n--;
		return -ENOMEM;
	}
	memcpy(e->addrs, chain, sizeof(uint64_t) * e->depth);
	return hashmap__add(&w->stack_index, h, w->stacks.n, &fresh);
}

static uint64_t rule_at(void *ctx, uint64_t pc)
{
	return resolver__cfi_rule(ctx, pc);
}

/*
 * The sample's user frames from its stack copy (util/unwind/walk.h) into
 * frames, after its kernel IP when it has one: their number; *whole: down
 * to the first frame. 0: no copy or no resolver (the kernel's chain then).
 */
static unsigned int unwind_copy(struct checkpoint_writer *w, const struct sampler_event *ev,
				uint64_t *frames, unsigned int max, bool *whole)
{
	struct resolver *res;
	struct unwind_sample s = { 0 };
	unsigned int k = 0;

	if (!ev->user_regs || !ev->stack || max < 2 ||
	    !(res = process_tree__resolver(w->pt, ev->pid)))
		return 0;
	if (ev->kernel && ev->depth)
		frames[k++] = ev->chain[0];
	s.ip = ev->regs[SREG_IP];
	s.sp = ev->regs[SREG_SP];
	s.bp = ev->regs[SREG_BP];
	s.stack = ev->stack;
	s.stack_len = ev->stack_len;
	s.chain = ev->chain + k;
	s.chain_len = ev->depth - k;
	return k + unwind__sample(&s, rule_at, res, frames + k, max - k, whole);
}

/*
 * A sample the kernel took while it handled one of the heap's uprobes: the
 * thread stood at a probed instruction (the trap) or in the kernel's
 * [uprobes] page (a return probe, a step out of line). That time is the
 * probes' cost: the [rsprof heap tracking] row, never a kernel row that
 * looks like the program's.
 */
/*
 * Kernel code that runs for the probes: the BPF programs, the uprobe
 * handling, the helpers and maps the programs use. At a return probe the
 * kernel has already put the thread's %rip back at the return address, so
 * the code the sample is in tells. (A program running BPF programs of its
 * own would have them counted there too.)
 */
static bool probe_kernel_fn(const char *fn)
{
	static const char *const pre[] = {
		"bpf_", "__bpf_", "___bpf_", "htab_", "__htab_", "lookup_nulls_elem_raw",
		"lookup_elem_raw", "pcpu_freelist_", "__pcpu_freelist_", "uprobe_", "uretprobe_",
		"__uprobe_", "arch_uprobe_", "arch_uretprobe_", "handle_swbp", "handle_trampoline",
		"handler_chain", "handle_uretprobe_chain", "get_perf_callchain",
		"perf_callchain_user", "copy_from_user_nofault", "__get_user_handle_exception",
	};

	for (size_t i = 0; fn && i < sizeof(pre) / sizeof(pre[0]); i++)
		if (!strncmp(fn, pre[i], strlen(pre[i])))
			return true;
	return false;
}

static bool in_heap_probe(struct checkpoint_writer *w, const struct sampler_event *ev)
{
	const struct map *m;
	uint64_t off, v;

	if (!ev->kernel || !ev->user_ip || !w->heap || !heap__probes(w->heap))
		return false;
	if (hashmap__get(&w->probe_fns, ev->ip, &v)) {
		if (v == 2)
			return true;
	} else {
		bool t = probe_kernel_fn(process_tree__kernel_fn(w->pt, ev->ip));

		if (hashmap__set(&w->probe_fns, ev->ip, t ? 2 : 1))
			return t;
		if (t)
			return true;
	}
	m = resolver__map_of(process_tree__resolver(w->pt, ev->pid), ev->user_ip);
	if (!m || !m->path)
		return false;
	if (!strcmp(m->path, "[uprobes]"))
		return true;
	if (m->path[0] != '/')
		return false;
	off = m->pgoff + (ev->user_ip - m->start);
	/* the trap's %rip is the probe's, or the byte after its int3 */
	return heap__probe_at(w->heap, m->path, off) || heap__probe_at(w->heap, m->path, off - 1);
}

/* The kernel's entry points of a hardware interrupt (x86-64). */
static bool irq_entry_fn(const char *fn)
{
	static const char *const pre[] = {
		"asm_sysvec_", "asm_common_interrupt", "asm_spurious_interrupt",
	};

	for (size_t i = 0; fn && i < sizeof(pre) / sizeof(pre[0]); i++)
		if (!strncmp(fn, pre[i], strlen(pre[i])))
			return true;
	return false;
}

/*
 * Did the kernel take the sample in an interrupt's work? *entry: the
 * outermost interrupt entry of its kernel chain, or 0. A timer's or a
 * disk's interrupt runs on whatever thread was on the CPU: it is not the
 * work of the code it interrupted.
 */
static int irq_entry_of(struct checkpoint_writer *w, const struct sampler_event *ev,
			uint64_t *entry)
{
	*entry = 0;
	for (unsigned int i = ev->kdepth; i-- > 0;) {
		uint64_t a = ev->kchain[i], v;

		if (!hashmap__get(&w->irq_fns, a, &v)) {
			v = irq_entry_fn(process_tree__kernel_fn(w->pt, a)) ? 2 : 1;
			if (hashmap__set(&w->irq_fns, a, v))
				return -ENOMEM;
		}
		if (v == 2) {
			*entry = a;
			return 0;
		}
	}
	return 0;
}

static int on_sample(struct checkpoint_writer *w, const struct sampler_event *ev)
{
	uint64_t key, entry, frames[MAX_STACK];
	const uint64_t *chain = ev->chain;
	unsigned int depth = ev->depth > MAX_STACK ? MAX_STACK : ev->depth, n;
	bool whole = true;
	int err;

	if (in_heap_probe(w, ev)) {
		w->tracking_samples++;
		err = process_tree__tracking_key(w->pt, ev->pid, &key);
		return err ? err : count_sample(w, ev->pid, key);
	}
	err = process_tree__key(w->pt, ev->pid, ev->ip, KEY_SAMPLE, &key);

	if (!err)
		err = count_sample(w, ev->pid, key);
	if (err || !w->call_graph)
		return err;
	/* an interrupt's stack: its work under its entry, no program frames */
	err = irq_entry_of(w, ev, &entry);
	if (err)
		return err;
	if (entry) {
		w->chain[0] = key;
		if (entry == ev->ip)
			return count_stack(w, w->chain, 1);
		err = process_tree__key(w->pt, ev->pid, entry, KEY_FRAME, &w->chain[1]);
		return err ? err : count_stack(w, w->chain, 2);
	}
	/* room for the [truncated] frame */
	n = unwind_copy(w, ev, frames, MAX_STACK - 1, &whole);
	if (n) {
		chain = frames;
		depth = n;
		w->stacks_seen++;
	}
	if (!depth)
		return 0;
	for (unsigned int i = 0; i < depth && !err; i++)
		err = i == 0 && chain[0] == ev->ip ? (w->chain[0] = key, 0) :
		      process_tree__key(w->pt, ev->pid, chain[i], KEY_FRAME, &w->chain[i]);
	if (!err && !whole) {
		w->stacks_truncated++;
		depth = depth < MAX_STACK ? depth : MAX_STACK - 1;
		err = process_tree__truncated_key(w->pt, &w->chain[depth++]);
	}
	return err ? err : count_stack(w, w->chain, depth);
}

uint64_t checkpoint_writer__tracking_samples(const struct checkpoint_writer *w)
{
	return w ? w->tracking_samples : 0;
}

void checkpoint_writer__stacks(const struct checkpoint_writer *w, uint64_t *unwound,
			       uint64_t *truncated)
{
	*unwound = w->stacks_seen;
	*truncated = w->stacks_truncated;
}

void checkpoint_writer__event(void *ctx, const struct sampler_event *ev)
{
	struct checkpoint_writer *w = ctx;
	int err = ev->type == SEV_SAMPLE ? on_sample(w, ev) : process_tree__event(w->pt, ev);

	if (err)
		w->sample_err = true;
}

int checkpoint_writer__error(const struct checkpoint_writer *w)
{
	return w->sample_err ? -ENOMEM : 0;
}

/* Index + 1 of the stack with hash h in w->stacks, 0 when unknown. */
static size_t stack_index_of(struct checkpoint_writer *w, uint64_t h)
{
	return (size_t)hashmap__value(&w->stack_index, h);
}

/* -g: samples per stack of this checkpoint (written with it). */
static int stack_counts(struct checkpoint_writer *w)
{
	struct hashmap *m = &w->stack_counts;

	w->stack_rows.n = 0;
	hashmap__for_each(m, i) {
		struct stack_count *c;
		size_t idx;

		idx = stack_index_of(w, m->keys[i]);
		if (!idx)
			continue;
		c = vec__push(&w->stack_rows);
		if (!c)
			return -ENOMEM;
		c->stack_id = ((struct stack_ent *)w->stacks.v)[idx - 1].id;
		c->count = m->vals[i];
	}
	return 0;
}

/* The `map` rows of a process's mappings, written at once. */
static int write_maps(void *ctx, const struct maps *m)
{
	struct checkpoint_writer *w = ctx;
	struct map_row *r;
	struct map_set set;

	w->map_rows.n = 0;
	w->build_ids.n = 0;
	/* the build-ids in hex, kept beside the rows (no pointer into a vec that grows) */
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].build_id_len && !vec__push(&w->build_ids))
			return -ENOMEM;
	for (size_t i = 0, b = 0; i < m->n; i++) {
		char *hex = NULL;

		r = vec__push(&w->map_rows);
		if (!r)
			return -ENOMEM;
		if (m->v[i].build_id_len) {
			hex = (char *)w->build_ids.v + 41 * b++;
			for (unsigned int k = 0; k < m->v[i].build_id_len && k < 20; k++)
				snprintf(hex + 2 * k, 3, "%02x", m->v[i].build_id[k]);
		}
		*r = (struct map_row){ .start = m->v[i].start, .end = m->v[i].end,
				       .pgoff = m->v[i].pgoff, .perms = m->v[i].perms,
				       .path = m->v[i].path, .build_id = hex };
	}
	set = (struct map_set){ .pid = m->pid, .v = w->map_rows.v, .n = w->map_rows.n };
	return db_writer__write_maps(w->db, &set);
}

/*
 * The heap's rows and stacks hold addresses of the heap's process: turn them
 * into keys (util/record/process-tree.h), queueing the symbols of new ones.
 */
static int heap_keys(struct checkpoint_writer *w, struct checkpoint *cp, struct vec *new_stacks)
{
	size_t total = 0, at = 0;
	uint64_t key;
	int err = 0;

	w->heap_rows.n = 0;
	for (size_t i = 0; i < cp->n_heap && !err; i++) {
		struct heap_count *h = vec__push(&w->heap_rows);

		if (!h)
			return -ENOMEM;
		*h = cp->heap[i];
		/*
		 * A stack's site keeps the key it got in the image that made it:
		 * the last frees of an image gone with an exec come after it
		 * (util/heap/preload.c), when pid's address space is the new one.
		 */
		if (h->stack_id >= 0 && hashmap__get(&w->heap_site_keys, (uint64_t)h->stack_id,
						     &key)) {
			h->addr = key;
			continue;
		}
		err = process_tree__key(w->pt, h->code_pid, cp->heap[i].addr, KEY_HEAP_SITE,
					&h->addr);
		if (!err && h->stack_id >= 0)
			err = hashmap__set(&w->heap_site_keys, (uint64_t)h->stack_id, h->addr);
	}
	if (err)
		return err;
	cp->heap = w->heap_rows.v;
	for (size_t i = 0; i < cp->n_stacks; i++)
		total += cp->stacks[i].depth;
	w->heap_addrs.n = 0;
	for (size_t i = 0; i < total; i++)
		if (!vec__push(&w->heap_addrs))
			return -ENOMEM;
	for (size_t i = 0; i < cp->n_stacks && !err; i++) {
		struct stack_rec *s = vec__push(new_stacks);
		uint64_t *keys = (uint64_t *)w->heap_addrs.v + at;

		if (!s)
			return -ENOMEM;
		*s = cp->stacks[i];
		for (int d = 0; d < s->depth && !err; d++)
			err = process_tree__key(w->pt, s->pid, s->addrs[d], KEY_FRAME, &keys[d]);
		s->addrs = keys;
		at += s->depth;
	}
	return err;
}

void checkpoint_writer__history(struct checkpoint_writer *w, struct history_writer *hw,
				uint64_t t0_ns, uint64_t base_ns, uint64_t budget_ms)
{
	w->hw = hw;
	w->hist_t0_ns = t0_ns;
	w->hist_base_ns = base_ns;
	w->hist_budget_ns = budget_ms ? budget_ms * 1000000 : 1;
}

/* One event of the tracker's history: its site as the file's key, to the history. */
static int history_event(void *ctx, const struct heap_hist_rec *e)
{
	struct checkpoint_writer *w = ctx;
	uint64_t t = (e->time_ns > w->hist_t0_ns ? e->time_ns - w->hist_t0_ns : 0) +
		     w->hist_base_ns, key = 0;
	int err = 0;

	if (e->free)
		return history_writer__free(w->hw, t, e->ptr);
	/* the key the site's heap rows got (a stack keeps its image's key) */
	if (e->stack_id >= 0 && hashmap__get(&w->heap_site_keys, (uint64_t)e->stack_id, &key))
		;
	else if (e->site)
		err = process_tree__key(w->pt, w->heap_pid, e->site, KEY_FRAME, &key);
	return err ? err : history_writer__alloc(w->hw, t, e->ptr, e->size, key, e->stack_id);
}

int checkpoint_writer__history_pump(struct checkpoint_writer *w, uint64_t budget_ms)
{
	int err;

	if (!w->hw)
		return 0;
	err = heap__history_take(w->heap);
	return err ? err : heap__history_each(w->heap, budget_ms * 1000000, true, history_event, w);
}

int checkpoint_writer__history_end(struct checkpoint_writer *w)
{
	if (!w->hw)
		return 0;
	return heap__history_end(w->heap, history_event, w);
}

/* The heap's processes: their address spaces are the process tree's. */
static struct resolver *heap_resolver(void *ctx, pid_t pid)
{
	struct checkpoint_writer *w = ctx;

	return process_tree__resolver(w->pt, pid);
}

static int heap_stack_id(void *ctx, int64_t *id)
{
	struct checkpoint_writer *w = ctx;

	return db_writer__stack_id(w->db, id);
}

static int heap_process(void *ctx, pid_t pid, pid_t ppid, bool forked, bool exec, bool exited)
{
	struct checkpoint_writer *w = ctx;

	return process_tree__learn(w->pt, pid, ppid, forked, exec, exited, w->now_ms);
}

/*
 * In the checkpoint's transaction, once its rows are in (its symbols are
 * then in the file): the allocation history drained so far, at most the
 * budget of it, and the mappings that changed.
 */
static int checkpoint_also(void *ctx, int64_t id)
{
	struct checkpoint_writer *w = ctx;
	int err = 0;

	if (w->hw)
		err = heap__history_each(w->heap, w->hist_budget_ns, false, history_event, w);
	return err ? err : process_tree__changed_maps(w->pt, write_maps, w);
}

int checkpoint_writer__write(struct checkpoint_writer *w, uint64_t timestamp_ms,
			     uint64_t lost_total)
{
	struct checkpoint cp = { 0 };
	struct vec new_stacks = { .elem = sizeof(struct stack_rec) };
	const struct symbol *const *syms = NULL;
	const struct process_row *rows = NULL;
	size_t n_syms = 0, n_rows = 0;
	int err = 0;

	/* first: resolving new stacks below can take a while */
	cp.has_rss = w->rss_pid > 0 &&
		     !proc__rss(w->rss_pid, &cp.rss_bytes, &cp.rss_anon_bytes);
	if (cp.has_rss) {
		int64_t hwm;

		if (!proc__rss_peak(w->rss_pid, &hwm) && hwm > w->rss_peak)
			w->rss_peak = hwm;
		if (cp.rss_bytes > w->rss_peak)
			w->rss_peak = cp.rss_bytes;
	}
	/* -g: the stacks first seen since the last checkpoint */
	for (size_t i = w->stacks_written; i < w->stacks.n; i++) {
		struct stack_ent *e = (struct stack_ent *)w->stacks.v + i;
		struct stack_rec *s = vec__push(&new_stacks);

		if (!s) {
			err = -ENOMEM;
			break;
		}
		s->id = e->id;
		s->hash = e->hash;
		s->addrs = e->addrs;
		s->depth = e->depth;
	}
	if (!err && w->heap) {
		struct heap_hooks hooks = { .resolver = heap_resolver, .process = heap_process,
					    .stack_id = heap_stack_id,
					    .ctx = w };

		w->now_ms = timestamp_ms;
		/* the history's events before the collect: it knows their stacks then */
		if (w->hw)
			err = heap__history_take(w->heap);
		if (!err)
			err = heap__collect(w->heap, &hooks, &cp);
		if (!err)
			err = heap_keys(w, &cp, &new_stacks);
	}
	if (!err)
		err = process_tree__new_symbols(w->pt, &syms, &n_syms);
	if (!err)
		err = process_tree__changed_rows(w->pt, &rows, &n_rows);
	if (err) {
		free(new_stacks.v);
		return err;
	}
	cp.stacks = new_stacks.n ? new_stacks.v : NULL;
	cp.n_stacks = new_stacks.n;
	cp.timestamp_ms = timestamp_ms;
	cp.cpu = w->cpu_rows.v;
	cp.n_cpu = w->cpu_rows.n;
	cp.symbols = syms;
	cp.n_symbols = n_syms;
	cp.processes = rows;
	cp.n_processes = n_rows;
	cp.lost_samples = lost_total - w->lost_at_cp;
	if (w->call_graph)
		err = stack_counts(w);
	cp.stack_counts = w->stack_rows.v;
	cp.n_stack_counts = w->stack_rows.n;
	cp.also = checkpoint_also;
	cp.also_ctx = w;
	if (!err)
		err = db_writer__checkpoint(w->db, &cp, NULL);
	free(new_stacks.v);
	if (err)
		return err;
	w->lost_at_cp = lost_total;
	w->stacks_written = w->stacks.n;
	w->cpu_rows.n = 0;
	hashmap__clear(&w->cpu);
	hashmap__clear(&w->stack_counts);
	process_tree__gc(w->pt);
	return 0;
}

void checkpoint_writer__delete(struct checkpoint_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->stacks.n; i++)
		free(((struct stack_ent *)w->stacks.v)[i].addrs);
	free(w->stacks.v);
	free(w->stack_rows.v);
	free(w->map_rows.v);
	free(w->build_ids.v);
	free(w->cpu_rows.v);
	free(w->heap_rows.v);
	free(w->heap_addrs.v);
	hashmap__free(&w->heap_site_keys);
	hashmap__free(&w->probe_fns);
	hashmap__free(&w->irq_fns);
	hashmap__free(&w->cpu);
	hashmap__free(&w->stack_counts);
	hashmap__free(&w->stack_index);
	free(w);
}
