/*
 * Styled lines: text made safe for a terminal once, printed or paged.
 */
#include "util/output/styled.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/array.h"
#include "util/output/escape.h"

/*
 * Make s safe to show: tabs to the next multiple of 8 columns (source
 * lines), then the one terminal escaper (util/output/escape.h) for control
 * characters, C1 controls, bidi overrides and bytes that are not UTF-8.
 */
static char *text_safe(const char *s)
{
	size_t n = strlen(s), cap = n + 1, len = 0;
	char *out = NULL, *esc;
	int col = 0;

	for (const char *p = s; *p; p++)
		if (*p == '\t')
			cap += 7;
	out = malloc(cap);
	if (!out)
		return NULL;
	for (const char *p = s; *p; p++) {
		if (*p == '\t') {
			do
				out[len++] = ' ';
			while (++col % 8);
			continue;
		}
		out[len++] = *p;
		if (((unsigned char)*p & 0xc0) != 0x80)
			col++;
	}
	out[len] = '\0';
	esc = escape__dup(out);
	free(out);
	return esc;
}

int styled__vaddf(struct styled_text *t, enum text_style st, const char *fmt, va_list ap)
{
	char *raw = NULL, *safe;

	if (ALLOC_GROW(t->v, t->n + 1, t->cap, 64))
		return -ENOMEM;
	if (vasprintf(&raw, fmt, ap) < 0)
		return -ENOMEM;
	safe = text_safe(raw);
	free(raw);
	if (!safe)
		return -ENOMEM;
	t->v[t->n].s = safe;
	t->v[t->n].st = st;
	t->n++;
	return 0;
}

int styled__addf(struct styled_text *t, enum text_style st, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = styled__vaddf(t, st, fmt, ap);
	va_end(ap);
	return err;
}

void styled__free(struct styled_text *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->v[i].s);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

const char *styled__sgr(enum text_style st)
{
	switch (st) {
	case TS_HEAD:
		return "\033[1m";
	case TS_HOT:
		return "\033[1;31m";
	case TS_WARM:
		return "\033[32m";
	case TS_DIM:
		return "\033[2m";
	case TS_SOURCE:
		return "\033[36m";
	default:
		return NULL;
	}
}

int styled__print(const struct styled_text *t, FILE *f, bool color)
{
	for (int i = 0; i < t->n; i++) {
		const char *on = color ? styled__sgr(t->v[i].st) : NULL;

		if (on)
			fprintf(f, "%s%s\033[m\n", on, t->v[i].s);
		else
			fprintf(f, "%s\n", t->v[i].s);
	}
	return ferror(f) ? -EIO : 0;
}
