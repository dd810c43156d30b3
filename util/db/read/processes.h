#ifndef RSPROF_UTIL_DB_READ_PROCESSES_H
#define RSPROF_UTIL_DB_READ_PROCESSES_H

#include <stdint.h>

/*
 * The processes of a recording as the `processes` table holds them (one
 * row per image: an exec ends one and starts the next), for the readers
 * that label data by process. A file of before the table (or with none of
 * its rows) has one: meta.pid with meta.process_name and meta.exe_path.
 */
struct db;

struct process_info {
	int pid, ppid;
	const char *comm, *exe;	/* NULL when unknown */
	const char *cgroup;	/* its cgroup v2 path; NULL when unknown */
	uint64_t start_ms;
	int64_t end_ms;		/* -1: still running at the end */
};

/* Every image, by pid then start; strings live until cb returns; its error stops the walk. */
int db_query_processes(struct db *db, int (*cb)(void *ctx, const struct process_info *p),
		       void *ctx);

/*
 * A --pid option's process checked against the recording: 0 when pid is 0
 * (every process) or one of its processes; else an error that names the
 * processes it has and -RSPROF_EUSAGE (a bad argument, not an empty
 * result). opt is the option as the user wrote it ("--pid").
 */
int db_check_pid(struct db *db, const char *opt, int pid);

#endif
