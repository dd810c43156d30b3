#ifndef RSPROF_UTIL_HEAP_PRELOAD_H
#define RSPROF_UTIL_HEAP_PRELOAD_H

#include <stddef.h>
#include <stdint.h>

/*
 * The in-process heap tracker's bytes (preload/, librsprof-heap.so),
 * embedded by util/heap/preload-so.c; util/heap/launch.c writes them into
 * the private directory of a launch, util/heap/inject.c into a memfd of a
 * running process.
 */
extern const unsigned char heap_preload_so[], heap_preload_so_end[];

struct heap_region;

/*
 * The tracker's bytes: the build inside rsprof, or RSPROF_HEAP_TRACKER's
 * (a developer's build). *buf: to free. 0 or -errno (printed).
 * (util/heap/launch.c)
 */
int heap_tracker__bytes(const unsigned char **p, size_t *len, void **buf);
/* A region's header with the geometry every region of a recording has:
 * one allocation in sample tracked, or by bytes, one every sample_bytes on
 * average (0: off; sample_every is 1 then). (util/heap/preload.c) */
void heap_region__header(struct heap_region *r, unsigned int sample, uint64_t sample_bytes);

#endif
