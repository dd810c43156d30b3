#ifndef RSPROF_UTIL_RECORD_PROC_H
#define RSPROF_UTIL_RECORD_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Processes and threads as /proc shows them: does a PID exist, its comm and
 * executable, processes by name, the threads of a process.
 */

/* 0 when /proc/pid exists, -ESRCH otherwise. Prints nothing. */
int proc__exists(pid_t pid);

/* /proc/pid/comm without the newline into buf; 0 or -errno (-ESRCH when gone). */
int proc__comm(pid_t pid, char *buf, size_t len);

/*
 * The cgroup of pid from /proc/pid/cgroup: its cgroup v2 path (the "0::"
 * line, e.g. "/system.slice/ssh.service"), or when it has none and
 * any_hierarchy, the path in the first hierarchy listed; into buf without
 * the newline. 0, -ENOENT (no such line) or -errno (-ESRCH when gone).
 */
int proc__cgroup(pid_t pid, bool any_hierarchy, char *buf, size_t len);

/* readlink /proc/pid/exe into buf; 0 or -errno (-EACCES for others' processes). */
int proc__exe(pid_t pid, char *buf, size_t len);

/*
 * path, a file of pid as /proc/pid/maps or /proc/pid/exe names it, relative
 * to the root of pid: the name to open under /proc/pid/root, which reaches
 * the file pid sees from any mount namespace and any root of ours. The
 * kernel names a file from our root when it can reach it from there, else
 * from the top of the mount namespace the file is in (pid in another mount
 * namespace, and we or it in a chroot), and names pid's root (the link
 * /proc/pid/root) the same way: that prefix is taken off. A pointer into
 * path.
 */
const char *proc__root_relative(pid_t pid, const char *path);

/* The real uid of pid (from /proc/pid/status); 0 or -errno. */
int proc__uid(pid_t pid, uid_t *uid);

/*
 * What the kernel compares before it lets a debugger at a process
 * (ptrace_may_access()): its real, effective and saved user and group IDs
 * (/proc/pid/status Uid:, Gid:), and whether it is dumpable. A process that
 * is not (it ran a setuid or setgid program, or made itself so) has the
 * files in its /proc/pid owned by root: owner_uid is that owner.
 */
struct proc_creds {
	uid_t uid[3];		/* real, effective, saved */
	gid_t gid[3];
	uid_t owner_uid;	/* of /proc/pid/status */
};

/* 0 or -errno (-ESRCH when gone). */
int proc__creds(pid_t pid, struct proc_creds *c);

/*
 * User processes (kernel threads never: a kworker's name is not a program)
 * whose comm is name, or when none is, contains it (case-sensitive), rsprof
 * itself excepted. *pids is malloc'd (caller frees), *n its length, *exact
 * whether they are exact matches; 0 or -errno. No match is 0 with *n == 0.
 */
int proc__find_by_name(const char *name, pid_t **pids, size_t *n, bool *exact);

/* Is pid a kernel thread (PF_KTHREAD)? false when it cannot be read. */
bool proc__is_kthread(pid_t pid);

/*
 * The thread IDs of pid (/proc/pid/task), appended to *tids (realloc'd,
 * capacity in *cap) with their count in *n. 0, -ESRCH when the process is
 * gone, or -errno.
 */
int proc__threads(pid_t pid, pid_t **tids, size_t *n, size_t *cap);

/* Exit of a process we are not the parent of: true once /proc/pid is gone or a zombie. */
bool proc__gone(pid_t pid);

/*
 * The file execvp() would run for cmd (PATH search when cmd has no '/'),
 * into buf (PATH_MAX bytes); 0 or -ENOENT.
 */
int proc__which(const char *cmd, char *buf, size_t len);

/*
 * The resident memory of pid in bytes (/proc/pid/statm: resident pages, and
 * resident minus shared, i.e. anonymous memory: RssAnon). 0 or -errno
 * (-ESRCH once the process is gone).
 */
int proc__rss(pid_t pid, int64_t *rss, int64_t *anon);

/*
 * The kernel's high-water mark of pid's resident memory in bytes (VmHWM of
 * /proc/pid/status: the peak of this image, between two reads too). 0 or
 * -errno (-ESRCH once the process is gone: a zombie has no VmHWM).
 */
int proc__rss_peak(pid_t pid, int64_t *hwm);

/* /proc/pid/cmdline with the NULs as spaces, into buf; 0 or -errno. */
int proc__cmdline(pid_t pid, char *buf, size_t len);

#endif
