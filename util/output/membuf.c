#include "util/output/membuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int membuf__open(struct membuf *b)
{
	memset(b, 0, sizeof(*b));
	b->f = open_memstream(&b->mem, &b->len);
	return b->f ? 0 : -ENOMEM;
}

int membuf__flush(struct membuf *b, int err, FILE *to)
{
	if (b->f && fclose(b->f) && !err)
		err = -ENOMEM;
	b->f = NULL;
	if (!err && b->len && fwrite(b->mem, 1, b->len, to) != b->len)
		err = -EIO;
	free(b->mem);
	b->mem = NULL;
	b->len = 0;
	return err;
}
