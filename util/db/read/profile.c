#include "util/db/read/profile.h"

#include <stdlib.h>

#include "util/db/db.h"
#include "util/db/naming.h"

int profile__open(const char *path, struct db **out)
{
	char *newest = NULL;
	int err;

	*out = NULL;
	if (!path) {
		err = naming__newest(".", &newest);
		if (err)
			return err;
		path = newest;
	}
	err = db__open(path, out);
	free(newest);
	return err;
}
