#ifndef RSPROF_UTIL_STRTAB_H
#define RSPROF_UTIL_STRTAB_H

#include "util/hashmap.h"

/*
 * Interned strings (function names, files of call stacks): each distinct
 * string is copied once and known by its index, so that equal strings are
 * equal indices.
 */
struct strtab {
	char **v;
	int n, cap;
	struct hashmap map;
};

/* s's index in *idx, copied in when new. 0 or -ENOMEM. */
int strtab__intern(struct strtab *st, const char *s, int *idx);
/* s's index, or -1 when s was never interned. */
int strtab__find(const struct strtab *st, const char *s);
void strtab__free(struct strtab *st);	/* the strings too; empty and usable again */

#endif
