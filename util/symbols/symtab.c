/*
 * Sorted function symbols of one module, for the resolver's fallback when
 * there is no DWARF (system libraries, stripped programs).
 */
#include "util/symbols/symtab.h"

#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>

struct sym_ent {
	uint64_t addr, size;
	const char *name;
	int rank;		/* lower is preferred among names at one address */
};

struct symtab {
	struct sym_ent *v;
	size_t n;
};

static int sym_rank(const char *name, unsigned char bind)
{
	int u = 0;

	while (name[u] == '_')
		u++;
	return u * 4 + (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2);
}

static int sym_ent__cmp(const void *a, const void *b)
{
	const struct sym_ent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	/* sized before sizeless, then by name: the same choice on every run */
	if ((x->size > 0) != (y->size > 0))
		return (y->size > 0) - (x->size > 0);
	return strcmp(x->name, y->name);
}

struct symtab *symtab__new(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	struct symtab *st;
	size_t k = 0;

	if (n <= 1)
		return NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->v = malloc(n * sizeof(*st->v));
	if (!st->v) {
		free(st);
		return NULL;
	}
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name;
		int type;

		name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		type = GELF_ST_TYPE(sym.st_info);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF || !addr ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		st->v[k++] = (struct sym_ent){ addr, sym.st_size, name,
					       sym_rank(name, GELF_ST_BIND(sym.st_info)) };
	}
	if (!k) {
		symtab__delete(st);
		return NULL;
	}
	st->n = k;
	qsort(st->v, k, sizeof(*st->v), sym_ent__cmp);
	return st;
}

void symtab__delete(struct symtab *st)
{
	if (!st)
		return;
	free(st->v);
	free(st);
}

const char *symtab__find_range(const struct symtab *st, uint64_t addr, uint64_t *start,
			       uint64_t *end)
{
	size_t lo = 0, hi, first;
	uint64_t at, size = 0;

	if (!st)
		return NULL;
	hi = st->n;
	/* the first entry above addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* every name at that address: the first is preferred, the largest size counts */
	at = st->v[lo - 1].addr;
	for (first = lo - 1; first > 0 && st->v[first - 1].addr == at; first--)
		;
	for (hi = first; hi < st->n && st->v[hi].addr == at; hi++)
		if (st->v[hi].size > size)
			size = st->v[hi].size;
	/* a sizeless symbol (assembly) holds up to the next symbol */
	if (size && addr >= at + size)
		return NULL;
	if (start)
		*start = at;
	if (end)
		*end = size ? at + size : hi < st->n ? st->v[hi].addr : addr + 1;
	return st->v[first].name;
}

const char *symtab__find(const struct symtab *st, uint64_t addr)
{
	return symtab__find_range(st, addr, NULL, NULL);
}
