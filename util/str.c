#include "util/str.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

char *str__dup(const char *s, int *err)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*err = -ENOMEM;
	return d;
}
