#ifndef RSPROF_UTIL_RECORD_LAUNCH_H
#define RSPROF_UTIL_RECORD_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Launching the program to profile (`record -- CMD`): the child waits on a
 * pipe until the parent has opened its perf events (enable_on_exec) and
 * attached the heap probes, then execs; a second, close-on-exec pipe tells
 * the parent that exec happened (EOF) or why it failed (the errno). So the
 * whole run of the program is profiled, from its first instruction.
 */
struct launch {
	pid_t pid;		/* the child; 0 once reaped */
	int go_fd;		/* write end: one byte lets the child exec */
	int exec_fd;		/* read end: EOF at exec, or the errno of a failed exec */
	bool no_new_privs;	/* set before launch__fork(): the child execs with
				 * PR_SET_NO_NEW_PRIVS (no setuid, setgid or file
				 * capabilities take effect in it or its children) */
};

/*
 * Fork the child, stopped before exec. envp: the environment to exec with
 * (the heap tracker's LD_PRELOAD), NULL: rsprof's own. Errors printed; 0
 * or -errno.
 */
int launch__fork(const char *const *argv, char *const *envp, struct launch *l);

/*
 * Let the child exec. 0 once it has; otherwise the failed exec's -errno
 * (printed, the child reaped).
 */
int launch__go(struct launch *l, const char *name);

/* Give up before launch__go(): the child exits without running anything. */
void launch__abort(struct launch *l);

/*
 * End a running child: SIGTERM, up to 0.5 s to exit, then SIGKILL. Reaps
 * it; *status as from waitpid() (-1 when unknown).
 */
void launch__kill(struct launch *l, int *status);

#endif
