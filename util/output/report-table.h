#ifndef RSPROF_UTIL_OUTPUT_REPORT_TABLE_H
#define RSPROF_UTIL_OUTPUT_REPORT_TABLE_H

#include <stdbool.h>
#include <stdio.h>

#include "util/db/read/query.h"

/*
 * Ranked profile rows as `rsprof report` prints them, and `top --stdio`
 * too: the CPU table (CPU%, Location, Function) and the heap table (Heap,
 * Peak, Allocs, [Temp,] Location, Function) as text fitting the terminal, CSV rows
 * and JSON rows. Each row keeps its full values and the strings shown.
 */
struct json;

struct report_row {
	struct prof_row r;	/* strings owned by the table */
	char *location;		/* "src/parser.rs:42", "[libc.so.6]", as the group wants */
	char *function_short;	/* demangled, shortened; "" for file and module groups */
};

struct report_table {
	struct report_row *v;
	int n, cap;
	enum group_by group;
	bool full_paths;	/* locations as recorded, not shortened */
	bool allocated;		/* heap text table: an Allocated (bytes) column too */
	bool temporary;		/* heap text table: a Temp (temporary allocations) column
				 * after Allocs; "-" where they were not counted */
	bool all;		/* text tables: the rows that show nothing too */
	bool by_live;		/* heap text table ranked by live bytes (the default) */
};

void report_table__init(struct report_table *t, enum group_by group, bool full_paths);
/* A prof_row_cb: ctx is the table. 0 or -ENOMEM. */
int report_table__add(const struct prof_row *r, void *ctx);
void report_table__exit(struct report_table *t);

/*
 * The text table, fitting width columns (0: the terminal). Without t->all,
 * rows that show nothing are left out and counted in *hidden (may be NULL):
 * CPU rows below 0.05 % (0.0 % shown); heap rows ranked by live bytes
 * with none live when another row has some (report_table__live_hides()),
 * else with neither live bytes nor a peak (or, sorted by allocated or
 * temporary, none of those). 0, -ENOMEM or -EIO.
 */
int report_table__print_cpu(const struct report_table *t, FILE *f, int width, int *hidden);
int report_table__print_heap(const struct report_table *t, FILE *f, int width, int *hidden);
/* Does the heap text table leave out the rows with nothing live (t->by_live, some row live)? */
bool report_table__live_hides(const struct report_table *t);

/* One CSV document for both rankings: the header, then rows named by `table`. */
void report_table__csv_header(FILE *f);
void report_table__csv_rows(const struct report_table *t, const char *table, FILE *f);

/* The rows as JSON objects into the array being written. */
void report_table__json_rows(const struct report_table *t, struct json *j, bool heap);

#endif
