#ifndef RSPROF_UTIL_RECORD_CAPS_H
#define RSPROF_UTIL_RECORD_CAPS_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Privileges (SPEC §9): what rsprof may do, checked up front with libcap so
 * the error names the capability or sysctl that is missing, and dropped once
 * the probes are attached.
 */

/*
 * May we sample pid's user space with perf_event_open? Checks
 * kernel.perf_event_paranoid against CAP_PERFMON/CAP_SYS_ADMIN, and
 * CAP_SYS_PTRACE when pid belongs to another user. Prints the error and a
 * hint, returns -EPERM; 0 when allowed.
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
 * when perf needs it).
 * Affects the calling thread. 0 or -errno.
 */
int caps__drop_unneeded(void);

/* Non-NULL (a short description) when comm is a daemon that holds secrets. */
const char *caps__sensitive(const char *comm);

#endif
