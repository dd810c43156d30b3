#ifndef RSPROF_UTIL_RECORD_TARGET_H
#define RSPROF_UTIL_RECORD_TARGET_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "util/record/launch.h"

/*
 * The program being recorded: found by PID (-p) or name (-P) and checked
 * for permission, or launched from `-- CMD` (stopped before its exec, see
 * util/record/launch.h); its identity (comm, executable, command line), whether it
 * has ended and how. Errors are printed.
 */
struct target {
	pid_t pid;		/* the (first) target process */
	pid_t pids[64];		/* attach: every target process (-p A,B) */
	size_t n_pids;
	bool launched;
	char comm[64];
	char exe[PATH_MAX];
	char *cmdline;		/* NULL: unknown */
	struct launch child;	/* launched: pid 0 once reaped */
	int exit_status;	/* as from waitpid(), -1 unknown */
};

void target__init(struct target *t);

/*
 * -p PID[,PID...] (name NULL) or -P NAME: find the processes, check that
 * they may be profiled, read the (first one's) comm, executable and command
 * line, warn when one is a sensitive one. -P never takes a kernel thread,
 * and a process named exactly NAME wins over those whose name contains it.
 * 0 or -errno / -RSPROF_E*.
 */
int target__attach(struct target *t, const pid_t *pids, size_t n, const char *name);

/*
 * -- CMD: find the command, check that it may be profiled, fork it stopped
 * before exec (with envp, NULL: rsprof's environment). comm is what the
 * kernel will call it (the file name, 15 characters). 0 or -errno.
 */
int target__launch(struct target *t, const char *const *argv, char *const *envp);

/*
 * May pid be traced as a debugger could (the kernel's ptrace_may_access(),
 * which CAP_PERFMON lets perf_event_open() skip)? Yes with CAP_SYS_PTRACE;
 * otherwise its real, effective and saved user and group IDs must all be
 * the caller's real ones and it must be dumpable. 0, -EPERM (printed, with
 * the reason: another user, setuid, setgid, not dumpable) or -ESRCH.
 * Also for every process a recording adds later (children, execs).
 */
int target__may_trace(pid_t pid);

/*
 * Would running the executable at path gain privileges this user does not
 * have (setuid or setgid to someone else, file capabilities)? What it is
 * ("a setuid program"), or NULL (also with CAP_SYS_PTRACE). Silent.
 */
const char *target__exec_gains(const char *path);

/*
 * record -a: every process of the host, no process of its own (pid 0,
 * n_pids 0); named "all" (the profile's default name, meta.process_name).
 */
void target__system(struct target *t);

/* Launched: let the program exec (launch__go()). 0 or the failed exec's -errno. */
int target__go(struct target *t, const char *name);

/* Read comm again, and for an attached process its executable and command line. */
void target__read(struct target *t);

/* Has it ended? Launched: reaps it (exit_status); attached: /proc says every one has. */
bool target__exited(struct target *t);

/* Launched and still running: stop and reap it (exit_status). */
void target__kill(struct target *t);

/* On a failed start: a launched program that never ran exits at once, else target__kill(). */
void target__abort(struct target *t);

/* Frees what the target holds (not the process). */
void target__exit(struct target *t);

#endif
