/*
 * The first-user-frame rule: which frame of an allocation stack is its site.
 * The rule is explained in util/heap/attrib.h.
 */
#include "util/heap/attrib.h"

#include <string.h>

#include "util/symbols/srcpath.h"
#include "util/symbols/symbol.h"

bool heap_attrib__is_user(const struct symbol *s)
{
	const struct frame *f;

	if (!s || !s->has_debuginfo || s->n_frames < 1 || s->chosen < 0 ||
	    s->chosen >= s->n_frames)
		return false;
	f = symbol__frame(s);
	return f->file && f->line > 0 && !srcpath__is_toolchain(f->file);
}

static bool resolves(const struct symbol *s)
{
	return s && s->n_frames >= 1 && (s->frames[0].function || s->frames[0].file);
}

int heap_attrib__site(const struct symbol *const *frames, int n, enum heap_attribution mode)
{
	int first = -1;

	if (n <= 0)
		return 0;
	if (mode == ATTR_STACK)
		return 0;
	for (int i = 0; i < n; i++) {
		if (heap_attrib__is_user(frames[i])) {
			first = i;
			break;
		}
	}
	if (first < 0) {
		for (int i = 0; i < n; i++)
			if (resolves(frames[i]))
				return i;
		return 0;
	}
	if (mode == ATTR_CALLER) {
		for (int i = first + 1; i < n; i++)
			if (heap_attrib__is_user(frames[i]))
				return i;
	}
	return first;
}

static const char *const names[] = {
	[ATTR_FIRST_USER] = "first-user",
	[ATTR_CALLER] = "caller",
	[ATTR_STACK] = "stack",
};

int heap_attrib__parse(const char *name)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (name && !strcmp(name, names[i]))
			return (int)i;
	return -1;
}

const char *heap_attrib__name(enum heap_attribution mode)
{
	return (unsigned int)mode < sizeof(names) / sizeof(names[0]) ? names[mode] : "?";
}
