/*
 * Interned strings: an array of copies and a hash map from a string to its index.
 */
#include "util/strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

static bool str_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct strtab *st = ctx;

	return !strcmp(st->v[val], key);
}

int strtab__intern(struct strtab *st, const char *s, int *idx)
{
	uint64_t v = (uint64_t)st->n;
	bool fresh = false;
	int err = hashmap__intern(&st->map, hashmap__hash_str(s), str_eq, s, st, &v, &fresh);

	if (err)
		return err;
	if (fresh) {
		if (ALLOC_GROW(st->v, st->n + 1, st->cap, 64))
			return -ENOMEM;
		st->v[st->n] = strdup(s);
		if (!st->v[st->n])
			return -ENOMEM;
		st->n++;
	}
	*idx = (int)v;
	return 0;
}

int strtab__find(const struct strtab *st, const char *s)
{
	uint64_t v;

	if (!hashmap__lookup(&st->map, hashmap__hash_str(s), str_eq, s, st, &v))
		return -1;
	return (int)v;
}

void strtab__free(struct strtab *st)
{
	for (int i = 0; i < st->n; i++)
		free(st->v[i]);
	free(st->v);
	hashmap__free(&st->map);
	st->v = NULL;
	st->n = st->cap = 0;
}
