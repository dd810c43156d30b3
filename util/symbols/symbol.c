#include "util/symbols/symbol.h"

#include <stdlib.h>

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
