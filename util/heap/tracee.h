#ifndef RSPROF_UTIL_HEAP_TRACEE_H
#define RSPROF_UTIL_HEAP_TRACEE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/*
 * A running process under ptrace for the time of an injection (no gdb):
 * its threads stopped (PTRACE_SEIZE, PTRACE_INTERRUPT), one of them made
 * to call functions of the process, all let go exactly as they were.
 * Every ptrace call comes from the thread that made the tracee.
 */
struct tracee;

/* A stopped thread: its registers as they were when it stopped. */
struct tracee_thread {
	pid_t tid;
	struct user_regs_struct regs;
	bool in_syscall;	/* stopped inside a system call (restarted when let go) */
	bool callable;		/* stopped where it can be made to call (not the one
				 * hijacked, not reporting a signal or a new thread) */
};

/*
 * Seize every thread of pid and stop them all (threads that start
 * meanwhile too). 0, or -errno (printed at -v): -EPERM, -ESRCH, -EBUSY
 * (another tracer).
 */
int tracee__stop_all(pid_t pid, struct tracee **out);
/* The stopped threads, the hijacked one excepted (valid until the next call on t). */
const struct tracee_thread *tracee__threads(const struct tracee *t, size_t *n);
/* Let every thread but keep go (detached, as it was). */
void tracee__release_others(struct tracee *t, pid_t keep);
/* Stop every thread again (the one kept stays as it is). */
int tracee__restop(struct tracee *t);

/*
 * Make thread tid (stopped) ready to call functions: its registers, vector
 * state, signal mask and errno kept to be put back; signals but the
 * synchronous ones blocked meanwhile; calls return to sentinel (the address
 * of an int3 instruction). errno_fn: the process's __errno_location.
 */
int tracee__hijack(struct tracee *t, pid_t tid, uint64_t sentinel, uint64_t errno_fn);
/* Bytes for the next call's arguments below the thread's stack (under its
 * red zone); their address in the process. */
int tracee__push(struct tracee *t, const void *data, size_t len, uint64_t *addr);
/* fn(args...) in the hijacked thread (up to 6 arguments); its return in *ret. */
int tracee__call(struct tracee *t, uint64_t fn, const uint64_t *args, int n, uint64_t *ret);

int tracee__read(struct tracee *t, uint64_t addr, void *buf, size_t len);
/* Writes to writable memory of the process. */
int tracee__write(struct tracee *t, uint64_t addr, const void *buf, size_t len);
/* Writes to any memory (code: as a debugger puts a breakpoint). Every thread stopped. */
int tracee__poke(struct tracee *t, uint64_t addr, const void *buf, size_t len);

/*
 * Put the hijacked thread back as it was, let every thread go, detach.
 * NULL ok.
 */
void tracee__delete(struct tracee *t);

#endif
