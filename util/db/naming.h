#ifndef RSPROF_UTIL_DB_NAMING_H
#define RSPROF_UTIL_DB_NAMING_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/*
 * Profile file names: rsprof.{comm}.{YYMMDDhhmmss}.db, comm
 * sanitised to [A-Za-z0-9_-] (others become '-'), at most 32 characters,
 * the PID when comm is unknown (NULL or empty).
 */
char *naming__sanitize_comm(const char *comm, pid_t pid, char *buf, size_t len);
/* dir may be NULL (current directory). Returns buf. Local time, like perf. */
char *naming__default(const char *dir, const char *comm, pid_t pid, time_t when,
		      char *buf, size_t len);

/*
 * The newest rsprof.*.db in dir (by the timestamp in its name, then mtime),
 * malloc'd in *path. -RSPROF_EDB (with an error and a hint printed) when
 * there is none, as for a missing profile file (exit 6).
 */
int naming__newest(const char *dir, char **path);

#endif
