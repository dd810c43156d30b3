/*
 * rsprof query: run one SQL statement of the user's on a profile and print
 * the result as a table, CSV or JSON. The profile is opened read-only and
 * a statement that would write is refused before it runs (util/db/read/user.h),
 * so the file stays byte-identical. SQL `-` reads the statement from stdin.
 * Rows are printed as they come (a table's widths are taken from its first
 * rows), so a result of any size needs no more memory than a few rows;
 * an error before the first row leaves stdout empty, one after it stops the
 * output where it is (exit status 1 or 6).
 */
#include "builtin.h"

#include <errno.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/db.h"
#include "util/db/read/profile.h"
#include "util/db/read/user.h"
#include "util/error.h"
#include "util/output/format.h"
#include "util/options.h"

static struct query_opts {
	long max_rows;
} opts;

static struct poptOption query_options[] = {
	{ "max-rows", 0, POPT_ARG_LONG, &opts.max_rows, 0,
	  "stop with an error (exit 6) when the result has more than N rows "
	  "(default: no limit)", "N" },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_output, 0, "Output options:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

/* Table output: widths from the first rows, then printed this many at a time. */
#define QUERY_BATCH	1000

struct query_out {
	FILE *f;		/* stdout */
	struct table *table;	/* table output, made at the first row */
	struct json json;
	int ncol;
	const char **names;	/* copies of the column names */
	bool started;		/* the header (CSV), "[" (JSON) is out */
	long rows;		/* rows passed on */
	long max_rows;		/* --max-rows; 0: no limit */
};

static int out_columns(int n, const char *const *names, void *data)
{
	struct query_out *o = data;

	o->ncol = n;
	o->names = calloc((size_t)n + 1, sizeof(*o->names));
	if (!o->names)
		return -ENOMEM;
	for (int c = 0; c < n; c++) {
		o->names[c] = strdup(names[c] ? names[c] : "");
		if (!o->names[c])
			return -ENOMEM;
	}
	return 0;
}

static int make_table(struct query_out *o, const struct user_value *first)
{
	struct table_col *cols = calloc((size_t)o->ncol + 1, sizeof(*cols));

	if (!cols)
		return -ENOMEM;
	for (int c = 0; c < o->ncol; c++) {
		cols[c].title = o->names[c];
		cols[c].align = first && (first[c].type == USER_INT || first[c].type == USER_REAL)
				? TABLE_RIGHT : TABLE_LEFT;
		cols[c].trunc = TABLE_TRUNC_NONE;
	}
	o->table = table__new(cols, o->ncol);
	free(cols);
	return o->table ? 0 : -ENOMEM;
}

/*
 * The start of the output, at the first row or at the end of an empty
 * result: an error before it (bad SQL, a refused write, a failing first
 * step) leaves stdout empty.
 */
static void out_start(struct query_out *o)
{
	if (o->started)
		return;
	o->started = true;
	if (output_args.csv) {
		for (int c = 0; c < o->ncol; c++) {
			if (c)
				fputc(',', o->f);
			format__csv_field(o->f, o->names[c]);
		}
		if (o->ncol)
			fputc('\n', o->f);
	} else if (output_args.json) {
		json__init(&o->json, o->f);
		json__begin_array(&o->json, NULL);
	}
}

/* Each row goes out as it comes: memory stays the same whatever the result's size. */
static int out_row(int n, const struct user_value *v, void *data)
{
	struct query_out *o = data;

	if (o->max_rows && o->rows >= o->max_rows)
		return -E2BIG;
	o->rows++;
	out_start(o);
	if (output_args.csv) {
		for (int c = 0; c < n; c++) {
			if (c)
				fputc(',', o->f);
			if (v[c].text)
				format__csv_field(o->f, v[c].text);
		}
		fputc('\n', o->f);
	} else if (output_args.json) {
		json__begin_object(&o->json, NULL);
		for (int c = 0; c < n; c++) {
			switch (v[c].type) {
			case USER_INT:
				json__int(&o->json, o->names[c], v[c].i);
				break;
			case USER_REAL:
				json__double(&o->json, o->names[c], v[c].d);
				break;
			case USER_TEXT:
			case USER_BLOB:
				json__string(&o->json, o->names[c], v[c].text);
				break;
			default:
				json__null(&o->json, o->names[c]);
			}
		}
		json__end_object(&o->json);
	} else {
		const char **cells = calloc((size_t)n + 1, sizeof(*cells));
		int err;

		if (!cells)
			return -ENOMEM;
		if (!o->table && (err = make_table(o, v))) {
			free(cells);
			return err;
		}
		for (int c = 0; c < n; c++)
			cells[c] = v[c].type == USER_NULL ? "NULL" : v[c].text;
		err = table__add_row(o->table, cells);
		free(cells);
		if (!err && table__rows(o->table) >= QUERY_BATCH)
			err = table__flush(o->table, o->f, 0);
		return err;
	}
	return ferror(o->f) ? -EIO : 0;
}

/* The whole of stdin, malloc'd; NULL after an error (reported). */
static char *read_stdin(void)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	while (buf) {
		size_t n = fread(buf + len, 1, cap - len - 1, stdin);

		len += n;
		if (n == 0)
			break;
		if (cap - len < 2 && ALLOC_GROW(buf, cap + 1, cap, 4096)) {
			free(buf);
			buf = NULL;
			break;
		}
	}
	if (!buf) {
		pr_err("out of memory reading SQL from standard input");
		return NULL;
	}
	if (ferror(stdin)) {
		pr_err("cannot read SQL from standard input: %s", strerror(errno));
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

static int query_run(const char *file, const char *sql)
{
	struct user_cbs cbs = { .columns = out_columns, .row = out_row };
	struct query_out o = { .f = stdout, .max_rows = opts.max_rows };
	struct db *db = NULL;
	int err;

	err = profile__open(file, &db);
	if (err)
		return exit_from_err(err);
	err = db_user__run(db, sql, output_args.top_n, &cbs, &o);
	if (err == -E2BIG) {
		pr_err("the result has more than %ld rows (--max-rows): stopped after them",
		       o.max_rows);
		pr_hint("add a LIMIT to the statement, or raise --max-rows (0: no limit)");
		err = -RSPROF_EDB;
	}
	if (!err) {
		out_start(&o);
		if (output_args.json) {
			json__end_array(&o.json);
			err = json__finish(&o.json);
		} else if (!output_args.csv) {
			if (!o.table)
				err = make_table(&o, NULL);
			if (!err && o.ncol)
				err = table__flush(o.table, o.f, 0);
		}
	}
	if (fflush(stdout) && !err)
		err = -EIO;
	if (err == -ENOMEM)
		pr_err("out of memory");
	else if (err == -EIO)
		pr_err("cannot write the result: %s", strerror(errno));
	table__delete(o.table);
	for (int c = 0; o.names && c < o.ncol; c++)
		free((char *)o.names[c]);
	free(o.names);
	if (db__close(db) && !err)
		err = -RSPROF_EDB;
	return exit_from_err(err);
}

int cmd_query(int argc, const char **argv)
{
	poptContext pc = poptGetContext("rsprof query", argc, argv, query_options, 0);
	int ret = options_parse(pc, "[OPTION...] FILE SQL", NULL, NULL);
	char *sql_in = NULL;

	if (ret == 0) {
		int n;
		const char **args = options_args(pc, &n);

		if (options_output_check()) {
			ret = EXIT_USAGE;
		} else if (opts.max_rows < 0) {
			pr_err("--max-rows wants a number >= 0, not %ld", opts.max_rows);
			ret = EXIT_USAGE;
		} else if (n != 2) {
			pr_err(n < 2 ? "a profile and an SQL statement are needed"
				     : "too many arguments; quote the SQL statement");
			pr_hint("rsprof query FILE 'SELECT key, value FROM meta'");
			ret = EXIT_USAGE;
		} else if (!strcmp(args[1], "-") && !(sql_in = read_stdin())) {
			ret = EXIT_ERROR;
		} else {
			options_output_pager();
			ret = query_run(args[0], sql_in ? sql_in : args[1]);
		}
	} else {
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	free(sql_in);
	poptFreeContext(pc);
	return ret;
}
