/*
 * The site rule: which frame of an allocation stack is its site, past the
 * allocation wrappers. The rule is explained in util/heap/attrib.h.
 */
#include "util/heap/attrib.h"

#include <string.h>

#include "util/heap/alloc-fn.h"
#include "util/symbols/srcpath.h"
#include "util/symbols/symbol.h"

static bool chosen_ok(const struct symbol *s)
{
	return s && s->n_frames >= 1 && s->chosen >= 0 && s->chosen < s->n_frames;
}

/* Own code by its source: a file and a line, not toolchain source. */
static bool own_source(const struct frame *f)
{
	return f->file && f->line > 0 && !srcpath__is_toolchain(f->file);
}

/*
 * A shared library the system installed: its file is right in /lib,
 * /usr/lib, their lib64/lib32 or a multiarch directory of theirs
 * (/usr/lib/x86_64-linux-gnu/libc.so.6), not in an application's own
 * directory under them (/usr/lib/firefox/libxul.so).
 */
static bool system_library(const char *module)
{
	static const char *const dirs[] = { "/lib/", "/lib64/", "/lib32/" };
	const char *p, *slash;

	if (!module || !strstr(module, ".so"))
		return false;
	p = !strncmp(module, "/usr/", 5) ? module + 4 : module;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (strncmp(p, dirs[i], strlen(dirs[i])))
			continue;
		p += strlen(dirs[i]);
		slash = strchr(p, '/');
		if (!slash)
			return true;
		/* a multiarch directory: x86_64-linux-gnu, aarch64-linux-gnu... */
		return !strchr(slash + 1, '/') && memmem(p, slash - p, "-linux-", 7);
	}
	return false;
}

int heap_attrib__own_depth(const struct symbol *s, const struct alloc_fns *fns)
{
	if (!chosen_ok(s) || !s->has_debuginfo || system_library(s->module))
		return -1;
	for (int d = s->chosen; d < s->n_frames; d++) {
		const struct frame *f = &s->frames[d];

		if (own_source(f) && !alloc_fns__match(fns, f->function))
			return d;
	}
	return -1;
}

int heap_attrib__next_own(const struct symbol *const *frames, int n, int frame, int depth,
			  const struct alloc_fns *fns, int *out_depth)
{
	const struct symbol *s = frame >= 0 && frame < n ? frames[frame] : NULL;

	for (int d = depth + 1; s && s->has_debuginfo && !system_library(s->module) &&
			       d < s->n_frames; d++) {
		if (own_source(&s->frames[d]) && !alloc_fns__match(fns, s->frames[d].function)) {
			*out_depth = d;
			return frame;
		}
	}
	for (int i = frame + 1; i < n; i++) {
		int d = heap_attrib__own_depth(frames[i], fns);

		if (d >= 0) {
			*out_depth = d;
			return i;
		}
	}
	return -1;
}

bool heap_attrib__is_user(const struct symbol *s, const struct alloc_fns *fns)
{
	return heap_attrib__own_depth(s, fns) >= 0;
}

bool heap_attrib__has_wrapper(const struct symbol *s, const struct alloc_fns *fns)
{
	if (!chosen_ok(s) || !fns)
		return false;
	for (int d = s->chosen; d < s->n_frames; d++)
		if (alloc_fns__match(fns, s->frames[d].function))
			return true;
	return false;
}

static bool resolves(const struct symbol *s)
{
	return s && s->n_frames >= 1 && (s->frames[0].function || s->frames[0].file);
}

static int site_depth(const struct symbol *s)
{
	return chosen_ok(s) ? s->chosen : 0;
}

int heap_attrib__site(const struct symbol *const *frames, int n, enum heap_attribution mode,
		      const struct alloc_fns *fns, int *depth)
{
	int first = -1, d = -1, wrapper = -1;

	if (depth)
		*depth = n > 0 ? site_depth(frames[0]) : 0;
	if (n <= 0 || mode == ATTR_STACK)
		return 0;
	for (int i = 0; i < n; i++) {
		d = heap_attrib__own_depth(frames[i], fns);
		if (d >= 0) {
			first = i;
			break;
		}
		/* a wrapper of the program: its own code but for its name */
		if (heap_attrib__is_user(frames[i], NULL))
			wrapper = i;
	}
	if (first < 0) {
		/* past the allocation functions by name (alloc::alloc::alloc) first */
		for (int pass = 0; pass < 2; pass++) {
			for (int i = wrapper >= 0 ? wrapper : 0; i < n; i++) {
				if (i != wrapper && (!resolves(frames[i]) ||
				    (!pass && heap_attrib__has_wrapper(frames[i], fns))))
					continue;
				if (depth)
					*depth = i == wrapper ?
						 heap_attrib__own_depth(frames[i], NULL) :
						 site_depth(frames[i]);
				return i;
			}
		}
		return 0;
	}
	if (mode == ATTR_CALLER) {
		for (int i = first + 1; i < n; i++) {
			int cd = heap_attrib__own_depth(frames[i], fns);

			if (cd >= 0) {
				if (depth)
					*depth = cd;
				return i;
			}
		}
	}
	if (depth)
		*depth = d;
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
