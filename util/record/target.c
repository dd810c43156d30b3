#include "util/record/target.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util/record/caps.h"
#include "util/error.h"
#include "util/output/escape.h"
#include "util/record/proc.h"

void target__init(struct target *t)
{
	memset(t, 0, sizeof(*t));
	t->exit_status = -1;
	t->child.go_fd = t->child.exec_fd = -1;
}

static int find_by_name(const char *name, pid_t *pid)
{
	pid_t *pids;
	size_t n;
	bool exact;
	int err = proc__find_by_name(name, &pids, &n, &exact);

	if (err) {
		pr_err("cannot list processes: %s", strerror(-err));
		return err;
	}
	if (n == 1) {
		*pid = pids[0];
		free(pids);
		return 0;
	}
	if (!n) {
		pr_err("no process named like '%s'", name);
		pr_hint("check the name with 'ps -e -o pid,comm' (the 15-character comm, or a "
			"part of it; kernel threads are never taken)");
		free(pids);
		return -ESRCH;
	}
	pr_err("%zu processes %s '%s':", n, exact ? "are named" : "match", name);
	for (size_t i = 0; i < n; i++) {
		char comm[64] = "?";

		proc__comm(pids[i], comm, sizeof(comm));
		fprintf(stderr, "  %7d  ", (int)pids[i]);
		escape__fputs(comm, stderr);
		fputc('\n', stderr);
	}
	pr_hint("choose with -p PID, or take several with -p PID,PID...");
	free(pids);
	return -RSPROF_EUSAGE;
}

static char *join_argv(const char *const *argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (int i = 0; argv[i]; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

void target__read(struct target *t)
{
	char buf[4096];

	if (proc__comm(t->pid, t->comm, sizeof(t->comm)))
		t->comm[0] = '\0';
	if (!t->launched && proc__exe(t->pid, t->exe, sizeof(t->exe)))
		t->exe[0] = '\0';
	if (!t->launched && !proc__cmdline(t->pid, buf, sizeof(buf)))
		t->cmdline = strdup(buf);
}

int target__may_trace(pid_t pid)
{
	uid_t ruid = getuid();
	gid_t rgid = getgid();
	struct proc_creds c;
	int err;

	if (caps__has_ptrace())
		return 0;
	err = proc__creds(pid, &c);
	if (err)
		return err;
	if (c.uid[0] != ruid) {
		pr_err("process %d belongs to user %u: tracing it needs CAP_SYS_PTRACE",
		       (int)pid, (unsigned int)c.uid[0]);
	} else if (c.uid[1] != ruid || c.uid[2] != ruid) {
		pr_err("process %d runs with the privileges of user %u (a setuid program): "
		       "tracing it needs CAP_SYS_PTRACE", (int)pid,
		       (unsigned int)(c.uid[1] != ruid ? c.uid[1] : c.uid[2]));
	} else if (c.gid[0] != rgid || c.gid[1] != rgid || c.gid[2] != rgid) {
		pr_err("process %d runs with the privileges of group %u (a setgid program, "
		       "or another group): tracing it needs CAP_SYS_PTRACE", (int)pid,
		       (unsigned int)(c.gid[1] != rgid ? c.gid[1] :
				      c.gid[2] != rgid ? c.gid[2] : c.gid[0]));
	} else if (c.owner_uid != ruid) {
		pr_err("process %d is not dumpable (it ran a setuid or setgid program, or "
		       "made itself so): tracing it needs CAP_SYS_PTRACE", (int)pid);
	} else {
		return 0;
	}
	pr_hint("run rsprof as that user, as root, or with CAP_SYS_PTRACE: what a debugger "
		"would need");
	return -EPERM;
}

/*
 * An executable that gains privileges when run (setuid or setgid to
 * someone else, or file capabilities): launching it under probes would
 * show another user's process. 0 or -EPERM (printed).
 */
const char *target__exec_gains(const char *exe)
{
	struct stat st;

	if (caps__has_ptrace() || stat(exe, &st))
		return NULL;
	if ((st.st_mode & S_ISUID) && st.st_uid != getuid())
		return "a setuid program";
	if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) && st.st_gid != getgid())
		return "a setgid program";
	if (getxattr(exe, "security.capability", NULL, 0) > 0)
		return "a program with file capabilities";
	return NULL;
}

static int check_exec_privilege(const char *exe, const char *name)
{
	const char *why = target__exec_gains(exe);

	if (!why)
		return 0;
	pr_err("'%s' is %s: it would run with privileges this user does not have, "
	       "and rsprof does not profile it without CAP_SYS_PTRACE", name, why);
	pr_hint("profile a copy without the setuid bit, or run rsprof as root");
	return -EPERM;
}

int target__attach(struct target *t, const pid_t *pids, size_t n, const char *name)
{
	const char *why;
	int err = 0;

	if (name) {
		err = find_by_name(name, &t->pid);
		t->pids[0] = t->pid;
		t->n_pids = 1;
	} else {
		if (n > sizeof(t->pids) / sizeof(t->pids[0]))
			n = sizeof(t->pids) / sizeof(t->pids[0]);
		memcpy(t->pids, pids, n * sizeof(*pids));
		t->n_pids = n;
		t->pid = pids[0];
		for (size_t i = 0; i < n && !err; i++) {
			err = proc__exists(pids[i]);
			if (!err && proc__is_kthread(pids[i])) {
				pr_err("process %d is a kernel thread: it runs no user code to profile",
				       (int)pids[i]);
				return -RSPROF_EUSAGE;
			}
			if (err) {
				pr_err("no process with PID %d", (int)pids[i]);
				pr_hint("check the PID with 'ps -p %d', or use -P NAME", (int)pids[i]);
			}
		}
	}
	for (size_t i = 0; i < t->n_pids && !err; i++) {
		err = caps__check_perf(t->pids[i]);
		if (!err)
			err = target__may_trace(t->pids[i]);
		if (err == -ESRCH)
			pr_err("process %d exited", (int)t->pids[i]);
	}
	if (err)
		return err;
	target__read(t);
	for (size_t i = 0; i < t->n_pids; i++) {
		char comm[64] = "";

		proc__comm(t->pids[i], comm, sizeof(comm));
		why = caps__sensitive(comm);
		if (why)
			pr_warn("process %d (%s) is %s: the profile will show its code paths",
				(int)t->pids[i], comm, why);
	}
	return 0;
}

void target__system(struct target *t)
{
	t->pid = 0;
	t->n_pids = 0;
	snprintf(t->comm, sizeof(t->comm), "all");
	t->exe[0] = '\0';
}

int target__launch(struct target *t, const char *const *argv, char *const *envp)
{
	const char *base;
	int err = proc__which(argv[0], t->exe, sizeof(t->exe));

	if (err) {
		pr_err("cannot run '%s': command not found", argv[0]);
		pr_hint("check the command name and PATH");
		return err;
	}
	t->cmdline = join_argv(argv);
	err = caps__check_perf(0);
	if (!err)
		err = check_exec_privilege(t->exe, argv[0]);
	/*
	 * Whatever it runs later (a wrapper, a shell script) gains no privilege
	 * either: a setuid program it execs runs as this user, as under a
	 * debugger without CAP_SYS_PTRACE.
	 */
	t->child.no_new_privs = !caps__has_ptrace();
	if (!err)
		err = launch__fork(argv, envp, &t->child);
	if (err)
		return err;
	t->pid = t->child.pid;
	t->pids[0] = t->pid;
	t->n_pids = 1;
	t->launched = true;
	/* what the kernel will call the launched program: the file name, 15 characters */
	base = strrchr(argv[0], '/');
	snprintf(t->comm, 16, "%s", base ? base + 1 : argv[0]);
	return 0;
}

int target__go(struct target *t, const char *name)
{
	return launch__go(&t->child, name);
}

bool target__exited(struct target *t)
{
	if (t->launched) {
		int status;
		pid_t w;

		if (t->child.pid <= 0)
			return true;
		w = waitpid(t->child.pid, &status, WNOHANG);
		if (w == t->child.pid) {
			t->exit_status = status;
			t->child.pid = 0;
			return true;
		}
		return w < 0 && errno == ECHILD;
	}
	for (size_t i = 0; i < t->n_pids; i++)
		if (!proc__gone(t->pids[i]))
			return false;
	return true;
}

void target__kill(struct target *t)
{
	int status;

	if (t->child.pid <= 0)
		return;
	launch__kill(&t->child, &status);
	if (status != -1)
		t->exit_status = status;
}

void target__abort(struct target *t)
{
	if (t->child.go_fd >= 0)
		launch__abort(&t->child);	/* never ran: it exits at once */
	else
		target__kill(t);
}

void target__exit(struct target *t)
{
	free(t->cmdline);
	t->cmdline = NULL;
}
