#ifndef RSPROF_UTIL_HEAP_INJECT_H
#define RSPROF_UTIL_HEAP_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/heap/heap.h"

/*
 * The in-process heap tracker put into a running process (record -p):
 * util/heap/inject.c. The region it counts into is then read as a
 * launched program's is (util/heap/preload.c).
 */
struct heap_inject;
struct heap_region;

/*
 * Inject the tracker into pid, counting into a new region (sample: one
 * allocation in N; sample_bytes: the mean bytes between two allocations
 * tracked, 0: off; history: with the allocation history's rings).
 * want HEAP_BACKEND_AUTO: where it cannot be done or is refused, *out is
 * NULL and *why says why in one line with what would allow it (a static
 * string); HEAP_BACKEND_INJECT: the same is an error (printed, -ENOTSUP).
 * 0 or -errno (printed).
 */
int heap_inject__new(pid_t pid, enum heap_backend want, unsigned int sample,
		     uint64_t sample_bytes, bool history, struct heap_inject **out,
		     const char **why);
/*
 * Does pid hold the tracker (an earlier rsprof put it there) and its jumps
 * at glibc's free, realloc and malloc_usable_size? They stay for the
 * process's life, and uprobes on those functions would break them (a probe
 * steps the file's instruction, not the jump; its removal writes the
 * file's bytes back over it): such a process is not given uprobes.
 */
bool heap_inject__present(pid_t pid);
/*
 * For a SIGQUIT handler that leaves at once: true while a thread of the
 * process is made to call (leaving then would leave it to a SIGTRAP); the
 * signal is raised again when that is over.
 */
bool heap_inject__defer_quit(void);
/* Is the tracker still in the process (false once it exec'd)? */
bool heap_inject__alive(struct heap_inject *ij);
/* The region (mapped in rsprof, the process's memfd), its size. */
struct heap_region *heap_inject__region(const struct heap_inject *ij, size_t *size);
/*
 * Stop tracking: the tracker is told at a safe point to put the process's
 * GOT slots back and let its region go; when that cannot be done (the
 * process gone, no thread at a safe point) it does so by itself at its
 * next allocation, rsprof's pipe closed. The region is not unmapped here.
 * NULL ok.
 */
void heap_inject__delete(struct heap_inject *ij);

#endif
