#include "util/analysis/diff.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/read/addrs.h"
#include "util/hashmap.h"
#include "util/error.h"
#include "util/saturate.h"
#include "util/symbols/srcpath.h"

/* One run's numbers for one of the shared sites. */
struct side {
	uint64_t samples;
	int64_t live, allocs;
	const char *build_id;	/* of the module that held the site; NULL: unknown */
	bool cpu, heap, matched;
};

struct pair {
	struct side s[2];	/* A, B */
};

/* One run as read: its own sites and their numbers (util/db/read/site.h). */
struct run {
	struct sitemap *sm;
	struct site_sums *loc;
	/* the build-id of each module (path), where the profile has them */
	struct build_id { char *path, *id; } *ids;
	size_t n_ids, cap_ids;
};

struct diff_ctx {
	const struct diff_opts *o;
	struct sitemap *shared;	/* sites of both runs, keyed by matched path */
	struct pair *pairs;
	size_t cap;
	uint64_t total_samples[2];
	int64_t total_live[2];
	bool heap[2];
	struct run run[2];
	char *root[2];		/* the checkout directory of each run, NULL: none found */
};

/* Room for every shared site's pair, the new ones zeroed. */
static int grow_pairs(struct diff_ctx *c)
{
	size_t old = c->cap;

	if (ALLOC_GROW(c->pairs, sitemap__count(c->shared) + 1, c->cap, 1024))
		return -ENOMEM;
	memset(c->pairs + old, 0, (c->cap - old) * sizeof(*c->pairs));
	return 0;
}

static bool matches(const char *pattern, const char *file, const char *function)
{
	if (!pattern || !*pattern)
		return true;
	return (file && strcasestr(file, pattern)) || (function && strcasestr(function, pattern));
}

static int add_build_id(void *ctx, const char *path, const char *id)
{
	struct run *r = ctx;

	if (ALLOC_GROW(r->ids, r->n_ids + 1, r->cap_ids, 16))
		return -ENOMEM;
	r->ids[r->n_ids].path = strdup(path);
	r->ids[r->n_ids].id = strdup(id);
	r->n_ids++;
	return r->ids[r->n_ids - 1].path && r->ids[r->n_ids - 1].id ? 0 : -ENOMEM;
}

/* One run: its own sites and their numbers, its modules' build-ids. */
static int read_run(struct diff_ctx *c, struct db *db, int side)
{
	struct run *r = &c->run[side];
	int err;

	r->sm = sitemap__new();
	if (!r->sm)
		return -ENOMEM;
	err = site_sums__read(db, r->sm, c->o->by, c->o->alloc_fn, &c->o->win[side], &r->loc,
			      &c->total_samples[side]);
	return err ? err : db_query_build_ids(db, add_build_id, r);
}

/* The one build-id of module in r; NULL: unknown, or two builds of it. */
static const char *build_id_of(const struct run *r, const char *module)
{
	const char *id = NULL;

	for (size_t i = 0; module && i < r->n_ids; i++) {
		if (strcmp(r->ids[i].path, module))
			continue;
		if (id && strcmp(id, r->ids[i].id))
			return NULL;
		id = r->ids[i].id;
	}
	return id;
}


/* ---- two checkouts: the directories the source files hang from ---------- */

/* A file of a run worth matching: absolute, the program's own, with numbers. */
static const char *own_file(const struct run *r, size_t i)
{
	const char *file, *function, *module;
	int line;

	if (!r->loc[i].cpu && !r->loc[i].heap)
		return NULL;
	sitemap__site(r->sm, (long)i, &file, &line, &function, &module);
	return file && file[0] == '/' && !srcpath__is_toolchain(file) ? file : NULL;
}

/* Length of the prefix left when the common suffix (whole components) of a and b is cut. */
static void common_suffix(const char *a, const char *b, size_t *pa, size_t *pb)
{
	size_t i = strlen(a), j = strlen(b);

	while (i && j && a[i - 1] == b[j - 1]) {
		i--;
		j--;
	}
	/* back to a component boundary: the suffix must start after a '/' in both */
	while (a[i] && a[i] != '/')
		i++;
	while (b[j] && b[j] != '/')
		j++;
	*pa = i;
	*pb = j;
}

struct vote {
	char *key;		/* prefix A \x1f prefix B */
	size_t len_a;
	long n;
};

/* A distinct file of a run's sites: how many sites have it, where it first comes. */
struct own {
	const char *file;
	size_t first;
	long n;
};

static int cmp_own_file(const void *pa, const void *pb)
{
	const struct own *a = pa, *b = pb;
	int r = strcmp(a->file, b->file);

	return r ? r : (a->first > b->first) - (a->first < b->first);
}

static int cmp_own_first(const void *pa, const void *pb)
{
	const struct own *a = pa, *b = pb;

	return (a->first > b->first) - (a->first < b->first);
}

/*
 * The run's own files once each, in the order of their first site, with
 * their number of sites: the votes below go per pair of files, weighted by
 * their sites, which is what a vote per pair of sites adds up to, without
 * the sites^2 pairs (4 M and 300 ms at 2,000 sites in 50 files).
 */
static int own_files(const struct run *r, struct own **out, size_t *n_out)
{
	size_t n = sitemap__count(r->sm), k = 0, m = 0;
	struct own *v = calloc(n + 1, sizeof(*v));

	*out = NULL;
	*n_out = 0;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *f = own_file(r, i);

		if (f)
			v[k++] = (struct own){ f, i, 1 };
	}
	qsort(v, k, sizeof(*v), cmp_own_file);
	for (size_t i = 0; i < k; i++) {
		if (m && !strcmp(v[m - 1].file, v[i].file))
			v[m - 1].n++;
		else
			v[m++] = v[i];
	}
	qsort(v, m, sizeof(*v), cmp_own_first);
	*out = v;
	*n_out = m;
	return 0;
}

/*
 * The pair of directories (root A, root B) most files agree on: for every
 * file of A and every file of B with the same name, the prefixes left after
 * their common suffix vote (once per pair of sites with those files). A
 * pair that differs (two checkouts, two worktrees) makes files under A's
 * root match B's by the path below it.
 */
static int find_roots(struct diff_ctx *c)
{
	struct vote *v = NULL;
	struct own *fa = NULL, *fb = NULL;
	size_t nv = 0, cap = 0, na = 0, nb = 0;
	long best = -1;
	int err = own_files(&c->run[0], &fa, &na);

	if (!err)
		err = own_files(&c->run[1], &fb, &nb);
	for (size_t i = 0; i < na && !err; i++) {
		const char *a = fa[i].file, *base_a;

		base_a = strrchr(a, '/') + 1;
		for (size_t j = 0; j < nb && !err; j++) {
			const char *b = fb[j].file, *base_b;
			size_t pa, pb, k;
			char *key;

			base_b = strrchr(b, '/') + 1;
			if (strcmp(base_a, base_b))
				continue;
			common_suffix(a, b, &pa, &pb);
			if (!a[pa] || !b[pb] || (pa == pb && !strncmp(a, b, pa)))
				continue;	/* the same directory, or no common part */
			if (asprintf(&key, "%.*s\x1f%.*s", (int)pa, a, (int)pb, b) < 0) {
				err = -ENOMEM;
				break;
			}
			for (k = 0; k < nv && strcmp(v[k].key, key); k++)
				;
			if (k < nv) {
				free(key);
			} else {
				if (ALLOC_GROW(v, nv + 1, cap, 16)) {
					free(key);
					err = -ENOMEM;
					break;
				}
				v[nv++] = (struct vote){ .key = key, .len_a = pa };
			}
			v[k].n = sat__add(v[k].n, sat__mul(fa[i].n, fb[j].n));
		}
	}
	free(fa);
	free(fb);
	for (size_t k = 0; k < nv; k++)
		if (best < 0 || v[k].n > v[best].n)
			best = (long)k;
	if (!err && best >= 0) {
		c->root[0] = strndup(v[best].key, v[best].len_a);
		c->root[1] = strdup(v[best].key + v[best].len_a + 1);
		if (!c->root[0] || !c->root[1])
			err = -ENOMEM;
	}
	for (size_t k = 0; k < nv; k++)
		free(v[k].key);
	free(v);
	return err;
}

/* The file as the two runs are matched on: below the run's root, else its display form. */
static const char *match_file(const struct diff_ctx *c, int side, const char *file,
			      const char *module, char *buf, size_t len)
{
	const char *root = c->root[side];
	size_t n = root ? strlen(root) : 0;

	if (!file)
		return NULL;
	if (root && !strncmp(file, root, n) && file[n] == '/') {
		snprintf(buf, len, "%s", file + n + 1);
		return buf;
	}
	return srcpath__display(file, module, buf, len);
}

/* One run's sites folded into the shared sites. */
static int fold_run(struct diff_ctx *c, int side)
{
	const struct run *r = &c->run[side];
	int err = 0;

	for (size_t i = 0; !err && i < sitemap__count(r->sm); i++) {
		const struct site_sums *loc = &r->loc[i];
		const char *file, *function, *module, *mf, *build_id;
		char disp[1024];
		struct side *d;
		int line;
		long k;

		if (!loc->cpu && !loc->heap)
			continue;
		sitemap__site(r->sm, (long)i, &file, &line, &function, &module);
		build_id = build_id_of(r, module);
		mf = match_file(c, side, file, module, disp, sizeof(disp));
		/* a program without line information: its module is in the checkout too */
		if (!file && module && c->root[side] &&
		    !strncmp(module, c->root[side], strlen(c->root[side])) &&
		    module[strlen(c->root[side])] == '/')
			module += strlen(c->root[side]) + 1;
		k = sitemap__intern(c->shared, c->o->by, mf, line, function, module);
		if (k < 0 || (err = grow_pairs(c))) {
			err = -ENOMEM;
			break;
		}
		d = &c->pairs[k].s[side];
		d->samples += loc->samples;
		d->live = sat__add(d->live, loc->live);
		d->allocs = sat__add(d->allocs, loc->allocs);
		d->cpu |= loc->cpu;
		d->heap |= loc->heap;
		if (build_id)
			d->build_id = build_id;
		d->matched |= matches(c->o->pattern, file, function) ||
			      matches(c->o->pattern, mf, NULL);
		c->total_live[side] = sat__add(c->total_live[side], loc->live);
		c->heap[side] |= loc->heap;
	}
	return err;
}

static int cmp_cpu(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	double da = fabs(a->delta_pct), db = fabs(b->delta_pct);

	if (da != db)
		return da > db ? -1 : 1;
	da = fmax(a->pct_a, a->pct_b);
	db = fmax(b->pct_a, b->pct_b);
	if (da != db)
		return da > db ? -1 : 1;
	return 0;
}

static int cmp_heap(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	int64_t da = sat__abs(a->delta_bytes), db = sat__abs(b->delta_bytes);

	if (da != db)
		return da > db ? -1 : 1;
	da = a->live_a > a->live_b ? a->live_a : a->live_b;
	db = b->live_a > b->live_b ? b->live_a : b->live_b;
	if (da != db)
		return da > db ? -1 : 1;
	return 0;
}

static enum diff_status status_of(bool in_a, bool in_b, bool changed)
{
	if (!in_a)
		return DIFF_NEW;
	if (!in_b)
		return DIFF_GONE;
	return changed ? DIFF_CHANGED : DIFF_SAME;
}

static double share(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0;
}

static void row_init(struct diff_ctx *c, long k, struct diff_row *r)
{
	const struct pair *p = &c->pairs[k];

	memset(r, 0, sizeof(*r));
	sitemap__site(c->shared, k, &r->file, &r->line, &r->function, &r->module);
	r->line_a = r->line;
	r->samples_a = p->s[0].samples;
	r->samples_b = p->s[1].samples;
	r->pct_a = share(r->samples_a, c->total_samples[0]);
	r->pct_b = share(r->samples_b, c->total_samples[1]);
	r->delta_pct = r->pct_b - r->pct_a;
	r->live_a = p->s[0].live;
	r->live_b = p->s[1].live;
	r->delta_bytes = sat__sub(r->live_b, r->live_a);
	r->allocs_a = p->s[0].allocs;
	r->allocs_b = p->s[1].allocs;
}

/* Has side `side` numbers of this table (heap or CPU) at shared site k? */
static bool in_table(const struct diff_ctx *c, long k, int side, bool heap)
{
	return heap ? c->pairs[k].s[side].heap : c->pairs[k].s[side].cpu;
}

static int cmp_site_pos(const void *x, const void *y, void *arg)
{
	const struct diff_ctx *c = arg;
	long a = *(const long *)x, b = *(const long *)y;
	const char *fa, *fb, *na, *nb, *ma, *mb;
	int la, lb, r;

	sitemap__site(c->shared, a, &fa, &la, &na, &ma);
	sitemap__site(c->shared, b, &fb, &lb, &nb, &mb);
	r = strcmp(fa ? fa : "", fb ? fb : "");
	if (!r)
		r = strcmp(na ? na : "", nb ? nb : "");
	if (!r)
		r = (la > lb) - (la < lb);
	return r;
}

static int site_line(const struct diff_ctx *c, long k, const char **file, const char **fn)
{
	const char *module;
	int line;

	sitemap__site(c->shared, k, file, &line, fn, &module);
	return line;
}

/* How much of one side's table site k holds (for the best shift of a function). */
static double weight(const struct diff_ctx *c, long k, int side, bool heap)
{
	const struct side *d = &c->pairs[k].s[side];

	if (!in_table(c, k, side, heap))
		return 0;
	if (!heap)
		return d->samples ? (double)d->samples : 1;
	if (d->live)
		return (double)sat__abs(d->live);
	return d->allocs ? (double)d->allocs : 1;
}

/*
 * What is left in functions with more lines on one side than the other:
 * a line only in A and a line only in B of one function are one line when
 * B's is A's plus the shift most pairs of the file moved by (an edit above
 * them moves a whole file's tail at once).
 */
static void pair_by_shift(const struct diff_ctx *c, bool heap, const long *v, size_t m,
			  long *pa, long *pb)
{
	if (m > 2000)	/* cubic: two unrelated programs, not an edit */
		return;
	for (size_t i = 0; i < m; i++) {
		const char *fa, *na, *f, *fn;
		int la, shift = 0, best = 0;

		if (pa[v[i]] >= 0 || !in_table(c, v[i], 0, heap) || in_table(c, v[i], 1, heap))
			continue;
		la = site_line(c, v[i], &fa, &na);
		/* the most common shift of the file's pairs */
		for (size_t j = 0; j < m; j++) {
			int d, n = 0;

			if (pa[v[j]] < 0)
				continue;
			site_line(c, v[j], &f, &fn);
			if (strcmp(f, fa))
				continue;
			d = site_line(c, pa[v[j]], &f, &fn) - site_line(c, v[j], &f, &fn);
			for (size_t k = 0; k < m; k++) {
				if (pa[v[k]] < 0)
					continue;
				site_line(c, v[k], &f, &fn);
				if (!strcmp(f, fa) && site_line(c, pa[v[k]], &f, &fn) -
						      site_line(c, v[k], &f, &fn) == d)
					n++;
			}
			if (n > best) {
				best = n;
				shift = d;
			}
		}
		if (!best)
			continue;
		for (size_t j = 0; j < m; j++) {
			if (pb[v[j]] >= 0 || !in_table(c, v[j], 1, heap) || in_table(c, v[j], 0, heap))
				continue;
			if (site_line(c, v[j], &f, &fn) == la + shift && !strcmp(f, fa) &&
			    !strcmp(fn, na)) {
				pa[v[i]] = v[j];
				pb[v[j]] = v[i];
				break;
			}
		}
	}
}

/* The site of the group g[0..n) on line `line` with data on `side`, or -1. */
static long group_at(const struct diff_ctx *c, const long *g, size_t n, int line, int side,
		     bool heap)
{
	const char *f, *fn;

	for (size_t i = 0; i < n; i++)
		if (site_line(c, g[i], &f, &fn) == line && in_table(c, g[i], side, heap))
			return g[i];
	return -1;
}

/*
 * One function's lines g[0..n) (sorted by line): the shift d that lines up
 * most of A's numbers with B's (sum over A's lines l of the smaller of l's
 * in A and l + d's in B, over the larger of the function's two totals: not
 * each side's own share, which makes a line that kept its numbers look
 * moved when the function's other lines changed, e.g. a wrapper's bytes
 * re-attributed in one run only), ties to the smallest |d|. When it beats no
 * shift, every line of A whose line + d has B data moved there, including
 * lines that have numbers on both sides under one line number: a hot line
 * moved onto the line where A had a few stray samples is the hot line, not
 * the stray one. 0 when the function has no such shift.
 */
static int best_shift(const struct diff_ctx *c, bool heap, const long *g, size_t n)
{
	double wa = 0, wb = 0, wm, best = -1, at0 = 0;
	const char *f, *fn;
	int shift = 0;

	if (n > 200)	/* cubic in the lines of one function */
		return 0;
	for (size_t i = 0; i < n; i++) {
		wa += weight(c, g[i], 0, heap);
		wb += weight(c, g[i], 1, heap);
	}
	if (wa <= 0 || wb <= 0)
		return 0;
	wm = fmax(wa, wb);
	for (size_t i = 0; i < n; i++) {
		if (!in_table(c, g[i], 0, heap))
			continue;
		for (size_t j = 0; j < n; j++) {
			int d;
			double score = 0;

			if (!in_table(c, g[j], 1, heap))
				continue;
			d = site_line(c, g[j], &f, &fn) - site_line(c, g[i], &f, &fn);
			for (size_t k = 0; k < n; k++) {
				long kb;

				if (!in_table(c, g[k], 0, heap))
					continue;
				kb = group_at(c, g, n, site_line(c, g[k], &f, &fn) + d, 1, heap);
				if (kb >= 0)
					score += fmin(weight(c, g[k], 0, heap),
						      weight(c, kb, 1, heap)) / wm;
			}
			if (!d)
				at0 = score;
			if (score > best + 1e-9 || (fabs(score - best) <= 1e-9 && abs(d) < abs(shift))) {
				best = score;
				shift = d;
			}
		}
	}
	return shift && best > at0 + 1e-9 ? shift : 0;
}

/*
 * --by line: pa[k] = the site A's numbers of site k moved to, pb[k] = the
 * site B's numbers of site k came from, -1 when none (see diff.h). Only
 * sites with a file and a function can move.
 */
/*
 * Can the lines of one function (sites v) have moved between the runs?
 * Only when B ran another build of its module: both runs know the
 * build-id of the module that held it and they differ. Two windows of one
 * recording, the same binary run twice, or a build that is not known: a
 * line is where it was, and numbers on another line are gone here and new
 * there.
 */
static bool rebuilt(const struct diff_ctx *c, const long *v, size_t n)
{
	const char *a = NULL, *b = NULL;

	for (size_t k = 0; k < n; k++) {
		a = a ? a : c->pairs[v[k]].s[0].build_id;
		b = b ? b : c->pairs[v[k]].s[1].build_id;
	}
	return a && b && strcmp(a, b);
}

static int pair_moved(const struct diff_ctx *c, bool heap, long *pa, long *pb)
{
	size_t n = sitemap__count(c->shared), m = 0;
	long *v = malloc((n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		const char *file, *function, *module;
		int line;

		pa[k] = pb[k] = -1;
		sitemap__site(c->shared, (long)k, &file, &line, &function, &module);
		if (file && function &&
		    (in_table(c, (long)k, 0, heap) || in_table(c, (long)k, 1, heap)))
			v[m++] = (long)k;
	}
	qsort_r(v, m, sizeof(*v), cmp_site_pos, (void *)c);
	for (size_t i = 0; i < m;) {
		const char *f0, *n0, *mod, *f, *fn;
		size_t j = i, na = 0, nb = 0;
		int l, d;

		sitemap__site(c->shared, v[i], &f0, &l, &n0, &mod);
		for (; j < m; j++) {
			sitemap__site(c->shared, v[j], &f, &l, &fn, &mod);
			if (strcmp(f, f0) || strcmp(fn, n0))
				break;
		}
		if (!rebuilt(c, v + i, j - i)) {
			i = j;
			continue;
		}
		d = best_shift(c, heap, v + i, j - i);
		if (d) {
			for (size_t k = i; k < j; k++) {
				long kb;

				if (!in_table(c, v[k], 0, heap))
					continue;
				kb = group_at(c, v + i, j - i, site_line(c, v[k], &f, &fn) + d, 1, heap);
				if (kb >= 0) {
					pa[v[k]] = kb;
					pb[kb] = v[k];
				}
			}
			i = j;
			continue;
		}
		/* no shift: the k-th line only in A is the k-th line only in B */
		for (size_t k = i; k < j; k++) {
			bool a = in_table(c, v[k], 0, heap), b = in_table(c, v[k], 1, heap);

			na += a && !b;
			nb += b && !a;
		}
		if (na == nb) {
			size_t ia = i, ib = i;

			for (size_t k = 0; k < na; k++) {
				while (!in_table(c, v[ia], 0, heap) || in_table(c, v[ia], 1, heap))
					ia++;
				while (!in_table(c, v[ib], 1, heap) || in_table(c, v[ib], 0, heap))
					ib++;
				pa[v[ia]] = v[ib];
				pb[v[ib]] = v[ia];
				ia++;
				ib++;
			}
		}
		i = j;
	}
	pair_by_shift(c, heap, v, m, pa, pb);
	free(v);
	return 0;
}

/* Row k, or the moved pair (A's numbers of ka, B's of kb) as one row. */
static void row_make(struct diff_ctx *c, long k, long partner, bool heap, struct diff_row *r)
{
	struct diff_row ra;

	if (partner < 0) {
		row_init(c, k, r);
		return;
	}
	/* k is the A side here: the row is B's location, with A's numbers and line */
	row_init(c, partner, r);
	row_init(c, k, &ra);
	r->line_a = ra.line;
	r->samples_a = ra.samples_a;
	r->pct_a = ra.pct_a;
	r->delta_pct = r->pct_b - r->pct_a;
	r->live_a = ra.live_a;
	r->delta_bytes = sat__sub(r->live_b, r->live_a);
	r->allocs_a = ra.allocs_a;
	r->status = DIFF_MOVED;
	(void)heap;
}

/* Row k with one side's numbers only (the other side's moved to another line). */
static void row_one_side(struct diff_ctx *c, long k, int side, struct diff_row *r)
{
	row_init(c, k, r);
	if (side == 0) {
		r->samples_b = 0;
		r->pct_b = 0;
		r->live_b = 0;
		r->allocs_b = 0;
		r->status = DIFF_GONE;
	} else {
		r->samples_a = 0;
		r->pct_a = 0;
		r->live_a = 0;
		r->allocs_a = 0;
		r->status = DIFF_NEW;
	}
	r->delta_pct = r->pct_b - r->pct_a;
	r->delta_bytes = sat__sub(r->live_b, r->live_a);
}

/* One row of a table: counted, and listed when it passes the filter and the threshold. */
static void add_row(struct diff_ctx *c, struct diff *d, bool heap, const struct diff_row *r,
		    bool matched)
{
	const struct diff_opts *o = c->o;
	int64_t big = c->total_live[0] > c->total_live[1] ? c->total_live[0] : c->total_live[1];

	if (r->status != DIFF_SAME)
		d->identical = false;
	if (!heap) {
		d->n_cpu_all++;
		if (matched && !o->all && r->pct_a < 0.05 && r->pct_b < 0.05)
			d->n_cpu_noise++;
		else if (matched && fabs(r->delta_pct) >= o->threshold)
			d->cpu[d->n_cpu++] = *r;
	} else {
		d->n_heap_all++;
		if (matched && !o->all && !r->live_a && !r->live_b && r->allocs_a == r->allocs_b)
			d->n_heap_noise++;
		else if (matched &&
			 (double)sat__abs(r->delta_bytes) >= o->threshold / 100.0 * (double)big)
			d->heap[d->n_heap++] = *r;
	}
}

/*
 * Site k's rows in one table: A's numbers moved to another line (pa), or
 * on this line with B's, or alone (B's moved elsewhere: gone); then B's
 * numbers when nothing above took them (new).
 */
static void site_rows(struct diff_ctx *c, struct diff *d, long k, bool heap, const long *pa,
		      const long *pb)
{
	const struct pair *p = &c->pairs[k];
	bool in_a = in_table(c, k, 0, heap), in_b = in_table(c, k, 1, heap);
	long to = pa ? pa[k] : -1, from = pb ? pb[k] : -1;
	struct diff_row r;

	if (in_a) {
		if (to >= 0) {
			row_make(c, k, to, heap, &r);
			add_row(c, d, heap, &r, p->s[0].matched || c->pairs[to].s[1].matched);
		} else if (in_b && from < 0) {
			row_init(c, k, &r);
			r.status = status_of(true, true, heap ? r.delta_bytes != 0 ||
							       r.allocs_a != r.allocs_b :
							       r.delta_pct != 0);
			add_row(c, d, heap, &r, p->s[0].matched || p->s[1].matched);
			return;
		} else {
			row_one_side(c, k, 0, &r);
			add_row(c, d, heap, &r, p->s[0].matched);
		}
	}
	if (in_b && from < 0) {
		row_one_side(c, k, 1, &r);
		add_row(c, d, heap, &r, p->s[1].matched);
	}
}

static int build_rows(struct diff_ctx *c, struct diff *d)
{
	size_t n = sitemap__count(c->shared);
	const struct diff_opts *o = c->o;
	long *pa[2] = { NULL, NULL }, *pb[2] = { NULL, NULL };	/* CPU, heap */
	int err = 0;

	/* a site can give two rows: A's numbers gone, B's new (moved lines) */
	d->cpu = calloc(2 * n + 1, sizeof(*d->cpu));
	d->heap = calloc(2 * n + 1, sizeof(*d->heap));
	if (!d->cpu || !d->heap)
		return -ENOMEM;
	if (o->by == SITE_BY_LINE) {
		for (int t = 0; t < 2 && !err; t++) {
			pa[t] = malloc((n + 1) * sizeof(long));
			pb[t] = malloc((n + 1) * sizeof(long));
			err = pa[t] && pb[t] ? pair_moved(c, t == 1, pa[t], pb[t]) : -ENOMEM;
		}
		if (err)
			goto out;
	}
	d->identical = true;
	for (size_t k = 0; k < n; k++)
		for (int t = 0; t < 2; t++)
			site_rows(c, d, (long)k, t == 1, pa[t], pb[t]);
	qsort(d->cpu, d->n_cpu, sizeof(*d->cpu), cmp_cpu);
	qsort(d->heap, d->n_heap, sizeof(*d->heap), cmp_heap);
	if (o->limit > 0 && d->n_cpu > (size_t)o->limit)
		d->n_cpu = (size_t)o->limit;
	if (o->limit > 0 && d->n_heap > (size_t)o->limit)
		d->n_heap = (size_t)o->limit;
	d->heap_a = c->heap[0];
	d->heap_b = c->heap[1];
	for (int i = 0; i < 2; i++) {
		d->win_samples[i] = c->total_samples[i];
		d->win_live[i] = c->total_live[i];
	}
out:
	for (int t = 0; t < 2; t++) {
		free(pa[t]);
		free(pb[t]);
	}
	return err;
}

void diff__delete(struct diff *d)
{
	if (!d)
		return;
	free(d->cpu);
	free(d->heap);
	sitemap__delete(d->sites);
	free(d);
}

int diff__compute(struct db *a, struct db *b, const struct diff_opts *o, struct diff **out)
{
	struct diff_ctx c = { .o = o };
	struct diff *d = calloc(1, sizeof(*d));
	int err;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	c.shared = d->sites = sitemap__new();
	if (!c.shared) {
		free(d);
		return -ENOMEM;
	}
	err = db_query_summary(a, &d->a);
	if (!err)
		err = db_query_summary(b, &d->b);
	if (!err)
		err = read_run(&c, a, 0);
	if (!err)
		err = read_run(&c, b, 1);
	if (!err)
		err = find_roots(&c);
	if (!err)
		err = fold_run(&c, 0);
	if (!err)
		err = fold_run(&c, 1);
	if (!err)
		err = build_rows(&c, d);
	free(c.pairs);
	for (int i = 0; i < 2; i++) {
		sitemap__delete(c.run[i].sm);
		free(c.run[i].loc);
		for (size_t k = 0; k < c.run[i].n_ids; k++) {
			free(c.run[i].ids[k].path);
			free(c.run[i].ids[k].id);
		}
		free(c.run[i].ids);
		free(c.root[i]);
	}
	if (err) {
		diff__delete(d);
		return err;
	}
	*out = d;
	return 0;
}
