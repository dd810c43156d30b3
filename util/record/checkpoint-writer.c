#include "util/record/checkpoint-writer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/db/db.h"
#include "util/db/stacks.h"
#include "util/heap/heap.h"
#include "util/record/maps.h"
#include "util/record/proc.h"
#include "util/symbols/resolver.h"
#include "util/symbols/symbol.h"

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

struct checkpoint_writer {
	struct db *db;
	struct db_stacks *dbst;		/* -g */
	struct resolver *res;
	struct heap *heap;
	pid_t rss_pid;			/* resident memory of this process, 0: none */

	uint64_t lost_at_cp;	/* sampler's lost total at the previous checkpoint */
	bool maps_written;
	bool maps_stale;	/* a sample fell outside the known mappings: re-read them */
	uint64_t maps_read_ms;

	struct hashmap cpu;		/* ip -> samples, this checkpoint */
	struct hashmap known;		/* addresses whose symbols are in the file */
	struct vec cpu_rows;		/* struct cpu_count */
	struct vec syms;		/* const struct symbol * */
	uint64_t *heap_new;		/* heap__collect()'s new addresses */
	size_t heap_new_n, heap_new_cap;

	/* -g */
	struct hashmap stack_counts;	/* stack hash -> samples, this checkpoint */
	struct vec stacks;		/* struct stack_ent, every stack of the file */
	struct hashmap stack_index;	/* hash -> index + 1 in stacks */
	size_t stacks_written;
	struct vec stack_rows;		/* struct stack_count, this checkpoint */
	int64_t next_stack_id;
	bool sample_err;
};

int checkpoint_writer__new(struct db *db, struct db_stacks *dbst, struct resolver *res,
			   struct heap *heap, struct checkpoint_writer **out)
{
	struct checkpoint_writer *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->db = db;
	w->dbst = dbst;
	w->res = res;
	w->heap = heap;
	w->cpu_rows.elem = sizeof(struct cpu_count);
	w->syms.elem = sizeof(const struct symbol *);
	w->stacks.elem = sizeof(struct stack_ent);
	w->stack_rows.elem = sizeof(struct stack_count);
	w->next_stack_id = CPU_STACK_ID0;
	*out = w;
	return 0;
}

void checkpoint_writer__watch_rss(struct checkpoint_writer *w, pid_t pid)
{
	w->rss_pid = pid;
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

void checkpoint_writer__sample(void *ctx, pid_t tid, uint64_t ip, const uint64_t *chain,
			       unsigned int depth)
{
	struct checkpoint_writer *w = ctx;
	bool fresh;

	if (hashmap__add(&w->cpu, ip, 1, &fresh))
		w->sample_err = true;
	if (fresh && !w->maps_stale && !hashmap__get(&w->known, ip, NULL) &&
	    !maps__find(resolver__maps(w->res), ip))
		w->maps_stale = true;
	if (w->dbst && depth) {
		uint64_t h = stack_hash(chain, depth);

		if (hashmap__add(&w->stack_counts, h, 1, &fresh))
			w->sample_err = true;
		if (!hashmap__get(&w->stack_index, h, NULL)) {
			for (unsigned int i = 0; i < depth && !w->maps_stale; i++)
				if (!maps__find(resolver__maps(w->res), chain[i]))
					w->maps_stale = true;
			struct stack_ent *e = vec__push(&w->stacks);

			if (!e) {
				w->sample_err = true;
				return;
			}
			e->hash = h;
			e->id = w->next_stack_id++;
			e->depth = (int)(depth > MAX_STACK ? MAX_STACK : depth);
			e->addrs = malloc(sizeof(uint64_t) * e->depth);
			if (!e->addrs) {
				w->stacks.n--;
				w->sample_err = true;
				return;
			}
			memcpy(e->addrs, chain, sizeof(uint64_t) * e->depth);
			if (hashmap__add(&w->stack_index, h, w->stacks.n, &fresh))
				w->sample_err = true;
		}
	}
}

int checkpoint_writer__error(const struct checkpoint_writer *w)
{
	return w->sample_err ? -ENOMEM : 0;
}

void checkpoint_writer__refresh_maps(struct checkpoint_writer *w, uint64_t now_ms,
				     uint64_t every_ms)
{
	if (w->maps_stale && now_ms >= w->maps_read_ms + every_ms) {
		if (!resolver__refresh_maps(w->res))
			w->maps_written = false;
		w->maps_stale = false;
		w->maps_read_ms = now_ms;
	}
}

void checkpoint_writer__maps_changed(struct checkpoint_writer *w)
{
	w->maps_stale = true;
	w->maps_read_ms = 0;
}

/* The symbol of addr goes into this checkpoint unless the file has it already. */
static int want_symbol(struct checkpoint_writer *w, uint64_t addr, bool *maps_refreshed)
{
	const struct symbol *sym, **slot;
	bool fresh;

	if (hashmap__get(&w->known, addr, NULL))
		return 0;
	/* an address in no known mapping: a library loaded since (dlopen) */
	if (!*maps_refreshed && !maps__find(resolver__maps(w->res), addr)) {
		*maps_refreshed = true;
		if (!resolver__refresh_maps(w->res))
			w->maps_written = false;
	}
	sym = resolver__resolve(w->res, addr);
	if (!sym)
		return -ENOMEM;
	slot = vec__push(&w->syms);
	if (!slot)
		return -ENOMEM;
	*slot = sym;
	return hashmap__add(&w->known, addr, 1, &fresh);
}

/* Index + 1 of the stack with hash h in w->stacks, 0 when unknown. */
static size_t stack_index_of(struct checkpoint_writer *w, uint64_t h)
{
	return (size_t)hashmap__value(&w->stack_index, h);
}

/* -g: samples per stack of this checkpoint, after the checkpoint (its id) is written. */
static int write_stack_counts(struct checkpoint_writer *w, int64_t cid)
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
	return db_stacks__write(w->dbst, cid, w->stack_rows.v, w->stack_rows.n);
}

int checkpoint_writer__write(struct checkpoint_writer *w, uint64_t timestamp_ms,
			     uint64_t lost_total)
{
	struct checkpoint cp = { 0 };
	struct vec new_stacks = { .elem = sizeof(struct stack_rec) };
	bool refreshed = false;
	int64_t id;
	int err = 0;

	w->cpu_rows.n = 0;
	w->syms.n = 0;
	/* first: resolving new stacks below can take a while */
	cp.has_rss = w->rss_pid > 0 &&
		     !proc__rss(w->rss_pid, &cp.rss_bytes, &cp.rss_anon_bytes);
	hashmap__for_each(&w->cpu, i) {
		struct cpu_count *c = vec__push(&w->cpu_rows);
		if (!c)
			return -ENOMEM;
		c->addr = w->cpu.keys[i];
		c->count = w->cpu.vals[i];
	}
	if (w->cpu.has_zero) {
		struct cpu_count *c = vec__push(&w->cpu_rows);

		if (!c)
			return -ENOMEM;
		c->addr = 0;
		c->count = w->cpu.zero;
	}
	for (size_t i = 0; i < w->cpu_rows.n && !err; i++)
		err = want_symbol(w, ((struct cpu_count *)w->cpu_rows.v)[i].addr, &refreshed);

	/* -g: the stacks first seen since the last checkpoint */
	for (size_t i = w->stacks_written; i < w->stacks.n && !err; i++) {
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
		for (int d = 0; d < e->depth && !err; d++)
			err = want_symbol(w, e->addrs[d], &refreshed);
	}
	if (!err && w->heap) {
		w->heap_new_n = 0;
		err = heap__collect(w->heap, w->res, &cp, &w->heap_new, &w->heap_new_n,
				    &w->heap_new_cap);
		for (size_t i = 0; i < w->heap_new_n && !err; i++)
			err = want_symbol(w, w->heap_new[i], &refreshed);
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
	cp.timestamp_ms = timestamp_ms;
	cp.cpu = w->cpu_rows.v;
	cp.n_cpu = w->cpu_rows.n;
	cp.symbols = w->syms.v;
	cp.n_symbols = w->syms.n;
	cp.lost_samples = lost_total - w->lost_at_cp;
	err = db__write_checkpoint(w->db, &cp, &id);
	free(new_stacks.v);
	if (!err && w->dbst)
		err = write_stack_counts(w, id);
	if (err)
		return err;
	w->lost_at_cp = lost_total;
	w->stacks_written = w->stacks.n;
	hashmap__clear(&w->cpu);
	hashmap__clear(&w->stack_counts);
	if (!w->maps_written) {
		err = db__write_maps(w->db, resolver__maps(w->res));
		if (err)
			return err;
		w->maps_written = true;
	}
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
	free(w->cpu_rows.v);
	free(w->syms.v);
	free(w->heap_new);
	hashmap__free(&w->cpu);
	hashmap__free(&w->known);
	hashmap__free(&w->stack_counts);
	hashmap__free(&w->stack_index);
	free(w);
}
