#ifndef RSPROF_UTIL_ANNOTATE_SOURCE_H
#define RSPROF_UTIL_ANNOTATE_SOURCE_H

#include <stddef.h>

/*
 * Source files as recorded (DWARF's full paths) and where they are on this
 * machine now: the tree may have moved since the recording (another
 * checkout, a build machine's path).
 *
 * source__find() tries, first hit wins:
 *   1. each path map OLD=NEW whose OLD is a prefix of the recorded path,
 *      with that prefix replaced by NEW (the first matching map only);
 *   2. the recorded path itself;
 *   3. under each source directory, the recorded path's tails, longest
 *      first: for /build/app/src/x.rs and DIR, DIR/build/app/src/x.rs,
 *      DIR/app/src/x.rs, DIR/src/x.rs, DIR/x.rs.
 */
struct source_paths {
	const char *const *dirs;	/* --source-dir, n_dirs of them */
	int n_dirs;
	const char *const *maps;	/* --path-map OLD=NEW, n_maps of them */
	int n_maps;
};

/* A path map "OLD=NEW" is well formed (OLD non-empty). */
int source__check_map(const char *map);

/* The path on this machine (malloc'd into *found), -ENOENT or -ENOMEM. */
int source__find(const char *recorded, const struct source_paths *sp, char **found);

/* A source file's lines, without their line ends; line N is lines[N - 1]. */
struct source {
	char *text;
	char **lines;
	int n;
};

/*
 * Reads path (a regular file up to 64 MiB). 0, -errno (-EFBIG when too
 * large, -EISDIR/-EINVAL when not a regular file) or -ENOMEM.
 */
int source__read(const char *path, struct source **out);
void source__delete(struct source *s);	/* NULL ok */

#endif
