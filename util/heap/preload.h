#ifndef RSPROF_UTIL_HEAP_PRELOAD_H
#define RSPROF_UTIL_HEAP_PRELOAD_H

#include <stddef.h>

/*
 * The in-process heap tracker's bytes (preload/, librsprof-heap.so),
 * embedded by util/heap/preload-so.c; util/heap/preload.c writes them into
 * the private directory of a launch.
 */
extern const unsigned char heap_preload_so[], heap_preload_so_end[];

struct heap_region;

/*
 * The tracker's bytes: the build inside rsprof, or RSPROF_HEAP_TRACKER's
 * (a developer's build). *buf: to free. 0 or -errno (printed).
 */
int heap_tracker__bytes(const unsigned char **p, size_t *len, void **buf);
/* A region's header with the geometry every region of a recording has. */
void heap_region__header(struct heap_region *r, unsigned int sample);

#endif
