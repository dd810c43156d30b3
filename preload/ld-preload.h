/*
 * LD_PRELOAD values with and without the tracker, for rsprof (the
 * environment of a program it launches) and for the tracker (the
 * environment of programs exec'd from the tree, and of those it leaves).
 * Pure string work into the caller's buffer: no allocation, no lock, so it
 * is safe in a fork child.
 */
#ifndef RSPROF_PRELOAD_LD_PRELOAD_H
#define RSPROF_PRELOAD_LD_PRELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "preload/heap-region.h"

/*
 * "LD_PRELOAD=" and the value v without any tracker (an entry whose file
 * name is HEAP_REGION_SO, whichever rsprof's directory it is in) into buf;
 * false when nothing else is left.
 */
static inline bool ld_preload__strip(const char *v, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "LD_PRELOAD="), kept = 0;

	while (*v) {
		size_t n = strcspn(v, ": ");
		const char *base = v + n;

		while (base > v && base[-1] != '/')
			base--;
		if (n && !(v + n - base == sizeof(HEAP_REGION_SO) - 1 &&
			   !memcmp(base, HEAP_REGION_SO, n - (base - v))) && o + n + 2 < len) {
			if (kept++)
				buf[o++] = ':';
			memcpy(buf + o, v, n);
			o += n;
		}
		v += n;
		v += strspn(v, ": ");
	}
	buf[o] = '\0';
	return kept;
}

#endif
