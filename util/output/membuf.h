#ifndef RSPROF_UTIL_OUTPUT_MEMBUF_H
#define RSPROF_UTIL_OUTPUT_MEMBUF_H

#include <stddef.h>
#include <stdio.h>

/*
 * A document held in memory until it is complete, then written in one
 * piece: `report --format folded`, `diff`, `timeline` and `query` give
 * stdout the whole output or nothing, never half a table before an error.
 *
 *	struct membuf b;
 *	err = membuf__open(&b);		(write to b.f)
 *	...
 *	err = membuf__flush(&b, err, stdout);
 */
struct membuf {
	FILE *f;	/* where the document is written */
	char *mem;
	size_t len;
};

/* 0 or -ENOMEM. */
int membuf__open(struct membuf *b);
/*
 * Close b->f; when err is 0 write the document to `to`. Returns err, else
 * -ENOMEM when the memory stream failed, -EIO when writing to `to` failed.
 * Frees the memory either way.
 */
int membuf__flush(struct membuf *b, int err, FILE *to);

#endif
