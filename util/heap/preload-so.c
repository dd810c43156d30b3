/*
 * The in-process heap tracker (preload/, built as librsprof-heap.so by the
 * Makefile) inside the rsprof binary, as the BPF skeleton is: no runtime
 * files. util/heap/preload.c writes it out at launch.
 */
#include "util/heap/preload.h"

#ifndef RSPROF_PRELOAD_SO
#error "RSPROF_PRELOAD_SO: the path of librsprof-heap.so (set by the Makefile)"
#endif

__asm__(".section .rodata\n"
	".balign 16\n"
	".globl heap_preload_so\n"
	".type heap_preload_so, @object\n"
	"heap_preload_so:\n"
	".incbin \"" RSPROF_PRELOAD_SO "\"\n"
	".globl heap_preload_so_end\n"
	"heap_preload_so_end:\n"
	".previous\n");
