#include "util/str.h"

#include <errno.h>
#include <stdlib.h>

#include "tap.h"

int main(void)
{
	int err = 0;
	char *s = str__dup("cache.rs", &err);

	is_str(s, "cache.rs", "a copy");
	ok(s && s != (char *)"cache.rs", "a new string");
	is_int(err, 0, "no error");
	ok(str__dup(NULL, &err) == NULL && err == 0, "NULL gives NULL and is no error");
	free(s);
	return done_testing();
}
