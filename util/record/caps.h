#ifndef RSPROF_UTIL_RECORD_CAPS_H
#define RSPROF_UTIL_RECORD_CAPS_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Privileges: what rsprof may do, checked up front with libcap so
 * the error names the capability or sysctl that is missing, and dropped once
 * the probes are attached.
 */

/*
 * May we open perf events at all? Checks kernel.perf_event_paranoid against
 * CAP_PERFMON/CAP_SYS_ADMIN. Whether a given process may be traced is
 * target__may_trace()'s (CAP_PERFMON lets the kernel skip that check, so
 * rsprof makes it). Prints the error and a hint, returns -EPERM; 0 when
 * allowed.
 */
int caps__check_perf(pid_t pid);

/*
 * May we load BPF programs and attach uprobes? 0, or -EPERM with the missing
 * capability's name in *why (static string). Prints nothing.
 */
int caps__check_bpf(const char **why);

/* kernel.perf_event_paranoid, or 2 (the kernel default) when unreadable. */
int caps__perf_paranoid(void);

/*
 * Drop every capability except the ones still needed to open perf events on
 * threads that start later and read the target's /proc files
 * and map their rings (CAP_PERFMON, CAP_SYS_PTRACE, CAP_IPC_LOCK, CAP_SYS_ADMIN
 * when perf needs it). keep_dac: CAP_DAC_OVERRIDE stays permitted but not
 * effective, for caps__raise_dac() at the end (the profile's directory
 * needs it to remove the -wal and -shm files).
 * Affects the calling thread. 0 or -errno.
 */
int caps__drop_unneeded(bool keep_dac);

/* CAP_DAC_OVERRIDE effective again, when it was kept permitted. */
void caps__raise_dac(void);

/*
 * Commands that only read (report, diff, timeline, info, query, annotate,
 * history, help, top on a file): drop every capability, and the effective
 * and saved IDs of a setuid installation, before any file is opened. 0 or
 * -errno (printed).
 */
int caps__drop_all(void);

/* CAP_SYS_PTRACE is effective: the kernel lets us trace any process. */
bool caps__has_ptrace(void);

/*
 * Would creating and removing files in the directory of path need a
 * capability (CAP_DAC_OVERRIDE), the mode bits not allowing it for the
 * effective user and groups? A directory that cannot be read says yes.
 */
bool caps__dir_needs_privilege(const char *path);

/* Non-NULL (a short description) when comm is a daemon that holds secrets. */
const char *caps__sensitive(const char *comm);

#endif
