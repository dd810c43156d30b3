/*
 * Demangling through libiberty (Rust legacy and v0, C++), and the short
 * form of a demangled name for tables.
 */
#include "util/symbols/demangle.h"
#include "util/output/format.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

/* Rust's legacy mangling: _ZN ... 17h<16 hex digits>E */
static bool rust_legacy(const char *m)
{
	size_t n = strlen(m);

	if (strncmp(m, "_ZN", 3) || n < 24 || m[n - 1] != 'E' || strncmp(m + n - 20, "17h", 3))
		return false;
	for (size_t i = n - 17; i < n - 1; i++)
		if (!isxdigit((unsigned char)m[i]))
			return false;
	return true;
}

/* s[i..j) is a list of generic parameter names ("T", "T,A", "K, V"), not types. */
static bool param_names(const char *s, size_t i, size_t j)
{
	while (i < j) {
		size_t k = i;

		while (k < j && s[k] == ' ')
			k++;
		if (k >= j || !isupper((unsigned char)s[k]))
			return false;
		i = k + 1;
		if (i < j && isupper((unsigned char)s[i]))
			i++;	/* two letters at most: "T", "A", "Tz" is a type */
		if (i < j && s[i] != ',')
			return false;
		if (i < j)
			i++;
	}
	return true;
}

/* Index just past the '>' matching the '<' at s[i]; strlen(s) if none. */
static size_t skip_angle(const char *s, size_t i);

/*
 * One spelling for one Rust function, whichever mangling named it: the
 * program's crate is mangled the legacy way, the standard library (1.95)
 * v0, and a generic function of std exists in both (its copy in std, the
 * crate's own instance), as "alloc::raw_vec::RawVecInner<A>::finish_grow"
 * (legacy: the impl's parameter names) and
 * "<alloc::raw_vec::RawVecInner>::finish_grow" (v0: an inherent impl as a
 * qualified path). Both become "alloc::raw_vec::RawVecInner::finish_grow":
 * legacy names lose lists of parameter names (not types: drop_in_place<
 * std::env::Args> keeps its argument), v0 names the brackets of an
 * inherent impl's path (not of a trait's, "<Vec<u8> as Write>::write",
 * nor of a primitive's, "<u64>::fmt"). In place.
 */
static void rust_canonical(char *s, bool legacy)
{
	size_t n = strlen(s);

	if (!legacy && s[0] == '<' && (isalpha((unsigned char)s[1]) || s[1] == '_')) {
		size_t end = skip_angle(s, 0);
		bool path = false, trait = false;
		int depth = 0;

		for (size_t i = 1; i + 1 < end; i++) {
			depth += s[i] == '<' ? 1 : s[i] == '>' ? -1 : 0;
			if (!depth && !strncmp(s + i, "::", 2))
				path = true;
			if (!depth && !strncmp(s + i, " as ", 4))
				trait = true;
		}
		if (path && !trait && end <= n && s[end - 1] == '>' && !strncmp(s + end, "::", 2)) {
			memmove(s + end - 1, s + end, n - end + 1);	/* the '>' */
			memmove(s, s + 1, n - 1);			/* the '<' */
			n -= 2;
		}
	}
	if (!legacy)
		return;
	for (size_t i = 1; i < n; i++) {
		size_t end;

		if (s[i] != '<' || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_'))
			continue;
		end = skip_angle(s, i);
		if (end > n || s[end - 1] != '>' || !param_names(s, i + 1, end - 1))
			continue;
		memmove(s + i, s + end, n - end + 1);
		n -= end - i;
	}
}

char *demangle(const char *name)
{
	char *d;

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
	name = name[1] == '_' ? name + 1 : name;
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (d && (!strncmp(name, "_R", 2) || rust_legacy(name)))
		rust_canonical(d, rust_legacy(name));
	return d;
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
	const char *ell = format__ellipsis(NULL);
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
