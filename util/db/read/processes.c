#include "util/db/read/processes.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/db/db.h"
#include "util/error.h"
#include "util/db/read/query-priv.h"

/* A file without process rows: the target as meta names it. */
static int from_meta(struct db *db, int (*cb)(void *ctx, const struct process_info *p),
		     void *ctx)
{
	char *pid = NULL, *comm = NULL, *exe = NULL;
	struct process_info p = { .end_ms = -1 };
	int err;

	err = db__meta_get(db, "pid", &pid);
	if (!err)
		err = db__meta_get(db, "process_name", &comm);
	if (!err)
		err = db__meta_get(db, "exe_path", &exe);
	if (!err && pid && atoi(pid) > 0) {
		p.pid = atoi(pid);
		p.comm = comm;
		p.exe = exe && *exe ? exe : NULL;
		err = cb(ctx, &p);
	}
	free(pid);
	free(comm);
	free(exe);
	return err;
}

int db_query_processes(struct db *db, int (*cb)(void *ctx, const struct process_info *p),
		       void *ctx)
{
	sqlite3_stmt *st;
	int rc, err, n = 0;

	if (!db__has(db, DB_PROCESSES))
		return from_meta(db, cb, ctx);
	err = db__prepare(db, "read processes", db__has(db, DB_PROC_CGROUP) ?
			  "SELECT pid, ppid, comm, exe, start_ms, end_ms, cgroup"
			  " FROM processes ORDER BY pid, start_ms" :
			  "SELECT pid, ppid, comm, exe, start_ms, end_ms, NULL"
			  " FROM processes ORDER BY pid, start_ms", &st);
	if (err)
		return err;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct process_info p = {
			.pid = sqlite3_column_int(st, 0),
			.ppid = sqlite3_column_int(st, 1),
			.comm = (const char *)sqlite3_column_text(st, 2),
			.exe = (const char *)sqlite3_column_text(st, 3),
			.cgroup = (const char *)sqlite3_column_text(st, 6),
			.start_ms = (uint64_t)sqlite3_column_int64(st, 4),
			.end_ms = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 :
				  sqlite3_column_int64(st, 5),
		};

		if (++n > DB_MAX_ROWS)
			err = db__too_many_rows(db, "processes");
		else
			err = cb(ctx, &p);
	}
	if (!err && rc != SQLITE_DONE)
		err = db__err(db, "read processes");
	sqlite3_finalize(st);
	if (!err && !n)
		err = from_meta(db, cb, ctx);
	return err;
}

/* The pids of a recording for db_check_pid(): found, and a list to name. */
struct pid_check {
	int pid;
	bool found;
	int n, last;
	char list[256];
};

static int check_one(void *ctx, const struct process_info *p)
{
	struct pid_check *c = ctx;
	size_t len = strlen(c->list);

	if (p->pid == c->pid)
		c->found = true;
	if (p->pid == c->last)		/* one pid, several images (exec) */
		return 0;
	c->last = p->pid;
	if (c->n++ < 8)
		snprintf(c->list + len, sizeof(c->list) - len, "%s%d", len ? ", " : "", p->pid);
	return 0;
}

int db_check_pid(struct db *db, const char *opt, int pid)
{
	struct pid_check c = { .pid = pid };
	int err;

	if (!pid)
		return 0;
	err = db_query_processes(db, check_one, &c);
	/* a file of before the processes table: its samples name the pids */
	if (!err && !c.found && !db__has(db, DB_PROCESSES) && db__has(db, DB_PID)) {
		sqlite3_stmt *st;

		err = db__prepare(db, "read process IDs", "SELECT EXISTS (SELECT 1 FROM"
				  " cpu_samples WHERE pid = ?1) OR EXISTS (SELECT 1 FROM"
				  " heap_events WHERE pid = ?1)", &st);
		if (err)
			return err;
		sqlite3_bind_int(st, 1, pid);
		if (sqlite3_step(st) == SQLITE_ROW)
			c.found = sqlite3_column_int(st, 0);
		else
			err = db__err(db, "read process IDs");
		sqlite3_finalize(st);
	}
	if (err || c.found)
		return err;
	pr_err("%s %d: no such process in '%s'", opt, pid, db__path(db));
	if (c.n)
		pr_hint("it has %s %s%s (rsprof report -s process shows each)",
			c.n == 1 ? "process" : "processes", c.list, c.n > 8 ? ", ..." : "");
	else
		pr_hint("it names no process: rsprof info shows what it holds");
	return -RSPROF_EUSAGE;
}
