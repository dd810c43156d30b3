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
};

struct maps {
	pid_t pid;
	struct map *v;		/* sorted by start */
	size_t n;
};

/* Read /proc/pid/maps. -ESRCH when the process is gone, -errno otherwise. */
int maps__load(pid_t pid, struct maps **out);
/* The mapping holding addr, or NULL. */
const struct map *maps__find(const struct maps *m, uint64_t addr);
void maps__delete(struct maps *m);

#endif
