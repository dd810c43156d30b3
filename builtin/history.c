/*
 * rsprof history: who owned an address, and when. In a
 * profile with an allocation history, the first N allocations at or after
 * (--before: at or before) a moment that overlap an address range, each
 * with its site, size, the time it was made and the time it was freed;
 * with --at on one address, the allocation that owned it at that moment,
 * or that it was free then. Table, --json or --csv.
 */
#include "builtin.h"

#include <errno.h>
#include <inttypes.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/db/read/addrs.h"
#include "util/db/db.h"
#include "util/db/read/profile.h"
#include "util/db/read/history.h"
#include "util/duration.h"
#include "util/error.h"
#include "util/options.h"
#include "util/output/escape.h"
#include "util/output/format.h"
#include "util/output/membuf.h"
#include "util/symbols/demangle.h"
#include "util/symbols/srcpath.h"

#define DEFAULT_ROWS 10

static struct history_opts {
	const char *addr, *at, *after;
	int before, full_paths;
} opts;

static const char history_usage[] = "[OPTION...] [FILE] --addr A[..B]";

static struct poptOption history_options[] = {
	{ "addr", 0, POPT_ARG_STRING, &opts.addr, 0,
	  "the address (0x... or decimal), or the range A..B, inclusive", "A[..B]" },
	{ "at", 0, POPT_ARG_STRING, &opts.at, 0,
	  "from the moment DUR after the start (default: the start; --before: the end)",
	  "DUR" },
	{ "before", 0, POPT_ARG_NONE, &opts.before, 0,
	  "the allocations at or before the moment, newest first", NULL },
	{ "after", 0, POPT_ARG_STRING, &opts.after, 0,
	  "continue a listing after allocation ID (its Event number)", "ID" },
	{ "full-paths", 0, POPT_ARG_NONE, &opts.full_paths, 0,
	  "show source paths as recorded, not shortened", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_output, 0,
	  "Output options (-n N: allocations shown, default 10):", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

/* "0x1000", "4096", "0x1000..0x10ff" */
static int parse_addr(const char *s, uint64_t *a, uint64_t *b)
{
	const char *dots = strstr(s, "..");
	char first[64];

	if (!dots) {
		if (parse_u64(s, a))
			return -EINVAL;
		*b = *a;
		return 0;
	}
	if ((size_t)(dots - s) >= sizeof(first))
		return -EINVAL;
	memcpy(first, s, dots - s);
	first[dots - s] = '\0';
	if (parse_u64(first, a) || parse_u64(dots + 2, b) || *a > *b)
		return -EINVAL;
	return 0;
}

/* Seconds with microseconds, as the table shows times: "1.250000". */
static char *secs(uint64_t ns, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64 ".%06" PRIu64, ns / 1000000000, ns / 1000 % 1000000);
	return buf;
}

/* A lifetime for humans: "850ns", "12.5µs" ("us" in ASCII), or a duration. */
static char *lifetime(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 "ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else
		duration__format(ns / 1000000, buf, len);
	return buf;
}

struct site {
	struct addr_row r;
	bool found;
	char loc[1100];
	char fn[512];
};

static int site_of(struct db *db, uint64_t addr, struct site *s)
{
	char path[1024];
	int err;

	memset(s, 0, sizeof(*s));
	if (!addr) {
		snprintf(s->loc, sizeof(s->loc), "[unknown]");
		return 0;
	}
	err = db_query_symbol(db, (int64_t)addr, &s->r, &s->found);
	if (err)
		return err;
	if (!s->found || !s->r.file) {
		srcpath__display(NULL, s->r.module, s->loc, sizeof(s->loc));
	} else {
		if (opts.full_paths)
			snprintf(path, sizeof(path), "%s", s->r.file);
		else
			srcpath__display(s->r.file, s->r.module, path, sizeof(path));
		snprintf(s->loc, sizeof(s->loc), s->r.line > 0 ? "%s:%d" : "%s", path, s->r.line);
	}
	demangle__short(s->r.function, 60, s->fn, sizeof(s->fn));
	return 0;
}

struct listing {
	struct db *db;
	const char *path;
	struct history_query q;
	bool at_given;
	uint64_t events;
	char *dropped;		/* meta alloc_history_dropped: tracker events lost (NULL: unknown) */
	struct alloc_record *v;
	int n;
	/* the owner of addr_first at the moment (--at, one address) */
	bool owner_asked, owner_found, owner_live;
	struct alloc_record owner;
};

static void print_owner(FILE *f, const struct listing *l)
{
	char a[32], b[32];
	struct site s;

	if (!l->owner_asked)
		return;
	secs(l->q.time_ns, a, sizeof(a));
	if (!l->owner_found) {
		fprintf(f, "# owner:    0x%" PRIx64 " at %s s: never allocated before\n",
			l->q.addr_first, a);
		return;
	}
	site_of(l->db, l->owner.site, &s);
	if (l->owner_live)
		fprintf(f, "# owner:    0x%" PRIx64 " at %s s: allocation %" PRId64 " (%" PRIu64
			" B at 0x%" PRIx64 ", %s %s)\n", l->q.addr_first, a, l->owner.id,
			l->owner.size, l->owner.addr, s.loc, s.fn);
	else
		fprintf(f, "# owner:    0x%" PRIx64 " at %s s: free (last held by allocation %"
			PRId64 ", %s %s, freed at %s s)\n", l->q.addr_first, a, l->owner.id, s.loc,
			s.fn, secs(l->owner.time_free, b, sizeof(b)));
	addr_row__exit(&s.r);
}

static int print_text(FILE *f, const struct listing *l)
{
	static const struct table_col cols[] = {
		{ "Event", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Address", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Size", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Allocated (s)", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Freed (s)", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Lifetime", TABLE_RIGHT, TABLE_TRUNC_NONE, 0 },
		{ "Site", TABLE_LEFT, TABLE_TRUNC_LEFT, 16 },
		{ "Function", TABLE_LEFT, TABLE_TRUNC_NAME, 12 },
	};
	struct table *t = table__new(cols, 8);
	char a[32], b[32];
	int err = t ? 0 : -ENOMEM;

	fputs("# file:     ", f);
	escape__fputs(l->path, f);	/* util/output/escape.h */
	fprintf(f, "  (allocation history: %s allocations)\n",
		format__count(l->events, a, sizeof(a)));
	/* never silent: what the recorder could not keep up with */
	if (l->dropped && strtoull(l->dropped, NULL, 10))
		fprintf(f, "# dropped:  %s allocation and free events the recorder could not keep"
			" (an owner may be missing or a block seem live)\n",
			format__count(strtoull(l->dropped, NULL, 10), b, sizeof(b)));
	fprintf(f, "# range:    0x%" PRIx64 "..0x%" PRIx64 "  %s %s s%s\n", l->q.addr_first,
		l->q.addr_last, l->q.backward ? "at or before" : "at or after",
		secs(l->q.time_ns, b, sizeof(b)), l->q.after_id ? "  (continued)" : "");
	print_owner(f, l);
	for (int i = 0; i < l->n && !err; i++) {
		const struct alloc_record *r = &l->v[i];
		char id[32], addr[32], size[32], ta[32], tf[32], life[32];
		struct site s;
		const char *cells[8];

		err = site_of(l->db, r->site, &s);
		if (err)
			break;
		snprintf(id, sizeof(id), "%" PRId64, r->id);
		snprintf(addr, sizeof(addr), "0x%" PRIx64, r->addr);
		cells[0] = id;
		cells[1] = addr;
		cells[2] = format__count(r->size, size, sizeof(size));
		cells[3] = secs(r->time_alloc, ta, sizeof(ta));
		cells[4] = r->freed ? secs(r->time_free, tf, sizeof(tf)) : "live";
		cells[5] = r->freed ? lifetime(r->time_free - r->time_alloc, life, sizeof(life)) : "";
		cells[6] = s.loc;
		cells[7] = s.fn;
		err = table__add_row(t, cells);
		addr_row__exit(&s.r);
	}
	if (!err && l->n) {
		fputc('\n', f);
		err = table__print(t, f, 0);
	} else if (!err) {
		fprintf(f, "\n# no allocation %s that moment overlaps the range\n",
			l->q.backward ? "at or before" : "at or after");
	}
	table__delete(t);
	return err ? err : ferror(f) ? -EIO : 0;
}

static int print_csv(FILE *f, const struct listing *l)
{
	int err = 0;

	fputs("id,addr,size,time_alloc_ns,time_free_ns,file,line,function,stack_id\n", f);
	for (int i = 0; i < l->n && !err; i++) {
		const struct alloc_record *r = &l->v[i];
		struct site s;

		err = site_of(l->db, r->site, &s);
		if (err)
			break;
		fprintf(f, "%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", r->id, r->addr, r->size,
			r->time_alloc);
		if (r->freed)
			fprintf(f, "%" PRIu64, r->time_free);
		fputc(',', f);
		format__csv_field(f, s.r.file);
		fputc(',', f);
		if (s.r.line > 0)
			fprintf(f, "%d", s.r.line);
		fputc(',', f);
		format__csv_field(f, s.r.function);
		fputc(',', f);
		if (r->stack_id >= 0)
			fprintf(f, "%" PRId64, r->stack_id);
		fputc('\n', f);
		addr_row__exit(&s.r);
	}
	return err ? err : ferror(f) ? -EIO : 0;
}

static int json_record(struct json *j, const char *key, struct db *db,
		       const struct alloc_record *r)
{
	struct site s;
	int err = site_of(db, r->site, &s);

	if (err)
		return err;
	json__begin_object(j, key);
	json__int(j, "id", r->id);
	json__uint(j, "addr", r->addr);
	json__uint(j, "size", r->size);
	json__uint(j, "time_alloc_ns", r->time_alloc);
	if (r->freed)
		json__uint(j, "time_free_ns", r->time_free);
	else
		json__null(j, "time_free_ns");
	json__string(j, "file", s.r.file);
	if (s.r.line > 0)
		json__int(j, "line", s.r.line);
	else
		json__null(j, "line");
	json__string(j, "function", s.r.function);
	if (r->stack_id >= 0)
		json__int(j, "stack_id", r->stack_id);
	else
		json__null(j, "stack_id");
	json__end_object(j);
	addr_row__exit(&s.r);
	return 0;
}

static int print_json(FILE *f, const struct listing *l)
{
	struct json j;
	int err = 0;

	json__init(&j, f);
	json__begin_object(&j, NULL);
	json__string(&j, "file", l->path);
	json__uint(&j, "history_events", l->events);
	if (l->dropped)
		json__uint(&j, "history_dropped", strtoull(l->dropped, NULL, 10));
	else
		json__null(&j, "history_dropped");
	json__begin_object(&j, "query");
	json__uint(&j, "addr_first", l->q.addr_first);
	json__uint(&j, "addr_last", l->q.addr_last);
	json__uint(&j, "time_ns", l->q.time_ns);
	json__bool(&j, "before", l->q.backward);
	json__int(&j, "limit", l->q.limit);
	if (l->q.after_id)
		json__int(&j, "after", l->q.after_id);
	else
		json__null(&j, "after");
	json__end_object(&j);
	if (l->owner_asked) {
		json__begin_object(&j, "owner");
		json__bool(&j, "live", l->owner_live);
		if (l->owner_found)
			err = json_record(&j, "allocation", l->db, &l->owner);
		else
			json__null(&j, "allocation");
		json__end_object(&j);
	}
	json__begin_array(&j, "allocations");
	for (int i = 0; i < l->n && !err; i++)
		err = json_record(&j, NULL, l->db, &l->v[i]);
	json__end_array(&j);
	json__end_object(&j);
	return err ? err : json__finish(&j);
}

static int history_run(const char *path)
{
	struct listing l = { 0 };
	uint64_t ms = 0, after = 0;
	struct membuf out;
	bool present;
	int err;

	if (!opts.addr) {
		pr_err("--addr is needed: the address (or range) to follow");
		pr_hint("rsprof history --addr 0x55d0c0a012a0 --at 2.5s run.db");
		return EXIT_USAGE;
	}
	if (parse_addr(opts.addr, &l.q.addr_first, &l.q.addr_last)) {
		pr_err("--addr wants an address or a range A..B (0x... or decimal), not '%s'",
		       opts.addr);
		return EXIT_USAGE;
	}
	if (opts.at && duration__parse(opts.at, &ms)) {
		pr_err("--at: '%s' is not a duration", opts.at);
		pr_hint("durations look like 30s, 5m, 1h30m, 250ms, 1.5");
		return EXIT_USAGE;
	}
	if (opts.after && (parse_u64(opts.after, &after) || !after || after > INT64_MAX)) {
		pr_err("--after wants an allocation's Event number, not '%s'", opts.after);
		return EXIT_USAGE;
	}
	l.q.backward = opts.before;
	l.q.time_ns = opts.at ? ms * 1000000 : opts.before ? UINT64_MAX / 2 : 0;
	l.q.limit = output_args.top_n ? output_args.top_n : DEFAULT_ROWS;
	l.q.after_id = (int64_t)after;
	l.owner_asked = opts.at && l.q.addr_first == l.q.addr_last && !after;
	err = profile__open(path, &l.db);
	if (!err) {
		l.path = db__path(l.db);
		err = db__snapshot_begin(l.db);
	}
	if (!err)
		err = db_history_present(l.db, &present, &l.events);
	if (!err && !present) {
		pr_err("'%s' has no allocation history", l.path);
		pr_hint("an allocation history is recorded by 'rsprof record --alloc-history --"
			" COMMAND' (the in-process heap tracker)");
		err = -RSPROF_EDB;
	}
	if (!err)
		err = db__meta_get(l.db, "alloc_history_dropped", &l.dropped);
	if (!err) {
		l.v = calloc(l.q.limit, sizeof(*l.v));
		err = l.v ? db_history_query(l.db, &l.q, l.v, &l.n) : -ENOMEM;
	}
	if (!err && l.owner_asked)
		err = db_history_owner(l.db, l.q.addr_first, l.q.time_ns, &l.owner,
				       &l.owner_found, &l.owner_live);
	if (err)
		goto out;
	/* stdout gets the whole document or nothing */
	err = membuf__open(&out);
	if (!err && output_args.json)
		err = print_json(out.f, &l);
	else if (!err && output_args.csv)
		err = print_csv(out.f, &l);
	else if (!err)
		err = print_text(out.f, &l);
	err = membuf__flush(&out, err, stdout);
out:
	if (l.db)
		db__snapshot_end(l.db);
	db__close(l.db);
	free(l.v);
	free(l.dropped);
	if (err == -ENOMEM)
		pr_err("out of memory");
	return exit_from_err(err);
}

int cmd_history(int argc, const char **argv)
{
	poptContext pc = poptGetContext("rsprof history", argc, argv, history_options, 0);
	int ret = options_parse(pc, history_usage, NULL, NULL);

	if (ret == 0) {
		int n;
		const char **args = options_args(pc, &n);

		if (options_output_check()) {
			ret = EXIT_USAGE;
		} else if (options_one_profile(n)) {
			ret = EXIT_USAGE;
		} else {
			options_output_pager();
			ret = history_run(args[0]);
		}
	} else {
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	poptFreeContext(pc);
	return ret;
}
