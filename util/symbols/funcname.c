#include "util/symbols/funcname.h"

#include <string.h>

#include "util/symbols/demangle.h"

int funcname__match(const char *name, const char *want, int level)
{
	char buf[1024];
	const char *s;
	size_t ls, lw = strlen(want);

	if (!name)
		return 0;
	s = level == 0 ? name : demangle__short(name, 0, buf, sizeof(buf));
	if (level < 2)
		return !strcmp(s, want);
	ls = strlen(s);
	return ls > lw + 2 && !strcmp(s + ls - lw, want) && s[ls - lw - 1] == ':' &&
	       s[ls - lw - 2] == ':';
}
