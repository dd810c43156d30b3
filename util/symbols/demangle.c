/*
 * Demangling through libiberty (Rust legacy and v0, C++), and the short
 * form of a demangled name for tables (SPEC §4).
 */
#include "util/symbols/demangle.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

char *demangle(const char *name)
{
	if (!name || !*name)
		return NULL;
	/* Only names that look mangled; libiberty would take "main" as is. */
	if (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2) && strncmp(name, "__Z", 3))
		return NULL;
	/*
	 * DMGL_AUTO tries Rust (legacy _ZN...17h<hash>E and v0 _R...) first,
	 * then the C++ ABI. Without DMGL_VERBOSE libiberty leaves out the
	 * legacy hash and the v0 crate disambiguators.
	 */
	return cplus_demangle(name[1] == '_' ? name + 1 : name,
			      DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

static bool is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '}' || c == ']';
}

struct sbuf {
	char *s;
	size_t n, cap;
};

static void sb_putn(struct sbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n && b->n + 1 < b->cap; i++)
		b->s[b->n++] = s[i];
	b->s[b->n] = '\0';
}

static bool ends_with(const struct sbuf *b, const char *suffix)
{
	size_t n = strlen(suffix);

	return b->n >= n && !memcmp(b->s + b->n - n, suffix, n);
}

/* Index just past the '>' matching the '<' at s[i]; strlen(s) if none. */
static size_t skip_angle(const char *s, size_t i)
{
	int depth = 0;

	for (; s[i]; i++) {
		if (s[i] == '<') {
			depth++;
		} else if (s[i] == '>' && !(i > 0 && s[i - 1] == '-')) {
			if (--depth == 0)
				return i + 1;
		}
	}
	return i;
}

/* Is s[i..] a legacy Rust hash "::h" + 16 hex digits at the end? */
static bool is_legacy_hash(const char *s, size_t i)
{
	if (strncmp(s + i, "::h", 3))
		return false;
	for (int k = 0; k < 16; k++)
		if (!isxdigit((unsigned char)s[i + 3 + k]))
			return false;
	return s[i + 19] == '\0';
}

/*
 * Generic arguments become "<..>" (after a name: Vec<T> or a turbofish
 * ::<T>); a qualified path "<X as Trait>" is kept, with its own generics
 * shortened. The C++ parameter list at the end is dropped.
 */
static void shorten(const char *s, struct sbuf *b, const char *ell)
{
	size_t i = 0, n = strlen(s);

	while (i < n) {
		char c = s[i];

		if (c == ':' && is_legacy_hash(s, i))
			break;
		/* legacy Rust's "core::num::<impl u64>::f" is a path, not generics */
		if (c == '<' && strncmp(s + i, "<impl ", 6) &&
		    !ends_with(b, "operator") && !ends_with(b, "operator<") &&
		    (ends_with(b, "::") || (b->n && is_ident(b->s[b->n - 1])))) {
			sb_putn(b, "<", 1);
			sb_putn(b, ell, strlen(ell));
			sb_putn(b, ">", 1);
			i = skip_angle(s, i);
			continue;
		}
		if (c == '(' && b->n && is_ident(b->s[b->n - 1]) && !ends_with(b, "operator")) {
			/* C++ parameters: "f(int, char*)" or "f() const" */
			break;
		}
		sb_putn(b, &s[i], 1);
		i++;
	}
}

/* Columns of a UTF-8 string: continuation bytes take none. */
static size_t cols(const char *s)
{
	size_t c = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			c++;
	return c;
}

char *demangle__short(const char *demangled, size_t width, char *buf, size_t len)
{
	/* "…" on a UTF-8 locale, ".." otherwise (the C locale of a pipe). */
	const char *ell = MB_CUR_MAX > 1 ? "\u2026" : "..";
	size_t ell_cols = cols(ell), total;
	struct sbuf b;
	char *tmp;
	const char *p, *cut = NULL;

	if (!len)
		return buf;
	if (!demangled || !*demangled) {
		snprintf(buf, len, "[unknown]");
		return buf;
	}
	b.cap = strlen(demangled) * 2 + 16;
	b.s = tmp = malloc(b.cap);
	if (!tmp) {
		snprintf(buf, len, "%s", demangled);
		return buf;
	}
	b.n = 0;
	b.s[0] = '\0';
	shorten(demangled, &b, ell);

	total = cols(tmp);
	if (!width || total <= width) {
		snprintf(buf, len, "%s", tmp);
		free(tmp);
		return buf;
	}
	/* Cut from the left: the longest suffix starting at "::" that fits. */
	for (p = tmp; (p = strstr(p, "::")); p += 2) {
		if (cols(p) + ell_cols <= width) {
			cut = p;
			break;
		}
	}
	if (!cut) {
		size_t keep = width > ell_cols ? width - ell_cols : 0, c = total;

		for (cut = tmp; *cut && c > keep; cut++)
			if (((unsigned char)*cut & 0xc0) != 0x80)
				c--;
		while (((unsigned char)*cut & 0xc0) == 0x80)
			cut++;
	}
	if (width <= ell_cols)
		snprintf(buf, len, "%s", cut);
	else
		snprintf(buf, len, "%s%s", ell, cut);
	free(tmp);
	return buf;
}
