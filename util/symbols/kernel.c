#include "util/symbols/kernel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/symbols/symtab.h"

#define KALLSYMS_MODULE	"[kernel.kallsyms]"
#define KERNEL_MODULE	"[kernel]"

struct kernel_syms {
	struct symtab *kallsyms;	/* NULL: not readable */
	FILE *f;			/* opened early, read at the first kernel address */
	bool loaded;
	struct hashmap cache;		/* addr -> struct symbol * */
};

struct kernel_syms *kernel_syms__new(bool load)
{
	struct kernel_syms *k = calloc(1, sizeof(*k));

	/*
	 * Whether /proc/kallsyms shows addresses is decided by the credentials
	 * of whoever opens it: opened now, while rsprof has them.
	 */
	if (k && load)
		k->f = fopen("/proc/kallsyms", "re");
	return k;
}

static struct symbol *lookup(struct kernel_syms *k, uint64_t addr)
{
	struct symbol *s = calloc(1, sizeof(*s));
	const char *name;

	if (!s)
		return NULL;
	s->addr = addr;
	s->n_frames = 1;
	s->frames = calloc(1, sizeof(*s->frames));
	if (!s->frames)
		goto nomem;
	name = symtab__find(k->kallsyms, addr);
	if (!(s->module = strdup(k->kallsyms ? KALLSYMS_MODULE : KERNEL_MODULE)))
		goto nomem;
	if (name && (!(s->mangled = strdup(name)) || !(s->frames[0].function = strdup(name))))
		goto nomem;
	return s;
nomem:
	symbol__delete(s);
	return NULL;
}

const struct symbol *kernel_syms__resolve(struct kernel_syms *k, uint64_t addr)
{
	struct symbol *s;
	uint64_t v;

	if (hashmap__get(&k->cache, addr, &v))
		return (struct symbol *)(uintptr_t)v;
	if (!k->loaded) {
		if (!k->f)
			k->f = fopen("/proc/kallsyms", "re");
		/* zeros for those kptr_restrict hides addresses from: no symbol then */
		k->kallsyms = k->f ? symtab__from_text(k->f, SYMTAB_KALLSYMS) : NULL;
		if (k->f)
			fclose(k->f);
		k->f = NULL;
		k->loaded = true;
	}
	s = lookup(k, addr);
	if (!s)
		return NULL;
	if (hashmap__set(&k->cache, addr, (uint64_t)(uintptr_t)s)) {
		symbol__delete(s);
		return NULL;
	}
	return s;
}

void kernel_syms__delete(struct kernel_syms *k)
{
	if (!k)
		return;
	hashmap__for_each(&k->cache, i)
		symbol__delete((struct symbol *)(uintptr_t)k->cache.vals[i]);
	hashmap__free(&k->cache);
	symtab__delete(k->kallsyms);
	if (k->f)
		fclose(k->f);
	free(k);
}
