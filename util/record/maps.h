#ifndef RSPROF_UTIL_RECORD_MAPS_H
#define RSPROF_UTIL_RECORD_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* /proc/PID/maps, parsed (seed 003's `map` table is one row per entry). */
struct map {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;		/* file offset of start */
	char perms[5];		/* "r-xp" */
	uint64_t inode;
	char *path;		/* NULL for anonymous mappings; "[heap]", "[vdso]" kept */
	unsigned char build_id[20];	/* from a perf mmap2 record; build_id_len 0: unknown */
	unsigned char build_id_len;
	/* its owner's cached id of path and build-id + 1 (0: none yet): copies keep it */
	uint64_t ident;
};

struct maps {
	pid_t pid;
	struct map *v;		/* sorted by start */
	size_t n;
};

/* Read /proc/pid/maps. -ESRCH when the process is gone, -errno otherwise. */
int maps__load(pid_t pid, struct maps **out);
/*
 * The build-ids of the files m's code mappings map, read through
 * /proc/PID/map_files (the file mapped, even when its path now names
 * another): /proc/PID/maps has none, and perf's mmap2 records come only
 * for what is mapped after the start. A mapping whose file cannot be
 * read keeps none.
 */
void maps__read_build_ids(struct maps *m);
/* An empty set (mappings added by maps__insert()); NULL on -ENOMEM. */
struct maps *maps__new(pid_t pid);
/*
 * Add a mapping as a perf mmap2 record tells it (m->path is copied); the
 * parts of older mappings it covers are dropped, as mmap() replaces them.
 * 0 or -ENOMEM.
 */
int maps__insert(struct maps *m, const struct map *e);
/* A deep copy; NULL on -ENOMEM. */
struct maps *maps__dup(const struct maps *m);
/* The mapping holding addr, or NULL. */
const struct map *maps__find(const struct maps *m, uint64_t addr);
/* The same, when it maps a file (a path starting with '/'), else NULL. */
const struct map *maps__find_file(const struct maps *m, uint64_t addr);
void maps__delete(struct maps *m);

/*
 * The mappings a profile holds (its `map` table, util/db/read/addrs.h),
 * sorted by start; *out is NULL for a version-1 file or an empty table.
 * 0, -ENOMEM or -RSPROF_EDB.
 */
struct db;
int maps__from_profile(struct db *db, struct maps **out);
/* The same for process pid alone (*out NULL: the profile has none of it). */
int maps__from_profile_pid(struct db *db, int pid, struct maps **out);

#endif
