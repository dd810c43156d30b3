/*
 * Heap sites from the stored stacks: the readers apply the site
 * rule (util/heap/attrib.c) again to each heap stack of the file, with the
 * built-in allocation wrappers, the recording's meta.heap_alloc_fn and the
 * reader's own (report --alloc-fn). Where a wrapper is in the way, the
 * stack's rows count at the line the rule gives instead of the recorded
 * heap_events.addr; elsewhere the recorded site stands, so a profile read
 * with no wrapper in its stacks reads as it always did.
 *
 * The stacks are the recorder's: frames are addresses of the symbols
 * table, their inline chains in symbol_frames. The line may be one of an
 * inline chain that is not its address's symbols row (a wrapper inlined
 * into its caller): such a site is added to the query's symbols as a line
 * with no address (qctx_add_sym).
 *
 * The same pass finds, per stack, the line that called the site (the next
 * own-code line outwards): report's hint about a wrapper nobody named.
 */
#include "util/db/read/query-priv.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/read/totals.h"
#include "util/heap/alloc-fn.h"
#include "util/heap/attrib.h"
#include "util/symbols/symbol.h"

struct ra_build {
	struct qctx *q;
	struct reattrib *ra;
	struct chains c;
	struct alloc_fns *fns;
	enum heap_attribution mode;
	struct symbol *sv;		/* per address symbol, built on first use */
	struct frame *single;		/* the symbols row as a one-line chain */
	bool *built;
	struct hashmap added;		/* added sites by key -> index in q->syms */
	const struct symbol **frames;	/* the stack being read */
	int *frame_si;			/* its frames' symbol indexes, -1: unknown */
	int n, cap;
};

static const struct symbol *sym_of(struct ra_build *b, int si)
{
	struct symbol *s;
	const struct qsym *qs;

	if (si < 0)
		return NULL;
	s = &b->sv[si];
	if (b->built[si])
		return s;
	qs = &b->q->syms[si];
	b->single[si].file = qs->file;		/* borrowed, never freed through here */
	b->single[si].line = qs->line;
	b->single[si].function = qs->function;
	s->addr = (uint64_t)qs->addr;
	s->module = qs->module;
	if (si < b->c.n_syms && b->c.n[si]) {
		s->frames = &b->c.v[b->c.first[si]];
		s->n_frames = b->c.n[si];
	} else {
		s->frames = &b->single[si];
		s->n_frames = 1;
	}
	s->chosen = 0;		/* the chains start at the reported frame */
	s->has_debuginfo = qs->file != NULL;
	b->built[si] = true;
	return s;
}

/* Is an inline frame of s, up to (not including) depth maxd, a wrapper? */
static bool wrapper_within(const struct symbol *s, int maxd, const struct alloc_fns *fns)
{
	for (int d = 0; s && d < s->n_frames && d < maxd; d++)
		if (alloc_fns__match(fns, s->frames[d].function))
			return true;
	return false;
}

static bool key_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct qsym *a = &((const struct qctx *)ctx)->syms[val], *k = key;

	return a->line == k->line &&
	       ((!a->file && !k->file) || (a->file && k->file && !strcmp(a->file, k->file))) &&
	       ((!a->function && !k->function) ||
		(a->function && k->function && !strcmp(a->function, k->function))) &&
	       ((!a->module && !k->module) ||
		(a->module && k->module && !strcmp(a->module, k->module)));
}

/* The index in q->syms of the line (f, module) as a site with no address. */
static int added_site(struct ra_build *b, const struct frame *f, const char *module)
{
	struct qsym key = { .file = f->file, .line = f->line, .function = f->function,
			    .module = (char *)module };
	uint64_t h = hashmap__hash_u64((uint64_t)f->line), idx;
	bool fresh;
	int n, err;

	h ^= f->file ? hashmap__hash_str(f->file) : 0;
	h = hashmap__hash_u64(h) ^ (f->function ? hashmap__hash_str(f->function) : 0);
	if (hashmap__lookup(&b->added, h, key_eq, &key, b->q, &idx))
		return (int)idx;
	n = qctx_add_sym(b->q, f->file, f->line, f->function, module);
	if (n < 0)
		return n;
	idx = (uint64_t)n;
	err = hashmap__intern(&b->added, h, key_eq, &key, b->q, &idx, &fresh);
	return err ? err : n;
}

/* One stack of the file, its frames in b->frames. */
static int one_stack(struct ra_build *b, int64_t id)
{
	int depth = 0, fi, cd, cf, si;

	if (!b->n)
		return 0;
	fi = heap_attrib__site(b->frames, b->n, b->mode, b->fns, &depth);
	si = b->frame_si[fi];
	for (int i = 0; si >= 0 && i <= fi; i++) {
		if (!wrapper_within(b->frames[i], i == fi ? depth : INT_MAX, b->fns))
			continue;
		if (depth > 0) {
			si = added_site(b, &b->frames[fi]->frames[depth], b->frames[fi]->module);
			if (si < 0)
				return si;
		}
		if (hashmap__set(&b->ra->site, (uint64_t)id, (uint64_t)si + 1))
			return -ENOMEM;
		break;
	}
	/* the line that called the site, as a hash of its key */
	cf = heap_attrib__next_own(b->frames, b->n, fi, depth, b->fns, &cd);
	if (cf >= 0) {
		const struct frame *f = &b->frames[cf]->frames[cd];
		uint64_t h = hashmap__hash_u64((uint64_t)f->line);

		h ^= f->file ? hashmap__hash_str(f->file) : 0;
		h = hashmap__hash_u64(h) ^ (f->function ? hashmap__hash_str(f->function) : 0);
		if (hashmap__set(&b->ra->caller, (uint64_t)id, h ? h : 1))
			return -ENOMEM;
	}
	return 0;
}

static int push_frame(struct ra_build *b, int64_t addr)
{
	const struct qsym *s = qctx_find(b->q, addr);
	int si = s == &b->q->unknown ? -1 : (int)(s - b->q->syms);

	if (ALLOC_GROW2(b->frames, b->frame_si, b->n + 1, b->cap, 64))
		return -ENOMEM;
	b->frame_si[b->n] = si;
	b->frames[b->n++] = sym_of(b, si);
	return 0;
}

static int setup(struct ra_build *b)
{
	const char *const *user = b->q->f->alloc_fn;
	char *meta = NULL, *mode = NULL;
	int err, m;

	err = db__meta_get(b->q->db, "heap_attribution", &mode);
	if (!err)
		err = db__meta_get(b->q->db, "heap_alloc_fn", &meta);
	m = mode ? heap_attrib__parse(mode) : ATTR_FIRST_USER;
	b->mode = m < 0 ? ATTR_FIRST_USER : (enum heap_attribution)m;
	b->fns = alloc_fns__new(true);
	if (!err && !b->fns)
		err = -ENOMEM;
	if (!err)
		err = alloc_fns__add_list(b->fns, meta);
	for (size_t i = 0; !err && user && user[i]; i++)
		if (alloc_fns__add(b->fns, user[i]) == -ENOMEM)
			err = -ENOMEM;
	free(meta);
	free(mode);
	return err;
}

/*
 * What the stacks' frames are read with: per address its symbol, built on
 * first use, and the inline chains. Only once a heap stack is there: a
 * profile without any reads no symbol_frames.
 */
static int setup_frames(struct ra_build *b)
{
	b->sv = calloc(b->q->n_addr_syms + 1, sizeof(*b->sv));
	b->single = calloc(b->q->n_addr_syms + 1, sizeof(*b->single));
	b->built = calloc(b->q->n_addr_syms + 1, sizeof(*b->built));
	if (!b->sv || !b->single || !b->built)
		return -ENOMEM;
	return chains_load(b->q, &b->c);
}

int reattrib_load(struct qctx *q, struct reattrib *ra)
{
	struct ra_build b = { .q = q, .ra = ra };
	struct totals *t = NULL;
	sqlite3_stmt *st = NULL;
	int64_t cur = 0;
	int rc, err;

	memset(ra, 0, sizeof(*ra));
	if (!db__has(q->db, DB_V2))
		return 0;	/* no stacks before version 2 */
	err = setup(&b);
	if (err || b.mode == ATTR_STACK)
		goto out;	/* stack: frame 0 as recorded, no rule to apply again */
	/*
	 * The heap stacks only: CPU stacks (-g) share the tables. Which they
	 * are, the writer's totals say (keyed by stack) for the checkpoints
	 * they hold, without a scan of heap_events.
	 */
	err = totals__open(q->db, &t);
	if (err)
		goto out;
	err = db__prepare(q->db, "read heap stacks", t ?
			"SELECT stack_id, pos, addr FROM stack_frames WHERE stack_id IN"
			" (SELECT stack_id FROM heap_totals WHERE level = 2 AND stack_id >= 0"
			" UNION SELECT stack_id FROM heap_events WHERE checkpoint_id > ?1"
			" AND stack_id IS NOT NULL) ORDER BY stack_id, pos" :
			"SELECT stack_id, pos, addr FROM stack_frames"
			" WHERE stack_id IN (SELECT stack_id FROM heap_events"
			" WHERE stack_id IS NOT NULL) ORDER BY stack_id, pos", &st);
	if (err)
		goto out;
	if (t)
		sqlite3_bind_int64(st, 1, totals__through(t));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		if (b.n && id != cur) {
			err = one_stack(&b, cur);
			b.n = 0;
			if (err)
				break;
		}
		if (!b.sv && (err = setup_frames(&b)))
			break;
		cur = id;
		err = push_frame(&b, sqlite3_column_int64(st, 2));
		if (err)
			break;
	}
	if (!err && rc != SQLITE_DONE)
		err = db__err(q->db, "read heap stacks");
	if (!err)
		err = one_stack(&b, cur);
out:
	sqlite3_finalize(st);
	totals__delete(t);
	chains_free(&b.c, b.c.n_syms);
	alloc_fns__delete(b.fns);
	hashmap__free(&b.added);
	free(b.sv);
	free(b.single);
	free(b.built);
	free(b.frames);
	free(b.frame_si);
	if (err)
		reattrib_free(ra);
	return err;
}

/* Does the file hold a call stack? Without one no heap row can move. */
static int any_stack(struct db *db, bool *any)
{
	sqlite3_stmt *st;
	int rc, err;

	*any = false;
	if (!db__has(db, DB_V2))
		return 0;	/* no stacks before version 2 */
	err = db__prepare(db, "read heap stacks", "SELECT EXISTS (SELECT 1 FROM stack_frames)", &st);
	if (err)
		return err;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*any = sqlite3_column_int(st, 0);
	else
		err = db__err(db, "read heap stacks");
	sqlite3_finalize(st);
	return err;
}

int db_query_heap_moved(struct db *db, const char *const *alloc_fn, heap_moved_cb cb,
			void *ctx)
{
	struct query_filter f;
	struct reattrib ra = { 0 };
	struct qctx q;
	bool any;
	int err = any_stack(db, &any);

	/* the symbols are loaded for the stacks' frames only */
	if (err || !any)
		return err;
	query_filter__init(&f);
	f.alloc_fn = alloc_fn;
	err = qctx_load_syms(&q, db, &f);
	if (!err)
		err = reattrib_load(&q, &ra);
	if (!err && ra.site.has_zero && ra.site.zero) {
		const struct qsym *s = &q.syms[ra.site.zero - 1];

		err = cb(ctx, 0, s->file, s->line, s->function, s->module);
	}
	if (!err) {
		hashmap__for_each(&ra.site, i) {
			const struct qsym *s;

			if (!ra.site.vals[i])
				continue;
			s = &q.syms[ra.site.vals[i] - 1];
			err = cb(ctx, (int64_t)ra.site.keys[i], s->file, s->line, s->function,
				 s->module);
			if (err)
				break;
		}
	}
	reattrib_free(&ra);
	qctx_free(&q);
	return err;
}

void reattrib_free(struct reattrib *ra)
{
	hashmap__free(&ra->site);
	hashmap__free(&ra->caller);
}

const struct qsym *reattrib_site(const struct reattrib *ra, const struct qctx *q,
				 int64_t stack_id)
{
	uint64_t v;

	if (stack_id < 0 || !hashmap__get(&ra->site, (uint64_t)stack_id, &v) || !v)
		return NULL;
	return &q->syms[v - 1];
}

uint64_t reattrib_caller(const struct reattrib *ra, int64_t stack_id)
{
	return stack_id < 0 ? 0 : hashmap__value(&ra->caller, (uint64_t)stack_id);
}
