#include "util/demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* STUB: owned by the symbols work; replace. */
char *demangle(const char *name)
{
	return NULL;
}

char *demangle__short(const char *demangled, size_t width, char *buf, size_t len)
{
	snprintf(buf, len, "%s", demangled ? demangled : "[unknown]");
	return buf;
}
