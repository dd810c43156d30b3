/*
 * util/symbols/symtab: the sorted table and its lookups, on text tables
 * (a JIT's perf map) with names sharing addresses spread over 2^44 bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "util/symbols/symtab.h"

#define N	20000

struct ent {
	uint64_t addr;
	uint32_t size;
	char name[32];
};

static unsigned int underscores(const char *s)
{
	unsigned int u = 0;

	while (s[u] == '_')
		u++;
	return u;
}

/* the name a lookup must give among v's n names at one address: fewest
 * underscores, sized, then by name */
static const struct ent *best_of(const struct ent *v, size_t n)
{
	const struct ent *b = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!b || underscores(v[i].name) < underscores(b->name) ||
		    (underscores(v[i].name) == underscores(b->name) &&
		     ((v[i].size && !b->size) ||
		      ((!v[i].size == !b->size) && strcmp(v[i].name, b->name) < 0))))
			b = &v[i];
	}
	return b;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int by_addr(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int main(void)
{
	static struct ent v[N], sorted[N];
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	size_t n = 0, bad_name = 0, bad_range = 0, checked = 0;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct symtab *st;

	/* addresses over 44 bits (four radix passes), one in eight shared by 2-4 names */
	while (n < N) {
		uint64_t a = 0x1000 + (rnd(&seed) & ((1ULL << 44) - 1) & ~0xfULL);
		unsigned int k = rnd(&seed) % 8 ? 1 : 2 + rnd(&seed) % 3;

		for (unsigned int j = 0; j < k && n < N; j++, n++) {
			v[n].addr = a;
			v[n].size = rnd(&seed) % 4 ? 16 : 0;
			snprintf(v[n].name, sizeof(v[n].name), "%.*sf%llu",
				 (int)(rnd(&seed) % 3), "__", (unsigned long long)(rnd(&seed) % 1000));
		}
	}
	for (size_t i = 0; f && i < n; i++)
		fprintf(f, "%llx %x %s\n", (unsigned long long)v[i].addr, v[i].size, v[i].name);
	if (!f || fclose(f))
		return !ok(0, "open_memstream");
	f = fmemopen(text, len, "r");
	st = f ? symtab__from_text(f, SYMTAB_PERF_MAP) : NULL;
	if (f)
		fclose(f);
	ok(st != NULL, "a perf map of %zu symbols read", n);
	is_int(symtab__functions(st), N, "every symbol kept");

	memcpy(sorted, v, sizeof(v));
	qsort(sorted, n, sizeof(*sorted), by_addr);	/* each address's names together */
	for (size_t i = 0, j; i < n; i = j) {
		const struct ent *b;
		const char *got;
		uint64_t start = 0, end = 0;

		for (j = i + 1; j < n && sorted[j].addr == sorted[i].addr; j++)
			;
		b = best_of(sorted + i, j - i);
		got = symtab__find_range(st, sorted[i].addr + 1, &start, &end);
		checked++;
		if (!got || strcmp(got, b->name))
			bad_name++;
		if (start != sorted[i].addr)
			bad_range++;
	}
	is_int(bad_name, 0, "the preferred name at each of %zu addresses", checked);
	is_int(bad_range, 0, "each lookup's function starts at its address");
	symtab__delete(st);
	free(text);
	return done_testing();
}
