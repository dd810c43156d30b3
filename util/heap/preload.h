#ifndef RSPROF_UTIL_HEAP_PRELOAD_H
#define RSPROF_UTIL_HEAP_PRELOAD_H

/*
 * The in-process heap tracker's bytes (preload/, librsprof-heap.so),
 * embedded by util/heap/preload-so.c; util/heap/preload.c writes them into
 * the private directory of a launch.
 */
extern const unsigned char heap_preload_so[], heap_preload_so_end[];

#endif
