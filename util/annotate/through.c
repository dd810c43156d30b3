/*
 * Inclusive numbers per function, line and address, from the profile's stacks.
 */
#include "util/annotate/through.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/read/query.h"
#include "util/hashmap.h"
#include "util/saturate.h"
#include "util/symbols/symbol.h"

/* One function, or one line of it (file >= 0), or one address of it (file < 0). */
struct entry {
	int fn, file, line;
	uint64_t addr;
	struct ann_counts c;
	int64_t stamp;		/* the last stack that counted here */
};

struct tpriv {
	struct strtab files;
	struct entry *v;
	int n, cap;
	struct hashmap map;	/* (fn, file, line, addr) -> index in v */
	int64_t stack;		/* stacks seen */
	struct ann_counts cur;	/* the current stack's numbers */
};

static bool entry_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct tpriv *p = ctx;
	const struct entry *a = &p->v[val], *b = key;

	return a->fn == b->fn && a->file == b->file && a->line == b->line && a->addr == b->addr;
}

static uint64_t entry_hash(const struct entry *e)
{
	uint64_t h = hashmap__hash_u64((uint64_t)(uint32_t)e->fn << 32 | (uint32_t)e->file);

	h = hashmap__hash_u64(h ^ (uint64_t)(uint32_t)e->line);
	h = hashmap__hash_u64(h ^ e->addr);
	return h ? h : 1;
}

static void counts_add(struct ann_counts *to, const struct ann_counts *c)
{
	to->samples = sat__addu(to->samples, c->samples);
	to->live_bytes = sat__add(to->live_bytes, c->live_bytes);
	to->alloc_bytes = sat__add(to->alloc_bytes, c->alloc_bytes);
	to->alloc_count = sat__add(to->alloc_count, c->alloc_count);
}

/* Count the current stack at key, unless this stack already did. */
static int count_at(struct tpriv *p, const struct entry *key)
{
	uint64_t v = (uint64_t)p->n;
	bool fresh = false;
	int err = hashmap__intern(&p->map, entry_hash(key), entry_eq, key, p, &v, &fresh);
	struct entry *e;

	if (err)
		return err;
	if (fresh) {
		if (ALLOC_GROW(p->v, p->n + 1, p->cap, 256))
			return -ENOMEM;
		p->v[p->n] = *key;
		p->v[p->n].stamp = -1;
		p->n++;
	}
	e = &p->v[v];
	if (e->stamp == p->stack)
		return 0;	/* recursion: once per stack */
	e->stamp = p->stack;
	counts_add(&e->c, &p->cur);
	return 0;
}

static int stack_cb(const struct prof_stack *s, void *ctx)
{
	struct through *t = ctx;
	struct tpriv *p = t->priv;
	int err = 0;

	p->stack++;
	for (int i = 0; i < s->depth && !err; i++) {
		const struct prof_frame *f = &s->frames[i];

		for (int k = 0; k < f->n_lines && !err; k++) {
			const struct frame *l = &f->lines[k];
			struct entry key = { .file = -1 };

			if (!l->function)
				continue;
			err = strtab__intern(&t->names, l->function, &key.fn);
			if (!err)
				err = count_at(p, &key);		/* the function */
			key.addr = f->addr;
			if (!err)
				err = count_at(p, &key);		/* the address */
			key.addr = 0;
			if (!err && l->file && l->line > 0) {
				err = strtab__intern(&p->files, l->file, &key.file);
				key.line = l->line;
				if (!err)
					err = count_at(p, &key);	/* the line */
			}
		}
	}
	return err;
}

static int cpu_cb(const struct prof_stack *s, void *ctx)
{
	struct through *t = ctx;
	struct tpriv *p = t->priv;

	p->cur = (struct ann_counts){ .samples = (uint64_t)s->value };
	if (s->depth > 1)
		t->cpu = true;
	return stack_cb(s, ctx);
}

static int heap_cb(const struct prof_stack *s, void *ctx)
{
	struct through *t = ctx;
	struct tpriv *p = t->priv;

	p->cur = (struct ann_counts){ .live_bytes = s->value, .alloc_bytes = s->alloc_value,
				      .alloc_count = s->alloc_count };
	if (s->depth > 1)
		t->heap = true;
	return stack_cb(s, ctx);
}

int through__load(struct db *db, const struct query_filter *f, struct through **out)
{
	struct through *t = calloc(1, sizeof(*t));
	struct query_filter all = *f;
	int err = 0;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->priv = calloc(1, sizeof(struct tpriv));
	if (!t->priv) {
		free(t);
		return -ENOMEM;
	}
	all.pattern = NULL;
	/* without -g every CPU stack is the sampled address alone: the rows' own numbers */
	if (db__has(db, DB_CPU_STACKS))
		err = db_query_stacks(db, &all, false, cpu_cb, t);
	if (!err)
		err = db_query_stacks(db, &all, true, heap_cb, t);
	if (err) {
		through__delete(t);
		return err;
	}
	*out = t;
	return 0;
}

void through__delete(struct through *t)
{
	struct tpriv *p;

	if (!t)
		return;
	p = t->priv;
	if (p) {
		strtab__free(&p->files);
		hashmap__free(&p->map);
		free(p->v);
		free(p);
	}
	strtab__free(&t->names);
	free(t);
}

bool through__func(const struct through *t, const char *fn, struct ann_counts *c)
{
	const struct tpriv *p = t->priv;
	struct entry key = { .file = -1 };
	uint64_t v;

	memset(c, 0, sizeof(*c));
	key.fn = strtab__find(&t->names, fn);
	if (key.fn < 0 || !hashmap__lookup(&p->map, entry_hash(&key), entry_eq, &key, p, &v))
		return false;
	*c = p->v[v].c;
	return true;
}

const char *through__func_at(const struct through *t, const char *file, int line)
{
	const struct tpriv *p = t->priv;
	int idx = strtab__find(&p->files, file), best = -1;
	uint64_t most = 0;

	for (int i = 0; idx >= 0 && i < p->n; i++) {
		const struct entry *e = &p->v[i];
		uint64_t w = e->c.samples + (uint64_t)e->c.alloc_count + 1;

		if (e->file == idx && e->line == line && w > most) {
			most = w;
			best = e->fn;
		}
	}
	return best < 0 ? NULL : t->names.v[best];
}

int through__lines(const struct through *t, const char *fn, through_line_cb cb, void *ctx)
{
	const struct tpriv *p = t->priv;
	int idx = strtab__find(&t->names, fn), err = 0;

	for (int i = 0; idx >= 0 && i < p->n && !err; i++)
		if (p->v[i].fn == idx && p->v[i].file >= 0)
			err = cb(ctx, p->files.v[p->v[i].file], p->v[i].line, &p->v[i].c);
	return err;
}

int through__addrs(const struct through *t, const char *fn, through_addr_cb cb, void *ctx)
{
	const struct tpriv *p = t->priv;
	int idx = strtab__find(&t->names, fn), err = 0;

	for (int i = 0; idx >= 0 && i < p->n && !err; i++)
		if (p->v[i].fn == idx && p->v[i].file < 0 && p->v[i].addr)
			err = cb(ctx, p->v[i].addr, &p->v[i].c);
	return err;
}
