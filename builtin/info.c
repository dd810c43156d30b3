/*
 * rsprof info: what a profile holds. The target, duration, checkpoints,
 * samples and lost samples, heap totals, symbols, file size, schema version
 * and every meta key; --check runs SQLite's integrity check instead.
 */
#include "builtin.h"

#include <errno.h>
#include <popt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/db/db.h"
#include "util/db/read/profile.h"
#include "util/db/read/query.h"
#include "util/db/read/series.h"
#include "util/db/read/totals.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/output/escape.h"
#include "util/output/format.h"
#include "util/output/meta-json.h"
#include "util/output/resident.h"
#include "util/options.h"

static struct info_opts {
	int check;
	const char *file;
} opts;

static const char info_usage[] = "[OPTION...] [FILE]";

static struct poptOption info_options[] = {
	{ "check", 0, POPT_ARG_NONE, &opts.check, 0,
	  "run an integrity check of the file (prints ok, or the damage and exits 6)", NULL },
	/* the same flag as options_output's, without -n/--csv that mean nothing here */
	{ "json", 0, POPT_ARG_NONE, &output_args.json, 0, "print JSON", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

/* The meta table, copied: keys and values in key order. */
struct meta {
	char **kv;		/* key, value, key, value... */
	int n;
};

static int meta_add(const char *key, const char *value, void *ctx)
{
	struct meta *m = ctx;
	char **v = realloc(m->kv, (m->n + 1) * 2 * sizeof(*v));

	if (!v)
		return -ENOMEM;
	m->kv = v;
	v[2 * m->n] = strdup(key);
	v[2 * m->n + 1] = strdup(value);
	m->n++;
	if (!v[2 * m->n - 2] || !v[2 * m->n - 1])
		return -ENOMEM;
	return 0;
}

static const char *meta_get(const struct meta *m, const char *key)
{
	for (int i = 0; i < m->n; i++)
		if (m->kv[2 * i] && !strcmp(m->kv[2 * i], key))
			return m->kv[2 * i + 1];
	return NULL;
}

static const char *or_unknown(const char *v)
{
	return v ? v : "?";
}

static void meta_free(struct meta *m)
{
	for (int i = 0; i < 2 * m->n; i++)
		free(m->kv[i]);
	free(m->kv);
}

struct info {
	struct db *db;
	struct prof_summary sum;
	struct meta meta;
	uint64_t size, wal_size;
};

static double lost_pct(const struct prof_summary *s)
{
	uint64_t all = s->samples + s->lost_samples;

	return all ? 100.0 * s->lost_samples / all : 0;
}

/* One "label: value" line; what came from the file is escaped (util/output/escape.h). */
static void line(const char *label, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void line(const char *label, const char *fmt, ...)
{
	char *v = NULL;
	va_list ap;

	printf("%-16s ", label);
	va_start(ap, fmt);
	if (vasprintf(&v, fmt, ap) >= 0)
		escape__fputs(v, stdout);
	va_end(ap);
	free(v);
	putchar('\n');
}

#define LINE(label, ...) line(label ":", __VA_ARGS__)

static const char *or_zero(const char *v)
{
	return v ? v : "0";
}

static int print_text(const struct info *in)
{
	const struct prof_summary *s = &in->sum;
	const struct meta *m = &in->meta;
	const char *unknown = meta_get(m, "unknown_frees");
	const char *v;
	char a[32], b[32], c[32], d[32], e[32], f[32];

	LINE("file", "%s", db__path(in->db));
	if (in->wal_size)
		LINE("size", "%s (%s bytes), write-ahead log %s",
		     format__bytes(in->size, a, sizeof(a)), format__count(in->size, b, sizeof(b)),
		     format__bytes(in->wal_size, c, sizeof(c)));
	else
		LINE("size", "%s (%s bytes)", format__bytes(in->size, a, sizeof(a)),
		     format__count(in->size, b, sizeof(b)));
	LINE("schema version", "%d", db__version(in->db));
	LINE("target", "%s (pid %s)", or_unknown(meta_get(m, "process_name")),
	     or_unknown(meta_get(m, "pid")));
	if ((v = meta_get(m, "exe_path")))
		LINE("executable", "%s", v);
	if ((v = meta_get(m, "start_time")))
		LINE("started", "%s", v);
	LINE("duration", "%s%s", duration__format(s->duration_ms, a, sizeof(a)),
	     s->finished ? "" : " (still recording, or the recorder did not finish)");
	LINE("checkpoints", "%llu", (unsigned long long)s->checkpoints);
	if (s->folded_checkpoints)
		LINE("folded", "%s intervals up to %s into %s checkpoints of %s%s%s (record --retain %s)",
		     format__count(s->folded_intervals, a, sizeof(a)),
		     duration__format(s->folded_until_ms, b, sizeof(b)),
		     format__count(s->folded_checkpoints, c, sizeof(c)),
		     duration__format(s->folded_min_ms, d, sizeof(d)),
		     s->folded_max_ms > s->folded_min_ms ? " to " : "",
		     s->folded_max_ms > s->folded_min_ms ?
		     duration__format(s->folded_max_ms, e, sizeof(e)) : "",
		     duration__format(s->retain_ms, f, sizeof(f)));
	else if (s->retain_ms)
		LINE("folded", "nothing yet (record --retain %s)",
		     duration__format(s->retain_ms, a, sizeof(a)));
	if (s->compacted_checkpoints)
		LINE("compacted", "%s checkpoints, %s..%s: packed (cpu_series, heap_series), read whole"
		     " by rsprof; cpu_samples and heap_events hold one row per key for 60 of them",
		     format__count(s->compacted_checkpoints, a, sizeof(a)),
		     duration__format(s->compacted_from_ms, b, sizeof(b)),
		     duration__format(s->compacted_until_ms, c, sizeof(c)));
	LINE("samples", "%s", format__count(s->samples, a, sizeof(a)));
	LINE("lost samples", "%s (%.1f%%)", format__count(s->lost_samples, a, sizeof(a)),
	     lost_pct(s));
	if (s->has_heap) {
		LINE("heap live", "%s", format__bytes(s->live_bytes, a, sizeof(a)));
		LINE("heap peak", "%s", format__bytes(s->peak_bytes, a, sizeof(a)));
		LINE("allocations", "%s (%s)", format__count(s->alloc_count, a, sizeof(a)),
		     format__bytes(s->alloc_bytes, b, sizeof(b)));
		LINE("frees", "%s (%s)", format__count(s->free_count, c, sizeof(c)),
		     format__bytes(s->free_bytes, d, sizeof(d)));
		if ((v = meta_get(m, "heap_temporary")))
			LINE("temporary", "%s (freed before the thread's next allocation or free)",
			     format__count(strtoull(v, NULL, 10), a, sizeof(a)));
		LINE("heap dropped", "%llu", (unsigned long long)s->heap_dropped);
		if ((v = meta_get(m, "heap_untracked_limited")))
			LINE("untracked", "%s process(es) of the tree: an address-space limit "
			     "(ulimit -v)", format__count(strtoull(v, NULL, 10), a, sizeof(a)));
		if ((v = meta_get(m, "alloc_history_events")))
			LINE("alloc history", "%s events kept, %s dropped (rsprof history)",
			     format__count(strtoull(v, NULL, 10), a, sizeof(a)),
			     format__count(strtoull(or_zero(meta_get(m, "alloc_history_dropped")),
						    NULL, 10), b, sizeof(b)));
		if (unknown)
			LINE("unknown frees", "%s (%s)", format__count(s->unknown_frees, a, sizeof(a)),
			     s->unknown_free_bytes < 0 ? "sizes unknown: not glibc's malloc" :
			     format__bytes(s->unknown_free_bytes, b, sizeof(b)));
		if (s->heap_sample > 1)
			LINE("heap sampling", "1 in %u allocations, figures scaled", s->heap_sample);
		if (s->heap_sample_bytes)
			LINE("heap sampling", "one allocation per %s allocated on average, "
			     "figures are unbiased estimates",
			     format__bytes((int64_t)s->heap_sample_bytes, a, sizeof(a)));
	} else {
		LINE("heap", "not recorded");
	}
	if (s->has_rss) {
		LINE("resident memory", "%s at the end (anonymous %s), peak %s",
		     format__bytes(s->rss_bytes, a, sizeof(a)),
		     format__bytes(s->rss_anon_bytes, b, sizeof(b)),
		     format__bytes(s->rss_peak_bytes, c, sizeof(c)));
		if (s->has_heap && s->live_bytes <= s->rss_bytes)
			LINE("tracked heap", "%s of %s resident (%.1f%%)",
			     format__bytes(s->live_bytes, a, sizeof(a)),
			     format__bytes(s->rss_bytes, b, sizeof(b)),
			     s->rss_bytes > 0 ? 100.0 * (double)s->live_bytes / (double)s->rss_bytes :
			     0.0);
		else if (s->has_heap)
			LINE("tracked heap", "%s, more than the %s resident (%s)",
			     format__bytes(s->live_bytes, a, sizeof(a)),
			     format__bytes(s->rss_bytes, b, sizeof(b)),
			     resident__why(s->live_bytes, s->rss_bytes));
		if (s->header_bytes > 0)
			LINE("block headers", "~%s of the resident memory, the in-process "
			     "tracker's (16 B before each live block)",
			     format__bytes(s->header_bytes, a, sizeof(a)));
	}
	LINE("symbols", "%s", format__count(s->symbols, a, sizeof(a)));
	LINE("call stacks", "%s", format__count(s->stacks, a, sizeof(a)));
	LINE("mappings", "%s", format__count(s->mappings, a, sizeof(a)));
	puts("\nmeta:");
	for (int i = 0; i < m->n; i++) {
		char key[128];

		printf("  %-24s ", escape__str(m->kv[2 * i], key, sizeof(key)));
		escape__fputs(m->kv[2 * i + 1], stdout);
		putchar('\n');
	}
	return ferror(stdout) ? -EIO : 0;
}

static int print_json(const struct info *in)
{
	const struct prof_summary *s = &in->sum;
	struct json j;

	json__init(&j, stdout);
	json__begin_object(&j, NULL);
	json__string(&j, "file", db__path(in->db));
	json__uint(&j, "size_bytes", in->size);
	json__uint(&j, "wal_bytes", in->wal_size);
	json__int(&j, "schema_version", db__version(in->db));
	json__uint(&j, "duration_ms", s->duration_ms);
	json__bool(&j, "finished", s->finished);
	json__uint(&j, "checkpoints", s->checkpoints);
	json__uint(&j, "samples", s->samples);
	json__uint(&j, "lost_samples", s->lost_samples);
	json__double(&j, "lost_pct", lost_pct(s));
	json__uint(&j, "symbols", s->symbols);
	json__uint(&j, "stacks", s->stacks);
	json__uint(&j, "mappings", s->mappings);
	json__uint(&j, "retain_ms", s->retain_ms);
	json__begin_object(&j, "folded");
	json__uint(&j, "checkpoints", s->folded_checkpoints);
	json__uint(&j, "intervals", s->folded_intervals);
	json__uint(&j, "until_ms", s->folded_until_ms);
	json__uint(&j, "min_ms", s->folded_min_ms);
	json__uint(&j, "max_ms", s->folded_max_ms);
	json__end_object(&j);
	json__begin_object(&j, "compacted");
	json__uint(&j, "checkpoints", s->compacted_checkpoints);
	json__uint(&j, "from_ms", s->compacted_from_ms);
	json__uint(&j, "until_ms", s->compacted_until_ms);
	json__end_object(&j);
	json__begin_object(&j, "heap");
	json__bool(&j, "recorded", s->has_heap);
	json__int(&j, "live_bytes", s->live_bytes);
	json__int(&j, "peak_bytes", s->peak_bytes);
	json__int(&j, "alloc_bytes", s->alloc_bytes);
	json__int(&j, "free_bytes", s->free_bytes);
	json__int(&j, "alloc_count", s->alloc_count);
	json__int(&j, "free_count", s->free_count);
	json__uint(&j, "dropped", s->heap_dropped);
	json__uint(&j, "unknown_frees", s->unknown_frees);
	if (s->unknown_free_bytes < 0)	/* not known: null */
		json__string(&j, "unknown_free_bytes", NULL);
	else
		json__int(&j, "unknown_free_bytes", s->unknown_free_bytes);
	json__uint(&j, "sample", s->heap_sample > 1 ? s->heap_sample : 1);
	if (meta_get(&in->meta, "alloc_history_events")) {
		json__begin_object(&j, "alloc_history");
		json__uint(&j, "events", strtoull(meta_get(&in->meta, "alloc_history_events"),
						  NULL, 10));
		json__uint(&j, "dropped",
			   strtoull(or_zero(meta_get(&in->meta, "alloc_history_dropped")), NULL, 10));
		json__end_object(&j);
	}
	if (meta_get(&in->meta, "heap_temporary"))
		json__uint(&j, "temporary", strtoull(meta_get(&in->meta, "heap_temporary"), NULL, 10));
	else
		json__null(&j, "temporary");
	json__uint(&j, "untracked_limited",
		   strtoull(or_zero(meta_get(&in->meta, "heap_untracked_limited")), NULL, 10));
	json__end_object(&j);
	if (s->has_rss) {
		json__begin_object(&j, "memory");
		json__int(&j, "rss_bytes", s->rss_bytes);
		json__int(&j, "rss_anon_bytes", s->rss_anon_bytes);
		json__int(&j, "rss_peak_bytes", s->rss_peak_bytes);
		json__int(&j, "header_bytes", s->header_bytes);
		json__end_object(&j);
	} else {
		json__null(&j, "memory");
	}
	json__begin_object(&j, "meta");
	for (int i = 0; i < in->meta.n; i++)
		json__meta(&j, in->meta.kv[2 * i], in->meta.kv[2 * i + 1]);
	json__end_object(&j);
	json__end_object(&j);
	return json__finish(&j);
}

static int info_check(struct db *db)
{
	int err = db__check(db);

	/* the totals readers use instead of the event rows add up to them */
	if (!err)
		err = totals__check(db);
	/* and so do the packed rows of compacted checkpoints */
	if (!err)
		err = series__check(db);

	if (err) {
		pr_hint("the file is damaged; its intact part may still be read with 'rsprof query'");
		return err;
	}
	if (output_args.json)
		puts("{\n  \"integrity\": \"ok\"\n}");
	else
		puts("ok");
	return 0;
}

static int info_run(void)
{
	struct info in = { 0 };
	int err;

	err = profile__open(opts.file, &in.db);
	if (err)
		goto out;
	if (opts.check) {
		err = info_check(in.db);
		goto out;
	}
	err = db__snapshot_begin(in.db);
	if (!err)
		err = db_query_summary(in.db, &in.sum);
	if (!err)
		err = db_query_meta(in.db, meta_add, &in.meta);
	if (!err)
		err = db__snapshot_end(in.db);
	if (!err)
		err = db__file_size(in.db, &in.size, &in.wal_size);
	if (err)
		goto out;
	err = output_args.json ? print_json(&in) : print_text(&in);
out:
	if (err == -ENOMEM)
		pr_err("out of memory");
	meta_free(&in.meta);
	db__close(in.db);
	return exit_from_err(err);
}

int cmd_info(int argc, const char **argv)
{
	poptContext pc = poptGetContext("rsprof info", argc, argv, info_options, 0);
	int ret = options_parse(pc, info_usage, NULL, NULL);
	const char **args;
	int n;

	if (ret == 0) {
		args = options_args(pc, &n);
		if (options_one_profile(n)) {
			ret = EXIT_USAGE;
		} else {
			opts.file = args[0];
			ret = info_run();
		}
	} else {
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	poptFreeContext(pc);
	return ret;
}
