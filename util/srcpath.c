#include "util/srcpath.h"

#include <stdio.h>
#include <string.h>

/* STUB: owned by the symbols work; replace. */
bool srcpath__is_toolchain(const char *file)
{
	return file && (strstr(file, "/rustc/") || strstr(file, "/rustlib/src/") ||
			!strncmp(file, "/usr/include/", 13));
}

char *srcpath__display(const char *file, const char *module, char *buf, size_t len)
{
	const char *base;

	if (file)
		snprintf(buf, len, "%s", file);
	else if (module && (base = strrchr(module, '/')))
		snprintf(buf, len, "[%s]", base + 1);
	else
		snprintf(buf, len, "[unknown]");
	return buf;
}
