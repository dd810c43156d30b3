#ifndef RSPROF_UTIL_DB_READ_PROFILE_H
#define RSPROF_UTIL_DB_READ_PROFILE_H

/*
 * The profile a reading command works on (report, info, history,
 * annotate, timeline, query, diff, top FILE): the one named, or when none
 * is the newest rsprof.*.db of the current directory (util/db/naming.h),
 * opened read-only (db__open()). The commands that only read drop their
 * privileges before (builtin.h's CMD_READ_ONLY).
 */
struct db;

/* path NULL: the newest profile here. db__path(*out) is the file opened. 0 or an error, printed. */
int profile__open(const char *path, struct db **out);

#endif
