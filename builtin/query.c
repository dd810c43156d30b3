/*
 * rsprof query: run one SQL statement of the user's on a profile and print
 * the result as a table, CSV or JSON. The profile is opened read-only and
 * a statement that would write is refused before it runs (util/db/user.h),
 * so the file stays byte-identical. SQL `-` reads the statement from stdin.
 * The output is built in memory and printed only when the statement ran to
 * the end: on an error stdout holds nothing.
 */
#include "builtin.h"

#include <errno.h>
#include <popt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/db/db.h"
#include "util/db/user.h"
#include "util/error.h"
#include "util/output/format.h"
#include "util/output/membuf.h"
#include "util/options.h"
#include "util/record/caps.h"

static struct poptOption query_options[] = {
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_output, 0, "Output options:", NULL },
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

struct query_out {
	FILE *f;		/* memory stream */
	struct table *table;	/* table output, made at the first row */
	struct json json;
	int ncol;
	const char **names;	/* copies of the column names */
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
	if (output_args.csv) {
		for (int c = 0; c < n; c++) {
			if (c)
				fputc(',', o->f);
			format__csv_field(o->f, o->names[c]);
		}
		fputc('\n', o->f);
	} else if (output_args.json) {
		json__init(&o->json, o->f);
		json__begin_array(&o->json, NULL);
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

static int out_row(int n, const struct user_value *v, void *data)
{
	struct query_out *o = data;

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
		return err;
	}
	return ferror(o->f) ? -ENOMEM : 0;
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
		if (cap - len < 2) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
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
	struct query_out o = { 0 };
	struct db *db = NULL;
	struct membuf mem;
	int err;

	err = db__open(file, &db);
	if (err)
		return exit_from_err(err);
	if (membuf__open(&mem)) {
		pr_err("out of memory");
		db__close(db);
		return EXIT_ERROR;
	}
	o.f = mem.f;
	err = db_user__run(db, sql, output_args.top_n, &cbs, &o);
	if (!err) {
		if (output_args.json) {
			if (!o.ncol) {
				json__init(&o.json, o.f);
				json__begin_array(&o.json, NULL);
			}
			json__end_array(&o.json);
			err = json__finish(&o.json);
		} else if (!output_args.csv) {
			if (!o.table)
				err = make_table(&o, NULL);
			if (!err && o.ncol)
				err = table__print(o.table, o.f, 0);
		}
	}
	err = membuf__flush(&mem, err, stdout);
	if (err == -ENOMEM)
		pr_err("out of memory");
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

	/* only reads: no capability, no setuid identity, before any file is opened (SPEC §9) */
	if (caps__drop_all()) {
		poptFreeContext(pc);
		return EXIT_PERM;
	}
	if (ret == 0) {
		int n;
		const char **args = options_args(pc, &n);

		if (options_output_check()) {
			ret = EXIT_USAGE;
		} else if (n != 2) {
			pr_err(n < 2 ? "a profile and an SQL statement are needed"
				     : "too many arguments; quote the SQL statement");
			pr_hint("rsprof query FILE 'SELECT key, value FROM meta'");
			ret = EXIT_USAGE;
		} else if (!strcmp(args[1], "-") && !(sql_in = read_stdin())) {
			ret = EXIT_ERROR;
		} else {
			ret = query_run(args[0], sql_in ? sql_in : args[1]);
		}
	} else {
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	free(sql_in);
	poptFreeContext(pc);
	return ret;
}
