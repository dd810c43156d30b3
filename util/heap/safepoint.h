#ifndef RSPROF_UTIL_HEAP_SAFEPOINT_H
#define RSPROF_UTIL_HEAP_SAFEPOINT_H

#include <stdint.h>
#include <sys/types.h>

/*
 * A thread of a running process at a safe point, for the heap tracker's
 * injection (util/heap/inject.c): every thread stopped, one chosen whose
 * stack, unwound through the CFI (libdwfl), has no frame in code where a
 * thread may hold a lock that dlopen() takes (glibc's malloc.c, the loader,
 * fork, exit, dlopen & co., pthread_create; the tracker itself), that has
 * room on its stack and takes a SIGTRAP.
 */
struct safepoint;
struct tracee;
struct dynsym;

/* An empty set of ranges; NULL on -ENOMEM. */
struct safepoint *safepoint__new(pid_t pid);
/* Code no frame may be in: [lo, hi). */
void safepoint__add(struct safepoint *sp, uint64_t lo, uint64_t hi);
/* glibc's (libc: its dynamic symbols in the process): malloc.c, the functions above. */
void safepoint__add_glibc(struct safepoint *sp, const struct dynsym *libc);
/*
 * Stop the process and find a thread at a safe point (the main thread
 * first, then those waiting in a system call), for up to 2 s; sigign: the
 * signals the process ignores. *t then holds every thread stopped, *tid
 * the one. 0, -EAGAIN (none came), or -errno.
 */
int safepoint__stop(struct safepoint *sp, uint64_t sigign, struct tracee **t, pid_t *tid);
void safepoint__delete(struct safepoint *sp);

#endif
