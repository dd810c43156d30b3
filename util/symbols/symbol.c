#include "util/symbols/symbol.h"

#include <stdlib.h>
#include <string.h>

struct symbol *symbol__copy(const struct symbol *s, uint64_t addr)
{
	struct symbol *d = calloc(1, sizeof(*d));
	bool bad = !d;

	if (bad)
		return NULL;
	d->addr = addr;
	d->chosen = s->chosen;
	d->decl_line = s->decl_line;
	d->has_debuginfo = s->has_debuginfo;
	d->n_frames = s->n_frames;
	d->frames = calloc(s->n_frames > 0 ? s->n_frames : 1, sizeof(*d->frames));
	bad = !d->frames;
	if (!bad && s->module)
		bad = !(d->module = strdup(s->module));
	if (!bad && s->mangled)
		bad = !(d->mangled = strdup(s->mangled));
	for (int i = 0; !bad && i < s->n_frames; i++) {
		d->frames[i].line = s->frames[i].line;
		if (s->frames[i].file)
			bad = !(d->frames[i].file = strdup(s->frames[i].file));
		if (!bad && s->frames[i].function)
			bad = !(d->frames[i].function = strdup(s->frames[i].function));
	}
	if (bad) {
		symbol__delete(d);
		return NULL;
	}
	return d;
}

void symbol__delete(struct symbol *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n_frames; i++) {
		free(s->frames[i].file);
		free(s->frames[i].function);
	}
	free(s->frames);
	free(s->module);
	free(s->mangled);
	free(s);
}
