#include "util/tui/follow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/read/profile.h"
#include "util/error.h"
#include "util/str.h"

static void table_clear(struct live_table *t)
{
	for (int i = 0; i < t->n; i++) {
		free(t->rows[i].file);
		free(t->rows[i].function);
		free(t->rows[i].module);
	}
	t->n = 0;
	t->more = false;
}

static void table_free(struct live_table *t)
{
	table_clear(t);
	free(t->rows);
	t->rows = NULL;
	t->cap = 0;
}

static void meta_clear(struct follow *f)
{
	for (int i = 0; i < f->n_meta; i++) {
		free(f->meta_key[i]);
		free(f->meta_val[i]);
	}
	free(f->meta_key);
	free(f->meta_val);
	f->meta_key = f->meta_val = NULL;
	f->n_meta = 0;
}

void follow__delete(struct follow *f)
{
	if (!f)
		return;
	table_free(&f->cpu);
	table_free(&f->heap);
	meta_clear(f);
	free(f->pattern);
	db_live__delete(f->live);
	db__close(f->db);
	free(f);
}

int follow__open(const char *path, struct follow **out)
{
	struct follow *f = calloc(1, sizeof(*f));
	int err;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	err = profile__open(path, &f->db);
	if (err < 0) {
		free(f);
		return err;
	}
	f->live = db_live__new(f->db);
	if (!f->live) {
		follow__delete(f);
		return -ENOMEM;
	}
	*out = f;
	return 0;
}

const char *follow__path(const struct follow *f)
{
	return db__path(f->db);
}

const char *follow__meta(const struct follow *f, const char *key)
{
	for (int i = 0; i < f->n_meta; i++)
		if (!strcmp(f->meta_key[i], key))
			return f->meta_val[i];
	return NULL;
}

uint64_t follow__elapsed_ms(const struct follow *f)
{
	const char *start = follow__meta(f, "start_time");
	const char *dur = follow__meta(f, "duration_ms");
	struct tm tm;
	struct timespec now;
	uint64_t ms = f->sum.duration_ms;

	if (f->sum.finished) {
		if (dur && strtoull(dur, NULL, 10) > ms)
			ms = strtoull(dur, NULL, 10);
		return ms;
	}
	memset(&tm, 0, sizeof(tm));
	if (start && strptime(start, "%Y-%m-%dT%H:%M:%S", &tm)) {
		time_t t0 = timegm(&tm);

		clock_gettime(CLOCK_REALTIME, &now);
		if (now.tv_sec >= t0) {
			uint64_t el = (uint64_t)(now.tv_sec - t0) * 1000 + now.tv_nsec / 1000000;

			if (el > ms)
				ms = el;
		}
	}
	return ms;
}

static int meta_cb(const char *key, const char *value, void *ctx)
{
	struct follow *f = ctx;
	char **k = realloc(f->meta_key, (f->n_meta + 1) * sizeof(*k));

	if (!k)
		return -ENOMEM;
	f->meta_key = k;
	k = realloc(f->meta_val, (f->n_meta + 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	f->meta_val = k;
	f->meta_key[f->n_meta] = strdup(key);
	f->meta_val[f->n_meta] = strdup(value ? value : "");
	if (!f->meta_key[f->n_meta] || !f->meta_val[f->n_meta]) {
		free(f->meta_key[f->n_meta]);
		free(f->meta_val[f->n_meta]);
		return -ENOMEM;
	}
	f->n_meta++;
	return 0;
}

static int row_cb(const struct prof_row *r, void *ctx)
{
	struct live_table *t = ctx;
	struct live_row *lr;
	int err = 0;

	if (ALLOC_GROW(t->rows, t->n + 1, t->cap, 64))
		return -ENOMEM;
	lr = &t->rows[t->n];
	memset(lr, 0, sizeof(*lr));
	lr->file = str__dup(r->file, &err);
	lr->function = str__dup(r->function, &err);
	lr->module = str__dup(r->module, &err);
	if (err) {
		free(lr->file);
		free(lr->function);
		free(lr->module);
		return -ENOMEM;
	}
	lr->line = r->line;
	lr->pid = r->pid;
	lr->samples = r->samples;
	lr->pct = r->pct;
	lr->live_bytes = r->live_bytes;
	lr->peak_bytes = r->peak_bytes;
	lr->alloc_bytes = r->alloc_bytes;
	lr->free_bytes = r->free_bytes;
	lr->alloc_count = r->alloc_count;
	lr->free_count = r->free_count;
	lr->kinds = r->kinds;
	t->n++;
	return 0;
}

/* want rows (-1: all); one more is asked for to know whether there are more. */
static void set_limit(struct query_filter *qf, int want)
{
	qf->limit = want < 0 ? 0 : want + 1;
}

static void trim(struct live_table *t, int want)
{
	if (want >= 0 && t->n > want) {
		for (int i = want; i < t->n; i++) {
			free(t->rows[i].file);
			free(t->rows[i].function);
			free(t->rows[i].module);
		}
		t->n = want;
		t->more = true;
	}
}

static int load_tables(struct follow *f, const struct follow_query *q)
{
	struct query_filter qf;
	int err = 0;

	query_filter__init(&qf);
	qf.group = q->by_process ? GROUP_PROCESS : GROUP_LINE;
	qf.pattern = q->pattern && *q->pattern ? q->pattern : NULL;
	/* The window is the last window_ms of the recording */
	if (q->window_ms)
		time_window__since(&qf.win, q->window_ms, f->sum.duration_ms);

	table_clear(&f->cpu);
	f->cpu.total_samples = 0;
	if (q->cpu_rows) {
		set_limit(&qf, q->cpu_rows);
		err = db_query_cpu(f->db, &qf, &f->cpu.total_samples, row_cb, &f->cpu);
		if (err < 0)
			return err;
		trim(&f->cpu, q->cpu_rows);
	}
	table_clear(&f->heap);
	f->heap.total_live = 0;
	if (q->heap_rows && f->sum.has_heap) {
		set_limit(&qf, q->heap_rows);
		err = db_query_heap(f->db, &qf, &f->heap.total_live, row_cb, &f->heap);
		if (err < 0)
			return err;
		trim(&f->heap, q->heap_rows);
	}
	return 0;
}

/* Can the rows fetched for prev_want answer want? */
static bool table_ok(int want, int prev_want, const struct live_table *t)
{
	if (!want)
		return true;
	if (!prev_want)
		return false;
	if (!t->more)
		return true;	/* everything is there */
	return want >= 0 && want <= t->n;
}

static bool same_query(const struct follow *f, const struct follow_query *q)
{
	const char *a = f->pattern ? f->pattern : "";
	const char *b = q->pattern ? q->pattern : "";

	return f->loaded && !strcmp(a, b) && f->q.window_ms == q->window_ms &&
	       f->q.by_process == q->by_process &&
	       table_ok(q->cpu_rows, f->q.cpu_rows, &f->cpu) &&
	       table_ok(q->heap_rows, f->q.heap_rows, &f->heap);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t follow__delay_ms(const struct follow *f)
{
	return f->cost_ms * (100 / FOLLOW_BUDGET_PCT - 1);
}

int follow__poll(struct follow *f, const struct follow_query *q)
{
	int changed = db_live__changed(f->live);
	uint64_t t0;
	int err;

	f->polls++;
	if (changed < 0)
		return changed;
	if (changed)
		f->stale = true;
	t0 = mono_ms();
	if (same_query(f, q) && (!f->stale || t0 < f->next_ms))
		return 0;
	f->reloads++;
	if (f->stale || !f->loaded) {
		meta_clear(f);
		err = db_query_meta(f->db, meta_cb, f);
		if (err < 0)
			return err;
		err = db_query_summary(f->db, &f->sum);
		if (err < 0)
			return err;
	}
	err = load_tables(f, q);
	if (err < 0)
		return err;
	f->stale = false;
	f->q = *q;
	if (!f->pattern || strcmp(f->pattern, q->pattern ? q->pattern : "")) {
		free(f->pattern);
		f->pattern = strdup(q->pattern ? q->pattern : "");
		if (!f->pattern)
			return -ENOMEM;
	}
	f->q.pattern = NULL;
	f->loaded = true;
	f->cost_ms = mono_ms() - t0;
	f->next_ms = t0 + f->cost_ms + follow__delay_ms(f);
	return 1;
}

int follow__series(struct follow *f, enum live_series kind, const struct live_row *row,
		   int64_t *vals, int n)
{
	return db_live__series(f->live, kind, row->file, row->line, row->function, vals, n);
}
