#ifndef RSPROF_UTIL_DB_READ_QUERY_PRIV_H
#define RSPROF_UTIL_DB_READ_QUERY_PRIV_H

/*
 * Inside the read queries (util/db/read/query*.c, summary.c, site-sums.c): the
 * symbols table grouped at the filter's level, and the helpers the CPU,
 * heap, stack and summary queries share. Not for other files.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sqlite3.h>

#include "util/db/read/query.h"
#include "util/hashmap.h"

struct db;

struct qsym {
	int64_t addr;
	char *file, *function, *module;
	char *mangled;		/* linkage name of the outermost function (v2), or NULL */
	char *symname;		/* GROUP_SYMBOL: mangled demangled (or as is), else NULL */
	int line;
	int pid;		/* a process group's representative */
	char *cgroup;		/* a process group's: its cgroup v2 path, or NULL */
	int group;
	bool match;		/* passes the filter's pattern */
};


struct qgroup {
	const struct qsym *rep;	/* a member: file, line, function, module */
	uint64_t samples;
	int64_t live, peak;
	int64_t alloc_bytes, free_bytes, alloc_count, free_count;
	int64_t temp_count;	/* temporaries freed in the window (temp_known) */
	bool temp_known;	/* a row of the group had temp_count (not NULL) */
	int64_t touched_cp;	/* last checkpoint that changed live */
	unsigned int kinds;	/* heap: 1 << heap_events.kind of its rows that allocated */
	bool used;
};


struct qctx {
	struct db *db;
	const struct query_filter *f;
	struct qsym *syms;	/* the symbols rows (addr order), then sites added by */
	int n_syms, cap_syms;	/* qctx_add_sym() (re-attributed lines, no address) */
	int n_addr_syms;
	struct qgroup *groups;	/* n_groups + 1: the last one is for unknown addresses */
	int n_groups;
	struct qsym unknown;
	struct hashmap index;	/* addr -> index in syms */
	int default_pid;	/* rows without a pid (files before v3): meta.pid */
	bool has_pid;		/* the tables have a pid column (v3) */
	/* GROUP_PROCESS: the groups are processes, not symbols */
	struct qsym *procs;
	int n_procs;
	struct hashmap proc_index;	/* pid -> index in procs */
};


/* The hint's tally: live bytes per heap stack and the group its rows went to. */
struct stack_live {
	int64_t id;
	int64_t live;
	int group;
};

/*
 * The rows reach C through an SQL function evaluated in the WHERE clause of
 * a scan that returns nothing: SQLite's VDBE walks the table without the
 * per-row cost of sqlite3_step()/sqlite3_column_*() (an hour of samples:
 * 0.12 s instead of 0.7 s). Registered on the reader's own connection; the
 * file is not touched.
 */
struct scan {
	struct qctx *q;
	struct reattrib *ra;	/* heap: sites moved past wrappers; NULL: none */
	struct hashmap *stack_slot;	/* heap hint: stack id -> index + 1 in stack_live */
	struct stack_live *stack_live;
	int n_stack_live, cap_stack_live;
	bool no_memory;
	uint64_t cpu_total;
	int64_t total_live;
	int64_t win_lo;		/* heap: allocations counted from this checkpoint on */
	int64_t cur;		/* heap: checkpoint of the previous row */
	int *touched;
	int n_touched;
	bool unordered;
};


/* Column i as a malloc'd string (NULL stays NULL); failure sets *err. */
char *dup_col(sqlite3_stmt *st, int i, int *err);
/* One row of n integers from sql. */
int int_query(struct db *db, const char *what, const char *sql, int64_t *v, int n);

/*
 * Hold one read transaction across the reads of a query, unless the caller
 * holds one (*mine tells); q_snapshot_end() ends it when it is *mine.
 */
int q_snapshot(struct db *db, bool *mine);
void q_snapshot_end(struct db *db, bool mine);

/* Load the symbols, group them by f->group, mark those matching f->pattern. */
int qctx_load(struct qctx *q, struct db *db, const struct query_filter *f);
/* The same in two steps, so that sites may be added in between. */
int qctx_load_syms(struct qctx *q, struct db *db, const struct query_filter *f);
int qctx_group(struct qctx *q);
/* A site with no address of its own (strings copied); its index in q->syms or -ENOMEM. */
int qctx_add_sym(struct qctx *q, const char *file, int line, const char *function,
		 const char *module);
void qctx_free(struct qctx *q);
/* The symbol of addr, or &q->unknown. */
const struct qsym *qctx_find(const struct qctx *q, int64_t addr);
/*
 * The group a row of process pid (NULL in the table: is_null) at symbol s
 * counts in, or -1 when the filter's pid leaves it out.
 */
int qctx_group_of(const struct qctx *q, const struct qsym *s, int64_t pid, bool is_null);

/* The inline chains of symbol_frames, per address symbol (index in q->syms). */
struct frame;
struct chains {
	struct frame *v;	/* all rows, grouped by symbol */
	int *first, *n;		/* per symbol: index in v, count (0: the symbols row alone) */
	int nv;
	int n_syms;		/* symbols covered: q->n_addr_syms when loaded */
};

/*
 * Load symbol_frames (innermost first) and keep, per symbol, the part from
 * the reported frame (the symbols row) outwards. Before qctx_add_sym().
 */
int chains_load(struct qctx *q, struct chains *c);
void chains_free(struct chains *c, int n_syms);

/*
 * Heap sites re-attributed from the stored stacks past allocation wrappers
 * (util/db/read/query-reattrib.c): per heap stack id, the index + 1 in q->syms
 * of its site when a wrapper moved it, and a hash of the line that called
 * the site (file, line, function).
 */
struct reattrib {
	struct hashmap site;
	struct hashmap caller;
};

/* After qctx_load_syms(), before qctx_group() (it may add sites). */
int reattrib_load(struct qctx *q, struct reattrib *ra);
void reattrib_free(struct reattrib *ra);
/* The site of stack_id when re-attributed, else NULL (the recorded addr stands). */
const struct qsym *reattrib_site(const struct reattrib *ra, const struct qctx *q,
				 int64_t stack_id);
/* The hash of the line that called stack_id's site, 0 when unknown. */
uint64_t reattrib_caller(const struct reattrib *ra, int64_t stack_id);

/* The checkpoint ids [*lo, *hi] whose timestamps fall in [from, to]; *lo > *hi when none. */
int checkpoint_range(struct db *db, uint64_t from, uint64_t to, int64_t *lo, int64_t *hi,
		     bool *all);
/* Sort the used groups, apply threshold and limit, hand the rows to cb. */
int emit_rows(struct qctx *q, bool heap, double total, prof_row_cb cb, void *ctx);
/* Run a scan whose WHERE calls fn (nargs values) once per row; binds lo/hi when asked. */
int run_scan(struct db *db, const char *what, const char *fname, int nargs,
	     void (*fn)(sqlite3_context *, int, sqlite3_value **), struct scan *sc,
	     const char *sql, int n_bind, int64_t b1, int64_t b2);

#endif
