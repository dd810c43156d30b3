/*
 * Allocation wrappers: the built-in table and the user's patterns
 * (util/heap/alloc-fn.h). The rule that uses them is util/heap/attrib.c.
 */
#include "util/heap/alloc-fn.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

/*
 * Well-known allocation wrappers, as glob patterns on the demangled name.
 * A function listed here is never an allocation's site: the site is its
 * caller (or the caller's caller, while they are wrappers too). Only
 * frames next to the allocator are passed over, as massif does: a listed
 * name further out in a stack, past the program's own site, changes
 * nothing. So a pattern may be broad, but it must not name a function
 * that allocates for itself (PyUnicode_New, sdsnewlen): that one is the
 * line the user wants.
 *
 * To add a wrapper: one line in its family below, the project in the
 * comment; check the pattern matches no function that is a real site
 * (`rsprof query FILE "SELECT DISTINCT function FROM symbols"` on a
 * profile of the program shows the names as rsprof sees them); add it to
 * the list in Documentation/rsprof-report.txt (--alloc-fn).
 *
 * Rust's standard library plumbing (RawVec growth, finish_grow,
 * exchange_malloc, the __rust_alloc shims) is also passed over by its
 * source path (srcpath__is_toolchain): the names here catch it where the
 * paths do not say so.
 */
static const char *const builtin_fns[] = {
	/* Redis / Valkey (src/zmalloc.c) */
	"zmalloc*", "ztrymalloc*", "zcalloc*", "ztrycalloc*", "zrealloc*", "ztryrealloc*",
	"zstrdup",
	/* CPython (Objects/obmalloc.c: the PyMem and PyObject allocator families,
	 * the debug hooks of a --with-pydebug build, pymalloc) */
	"_PyMem_*", "PyMem_*", "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc",
	"_PyObject_*", "pymalloc_*",
	/* GLib */
	"g_malloc*", "g_try_malloc*", "g_realloc*", "g_try_realloc*", "g_new*",
	"g_slice_alloc*", "g_strdup", "g_strndup", "g_memdup*",
	/* xmalloc & co. (gnulib, GCC's libiberty, git, many others) */
	"xmalloc", "xcalloc", "xrealloc", "xzalloc", "xstrdup", "xstrndup",
	/* libc's allocating string copies (with libc debug info) */
	"strdup", "strndup", "__strdup", "__strndup",
	/* C++: every operator new and new[] (sized, aligned, nothrow) */
	"operator new*",
	/* Rust: the allocator shims and alloc's plumbing (RawVec growth) */
	"__rust_*", "__rdl_*", "__rg_*", "__rustc::*", "alloc::*", "<alloc::*", "*RawVec*",
	/* a #[global_allocator]'s methods, inlined into every caller (their
	 * calls to mimalloc or jemalloc are what the tracker sees) */
	"<* as core::alloc::global::GlobalAlloc>::*",
};

#define N_BUILTIN (sizeof(builtin_fns) / sizeof(builtin_fns[0]))

struct alloc_fns {
	bool builtins;
	char **user;
	size_t n_user;
	/*
	 * A memo of the answers by name: a reader asks about the same few
	 * thousand names for every stack of a profile, and ~50 fnmatch()
	 * calls a name add up. Logically const (alloc_fns__match takes a
	 * const list); emptied when a pattern is added.
	 */
	struct hashmap memo;		/* name hash -> index in names */
	char **names;
	bool *answers;
	size_t n_names, cap_names;
};

struct alloc_fns *alloc_fns__new(bool builtins)
{
	struct alloc_fns *a = calloc(1, sizeof(*a));

	if (a)
		a->builtins = builtins;
	return a;
}

static void memo_clear(struct alloc_fns *a)
{
	for (size_t i = 0; i < a->n_names; i++)
		free(a->names[i]);
	a->n_names = 0;
	hashmap__clear(&a->memo);
}

void alloc_fns__delete(struct alloc_fns *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_user; i++)
		free(a->user[i]);
	free(a->user);
	memo_clear(a);
	hashmap__free(&a->memo);
	free(a->names);
	free(a->answers);
	free(a);
}

static int add_n(struct alloc_fns *a, const char *p, size_t len)
{
	char **v, *s;

	while (len && (*p == ' ' || *p == '\t')) {
		p++;
		len--;
	}
	while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r'))
		len--;
	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < a->n_user; i++)
		if (strlen(a->user[i]) == len && !memcmp(a->user[i], p, len))
			return 0;
	s = strndup(p, len);
	v = s ? realloc(a->user, (a->n_user + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(s);
		return -ENOMEM;
	}
	a->user = v;
	a->user[a->n_user++] = s;
	memo_clear(a);
	return 0;
}

int alloc_fns__add(struct alloc_fns *a, const char *pattern)
{
	return pattern ? add_n(a, pattern, strlen(pattern)) : -EINVAL;
}

int alloc_fns__add_list(struct alloc_fns *a, const char *list)
{
	while (list && *list) {
		const char *nl = strchr(list, '\n');
		size_t len = nl ? (size_t)(nl - list) : strlen(list);
		int err = add_n(a, list, len);

		if (err && err != -EINVAL)
			return err;
		list += len + (nl != NULL);
	}
	return 0;
}

char *alloc_fns__user_list(const struct alloc_fns *a, int *err)
{
	size_t len = 0;
	char *s, *p;

	if (!a || !a->n_user)
		return NULL;
	for (size_t i = 0; i < a->n_user; i++)
		len += strlen(a->user[i]) + 1;
	s = malloc(len);
	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	p = s;
	for (size_t i = 0; i < a->n_user; i++) {
		size_t l = strlen(a->user[i]);

		memcpy(p, a->user[i], l);
		p += l;
		*p++ = i + 1 < a->n_user ? '\n' : '\0';
	}
	return s;
}

size_t alloc_fns__n_user(const struct alloc_fns *a)
{
	return a ? a->n_user : 0;
}

/*
 * A C++ name carries its parameters ("xmalloc(unsigned long)"): a pattern
 * also matches the name without them, so "xmalloc" names the C++ one too.
 */
static bool match_one(const char *pat, const char *fn, const char *bare)
{
	size_t lit = strcspn(pat, "*?[\\");

	/* the pattern's literal head rules most names out without fnmatch(),
	 * which converts both strings to wide characters in a UTF-8 locale
	 * (bare is a head of fn: it fails where fn does) */
	if (lit && strncmp(pat, fn, lit))
		return false;
	return !fnmatch(pat, fn, 0) || (bare && !fnmatch(pat, bare, 0));
}

static bool name_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct alloc_fns *a = ctx;

	return !strcmp(a->names[val], key);
}

static bool match_all(const struct alloc_fns *a, const char *function)
{
	const char *paren;
	char buf[256], *bare = NULL;
	bool hit = false;

	paren = strchr(function, '(');
	if (paren && paren > function && (size_t)(paren - function) < sizeof(buf)) {
		memcpy(buf, function, paren - function);
		buf[paren - function] = '\0';
		bare = buf;
	}
	for (size_t i = 0; !hit && a->builtins && i < N_BUILTIN; i++)
		hit = match_one(builtin_fns[i], function, bare);
	for (size_t i = 0; !hit && i < a->n_user; i++)
		hit = match_one(a->user[i], function, bare);
	return hit;
}

bool alloc_fns__match(const struct alloc_fns *ca, const char *function)
{
	struct alloc_fns *a = (struct alloc_fns *)ca;	/* the memo only */
	uint64_t idx;
	bool fresh;

	if (!a || !function || !*function)
		return false;
	if (a->n_names == a->cap_names) {
		size_t cap = a->cap_names ? 2 * a->cap_names : 256;
		char **n = realloc(a->names, cap * sizeof(*n));
		bool *b = n ? realloc(a->answers, cap * sizeof(*b)) : NULL;

		if (n)
			a->names = n;
		if (!b)
			return match_all(a, function);	/* no memory for the memo */
		a->answers = b;
		a->cap_names = cap;
	}
	idx = a->n_names;
	if (hashmap__intern(&a->memo, hashmap__hash_str(function), name_eq, function, a, &idx,
			    &fresh))
		return match_all(a, function);
	if (fresh) {
		a->names[idx] = strdup(function);
		if (!a->names[idx]) {
			hashmap__clear(&a->memo);	/* forget it all, keep the answer right */
			memo_clear(a);
			return match_all(a, function);
		}
		a->answers[idx] = match_all(a, function);
		a->n_names++;
	}
	return a->answers[idx];
}

const char *alloc_fns__builtin(size_t i)
{
	return i < N_BUILTIN ? builtin_fns[i] : NULL;
}
