/*
 * Sorted function symbols of one module, for the resolver's fallback when
 * there is no DWARF (system libraries, stripped programs).
 */
#include "util/symbols/symtab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "util/symbols/filepages.h"
#include "util/symbols/plt.h"

/* 24 bytes: librustc_driver and libLLVM have 400,000 function symbols */
struct sym_ent {
	uint64_t addr;
	const char *name;
	uint32_t size;		/* clamped: no function is 4 GiB */
	uint32_t rank;		/* lower is preferred among names at one address */
};

struct symtab {
	struct sym_ent *v;
	size_t n;
	char **names;		/* from a text file, PLT stubs: the names we own */
	size_t n_names;
	size_t n_funcs;		/* the file's own function symbols (PLT stubs not counted) */
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
		return x->rank < y->rank ? -1 : 1;
	/* sized before sizeless, then by name: the same choice on every run */
	if ((x->size > 0) != (y->size > 0))
		return (y->size > 0) - (x->size > 0);
	return strcmp(x->name, y->name);
}

/*
 * v sorted as sym_ent__cmp orders it: by address with a radix sort (stable,
 * over the address bits that differ), then each run of one address by the
 * comparator. By hand: qsort() (a callback and a name comparison per
 * step) took ~85 ms of every recording of rustc, librustc_driver's 165,000
 * functions the most of it, this sort 21 ms; libc has no sort of keys.
 */
#define RADIX_BITS	11

static void sym_sort(struct sym_ent *v, size_t n)
{
	struct sym_ent *tmp = n > 64 ? malloc(n * sizeof(*tmp)) : NULL, *src = v, *dst = tmp;
	uint64_t differ = 0;

	if (!tmp) {
		qsort(v, n, sizeof(*v), sym_ent__cmp);
		return;
	}
	for (size_t i = 1; i < n; i++)
		differ |= v[i].addr ^ v[0].addr;
	for (unsigned int shift = 0; shift < 64 && differ >> shift; shift += RADIX_BITS) {
		size_t count[1u << RADIX_BITS] = { 0 }, at = 0;

		for (size_t i = 0; i < n; i++)
			count[(src[i].addr >> shift) & ((1u << RADIX_BITS) - 1)]++;
		for (size_t d = 0; d < (1u << RADIX_BITS); d++) {
			size_t c = count[d];

			count[d] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].addr >> shift) & ((1u << RADIX_BITS) - 1)]++] = src[i];
		src = dst;
		dst = src == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].addr == v[i].addr; j++)
			;
		if (j - i > 1)
			qsort(v + i, j - i, sizeof(*v), sym_ent__cmp);
	}
}

/*
 * Reading and sorting the table touched every page of the names: in
 * librustc_driver that is 23 MB of the file mapped by libelf, resident in
 * our RSS for the rest of the recording although a lookup reads a few
 * names (a later lookup reads its page again).
 */
static void release_pages(Dwfl_Module *mod)
{
	GElf_Addr bias;

	filepages__release_elf(dwfl_module_getelf(mod, &bias));
}

/* The module's PLT stubs ("clock_gettime@plt", util/symbols/plt.h) after st's n entries. */
static int add_plt(struct symtab *st, Dwfl_Module *mod)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	struct plt_sym *p;
	struct sym_ent *v;
	char **names;
	size_t n;
	int err = plt__symbols(elf, bias, &p, &n);

	if (err || !n)
		return err;
	v = realloc(st->v, (st->n + n) * sizeof(*v));
	if (v)
		st->v = v;
	names = v ? realloc(st->names, (st->n_names + n) * sizeof(*names)) : NULL;
	if (names)
		st->names = names;
	for (size_t i = 0; i < n; i++) {
		if (!names) {
			free(p[i].name);
			continue;
		}
		st->names[st->n_names++] = p[i].name;
		st->v[st->n++] = (struct sym_ent){
			.addr = p[i].addr, .name = p[i].name, .size = p[i].size,
			.rank = (uint32_t)sym_rank(p[i].name, STB_GLOBAL),
		};
	}
	free(p);
	return names ? 0 : -ENOMEM;
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
		/* the names read so far: not all 23 MB of them resident at once */
		if (i % 65536 == 0)
			release_pages(mod);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF || !addr ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		st->v[k++] = (struct sym_ent){
			.addr = addr, .name = name,
			.size = sym.st_size > UINT32_MAX ? UINT32_MAX : (uint32_t)sym.st_size,
			.rank = (uint32_t)sym_rank(name, GELF_ST_BIND(sym.st_info)),
		};
	}
	st->n = k;
	st->n_funcs = k;
	if (add_plt(st, mod) || !st->n) {
		symtab__delete(st);
		return NULL;
	}
	k = st->n;
	sym_sort(st->v, k);
	if (k < (size_t)n / 2) {	/* most were not functions: give the room back */
		struct sym_ent *v = realloc(st->v, k * sizeof(*v));

		if (v)
			st->v = v;
	}
	release_pages(mod);
	return st;
}

/* A hex number at *p (no prefix); *p moves past it. */
static bool hex_field(char **p, unsigned long long *v)
{
	char *end;

	*v = strtoull(*p, &end, 16);
	if (end == *p)
		return false;
	*p = end;
	return true;
}

/*
 * One line of a text table into e (name malloc'd); false when it is not a
 * symbol. By hand rather than sscanf: /proc/kallsyms has ~120,000 lines.
 */
static bool text_line(char *line, enum symtab_text kind, struct sym_ent *e)
{
	unsigned long long a, size = 0;
	char *p = line, *name, *end;

	line[strcspn(line, "\n")] = '\0';
	if (!hex_field(&p, &a) || *p != ' ')
		return false;
	p++;
	if (kind == SYMTAB_KALLSYMS) {
		char type = *p;

		if ((type != 't' && type != 'T' && type != 'w' && type != 'W') || p[1] != ' ')
			return false;
		name = p + 2;
		end = strchr(name, '\t');	/* "\t[module]" of a loadable module */
		if (end)
			*end = '\0';
	} else {
		if (!hex_field(&p, &size) || *p != ' ')
			return false;
		name = p + 1;
	}
	if (!a || !*name || !(name = strdup(name)))
		return false;
	*e = (struct sym_ent){
		.addr = a, .name = name,
		.size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
		.rank = (uint32_t)sym_rank(name, STB_GLOBAL),
	};
	return true;
}

struct symtab *symtab__from_text(FILE *f, enum symtab_text kind)
{
	struct symtab *st;
	char *line = NULL;
	size_t cap = 0, alloc = 0;

	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		struct sym_ent e;

		if (!text_line(line, kind, &e))
			continue;
		if (st->n == alloc) {
			size_t na = alloc ? alloc * 2 : 1024;
			struct sym_ent *v = realloc(st->v, na * sizeof(*v));
			char **nn = realloc(st->names, na * sizeof(*nn));

			if (nn)
				st->names = nn;
			if (!v || !nn) {
				if (v)
					st->v = v;
				free((char *)e.name);
				break;
			}
			st->v = v;
			alloc = na;
		}
		st->names[st->n_names++] = (char *)e.name;
		st->v[st->n++] = e;
	}
	free(line);
	if (!st->n) {
		symtab__delete(st);
		return NULL;
	}
	st->n_funcs = st->n;
	sym_sort(st->v, st->n);
	/* kallsyms has no sizes: each function holds up to the next one */
	if (kind == SYMTAB_KALLSYMS)
		for (size_t i = 0; i + 1 < st->n; i++)
			st->v[i].size = st->v[i + 1].addr - st->v[i].addr > UINT32_MAX ?
					UINT32_MAX : (uint32_t)(st->v[i + 1].addr - st->v[i].addr);
	return st;
}

void symtab__delete(struct symtab *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n_names; i++)
		free(st->names[i]);
	free(st->names);
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

size_t symtab__functions(const struct symtab *st)
{
	return st ? st->n_funcs : 0;
}

const char *symtab__find(const struct symtab *st, uint64_t addr)
{
	return symtab__find_range(st, addr, NULL, NULL);
}
