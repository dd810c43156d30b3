/*
 * Source path rules: which files are toolchain library source, and
 * the short form shown in tables. The rules are written out in srcpath.h.
 */
#include "util/symbols/srcpath.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * A distribution's rustc source tree: "/usr/src/rustc-1.63.0/library/..."
 * (Debian), ".../rustc-1.79.0-src/library/..." (Fedora), and the crates it
 * vendors for std ("/usr/src/rustc-1.63.0/vendor/hashbrown/..."). Returns
 * what follows "library/" or "vendor/", or NULL.
 */
static const char *rustc_src_tree(const char *file)
{
	const char *p = file;

	while ((p = strstr(p, "/rustc-"))) {
		const char *slash = strchr(p + 1, '/');

		if (!slash)
			return NULL;
		if (starts_with(slash, "/library/"))
			return slash + strlen("/library/");
		if (starts_with(slash, "/vendor/"))
			return slash + strlen("/vendor/");
		p = slash;
	}
	return NULL;
}

bool srcpath__is_toolchain(const char *file)
{
	static const char *const prefixes[] = {
		"/rustc/", "/rust/deps/", "/usr/include/", "/usr/local/include/",
		"/usr/lib/gcc/", "/usr/lib/llvm-",
	};

	if (!file)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (starts_with(file, prefixes[i]))
			return true;
	return strstr(file, "/lib/rustlib/src/rust/") != NULL || rustc_src_tree(file) != NULL;
}

/* After "<dir>/<one component>/" following marker, or NULL. */
static const char *after_component(const char *file, const char *marker)
{
	const char *p = strstr(file, marker), *slash;

	if (!p)
		return NULL;
	p += strlen(marker);
	slash = strchr(p, '/');
	return slash && slash[1] ? slash + 1 : NULL;
}

/* The parent directory of the last "src" component, or NULL. */
static const char *from_last_src(const char *file)
{
	const char *last = NULL, *p = file;

	while ((p = strstr(p, "/src/"))) {
		last = p;
		p++;
	}
	if (!last || last == file)
		return NULL;
	/* back to the start of the component before "/src/" */
	p = last - 1;
	while (p > file && p[-1] != '/')
		p--;
	return p;
}

static const char *basename_with_parent(const char *file)
{
	const char *p = strrchr(file, '/');

	if (!p || p == file)
		return p ? p + 1 : file;
	for (p--; p > file && p[-1] != '/'; p--)
		;
	return p;
}

/*
 * The working directory, read once: rsprof never changes it, and a getcwd()
 * per path was a system call per site shown (diff shows thousands).
 */
static char cwd[PATH_MAX];
static size_t cwd_len;		/* 0: unknown, or / */
static pthread_once_t cwd_once = PTHREAD_ONCE_INIT;

static void cwd_read(void)
{
	if (getcwd(cwd, sizeof(cwd)) && strcmp(cwd, "/"))
		cwd_len = strlen(cwd);
}

static const char *under_cwd(const char *file)
{
	size_t n;

	pthread_once(&cwd_once, cwd_read);
	n = cwd_len;
	if (!n || strncmp(file, cwd, n) || file[n] != '/' || !file[n + 1])
		return NULL;
	return file + n + 1;
}

static const char *display_file(const char *file)
{
	const char *p;

	if (srcpath__is_toolchain(file)) {
		if ((p = rustc_src_tree(file)))
			return p;
		if ((p = strstr(file, "/library/")))
			return p + strlen("/library/");
		if (starts_with(file, "/rust/deps/"))
			return file + strlen("/rust/deps/");
	}
	if ((p = after_component(file, "/.cargo/registry/src/")))
		return p;
	if ((p = strstr(file, "/.cargo/git/checkouts/")) &&
	    (p = after_component(p, "/.cargo/git/checkouts/")) && (p = strchr(p, '/')))
		return p + 1;
	if (file[0] != '/') {
		while (starts_with(file, "./"))
			file += 2;
		return file;
	}
	if ((p = under_cwd(file)))
		return p;
	if ((p = from_last_src(file)))
		return p;
	return basename_with_parent(file);
}

char *srcpath__display(const char *file, const char *module, char *buf, size_t len)
{
	const char *base;

	if (!len)
		return buf;
	if (file && *file) {
		snprintf(buf, len, "%s", display_file(file));
	} else if (module && *module) {
		base = strrchr(module, '/');
		base = base ? base + 1 : module;
		if (base[0] == '[')
			snprintf(buf, len, "%s", base);
		else
			snprintf(buf, len, "[%s]", base);
	} else {
		snprintf(buf, len, "[unknown]");
	}
	return buf;
}
