/*
 * Folded stacks, merged by their text (see folded.h).
 */
#include "util/output/folded.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/db/read/query.h"
#include "util/hashmap.h"
#include "util/output/escape.h"
#include "util/saturate.h"
#include "util/symbols/symbol.h"

struct folded_line {
	char *text;
	int64_t value;
};

struct folded {
	struct folded_line *v;
	size_t n, cap;
	struct hashmap index;	/* hash of text -> index in v */
};

struct folded *folded__new(void)
{
	return calloc(1, sizeof(struct folded));
}

void folded__delete(struct folded *fo)
{
	if (!fo)
		return;
	for (size_t i = 0; i < fo->n; i++)
		free(fo->v[i].text);
	free(fo->v);
	hashmap__free(&fo->index);
	free(fo);
}

/* The stack's text into a memory stream: outermost first, inline chains expanded. */
static char *stack_text(const struct prof_stack *s)
{
	char *text = NULL;
	size_t len = 0;
	bool first = true;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	for (int i = s->depth - 1; i >= 0; i--) {
		for (int k = s->frames[i].n_lines - 1; k >= 0; k--) {
			char buf[256], esc[4096];

			if (!first)
				fputc(';', f);
			first = false;
			/* a text format: escaped (util/output/escape.h); ';' separates frames */
			escape__str(prof_frame__name(&s->frames[i], k, buf, sizeof(buf)), esc, sizeof(esc));
			for (char *c = esc; *c; c++)
				fputc(*c == ';' ? ',' : *c, f);
		}
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

static bool line_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct folded *fo = ctx;

	return !strcmp(fo->v[val].text, key);
}

int folded__add(struct folded *fo, const struct prof_stack *s)
{
	char *text;
	uint64_t idx;
	bool fresh;
	int err;

	if (s->value <= 0)	/* a heap stack that only allocated in the window */
		return 0;
	text = stack_text(s);
	if (!text)
		return -ENOMEM;
	if (ALLOC_GROW(fo->v, fo->n + 1, fo->cap, 256)) {
		free(text);
		return -ENOMEM;
	}
	idx = fo->n;
	err = hashmap__intern(&fo->index, hashmap__hash_str(text), line_eq, text, fo, &idx,
			      &fresh);
	if (err) {
		free(text);
		return err;
	}
	if (fresh) {
		fo->v[fo->n++] = (struct folded_line){ .text = text, .value = s->value };
	} else {
		fo->v[idx].value = sat__add(fo->v[idx].value, s->value);
		free(text);
	}
	return 0;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text,
		      ((const struct folded_line *)b)->text);
}

int folded__write(struct folded *fo, FILE *f)
{
	/* the index is of no use once sorted */
	hashmap__free(&fo->index);
	if (fo->n)
		qsort(fo->v, fo->n, sizeof(*fo->v), line_cmp);
	for (size_t i = 0; i < fo->n; i++)
		fprintf(f, "%s %lld\n", fo->v[i].text, (long long)fo->v[i].value);
	return ferror(f) ? -EIO : 0;
}
