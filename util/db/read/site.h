#ifndef RSPROF_UTIL_DB_READ_SITE_H
#define RSPROF_UTIL_DB_READ_SITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Sites: the source locations a profile's addresses belong to, at one level
 * of aggregation (a line, a function, a file), numbered 0..count-1.
 * sitemap__load() reads the symbols table once and maps every address to
 * its site (a hash table: the event passes of timeline look up millions of
 * rows); sitemap__intern() adds a site by its key alone (diff matches the
 * rows of two files by it). A site with no file is keyed by its module and
 * function, so [libc.so.6] memcpy stays apart from [libm.so.6] memcpy.
 */
struct db;
struct sitemap;

enum site_by {
	SITE_BY_LINE,		/* file, line, function */
	SITE_BY_FUNCTION,	/* file, function (lines moved between builds) */
	SITE_BY_FILE,		/* file */
};

struct sitemap *sitemap__new(void);	/* NULL on -ENOMEM */
void sitemap__delete(struct sitemap *sm);	/* NULL ok */

/* Every row of symbols into sites of level by. 0, -ENOMEM or -RSPROF_EDB. */
int sitemap__load(struct sitemap *sm, struct db *db, enum site_by by);

/* The site of this key (made when new): its index, or -ENOMEM. Strings are copied. */
long sitemap__intern(struct sitemap *sm, enum site_by by, const char *file, int line,
		     const char *function, const char *module);

/* The site of an address loaded by sitemap__load(), or -1. */
long sitemap__find_addr(const struct sitemap *sm, int64_t addr);

size_t sitemap__count(const struct sitemap *sm);	/* sites; NULL: 0 */
size_t sitemap__n_addrs(const struct sitemap *sm);	/* addresses loaded */
/* The i-th loaded address (in *addr) and its site. */
long sitemap__addr_at(const struct sitemap *sm, size_t i, int64_t *addr);

/* A site's key fields, owned by sm; line is 0 and function NULL where the level drops them. */
void sitemap__site(const struct sitemap *sm, long s, const char **file, int *line,
		   const char **function, const char **module);

/* One run's numbers at one site (diff). */
struct site_sums {
	uint64_t samples;	/* CPU samples in the window */
	int64_t live;		/* heap: live bytes at the window's end */
	int64_t allocs;		/* heap: allocations in the window */
	bool cpu, heap;		/* the site has CPU samples, heap rows */
};

/*
 * The sites of db at level by, loaded into sm (sitemap__load()), and their
 * numbers in window w: *out (malloc'd, sitemap__count(sm) + 1 of them) and
 * *total_samples (all CPU samples of the window, added to). Heap stacks
 * that an allocation wrapper (built in, meta.heap_alloc_fn, alloc_fn) is in
 * count at the line past it, as report's (db_query_heap_moved()). In one
 * read snapshot, unless the caller holds one. 0, -ENOMEM or -RSPROF_EDB.
 */
struct time_window;
int site_sums__read(struct db *db, struct sitemap *sm, enum site_by by,
		    const char *const *alloc_fn, const struct time_window *w,
		    struct site_sums **out, uint64_t *total_samples);

#endif
