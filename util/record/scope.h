#ifndef RSPROF_UTIL_RECORD_SCOPE_H
#define RSPROF_UTIL_RECORD_SCOPE_H

#include <stdbool.h>

/*
 * Which processes a system-wide recording (record -a) keeps the samples
 * of: every process but rsprof itself and the idle task, or, narrowed, the
 * processes named NAME (--comm: the comm as the kernel has it, 15
 * characters, exact) or in the cgroup PATH (--cgroup: its cgroup v2 path
 * is PATH or below it; a path under /sys/fs/cgroup is taken from there).
 * Decided once per process and kept: from the side-band records (an exec
 * or a rename decides the comm again, a fork passes both on to the child),
 * else from /proc when a process is first seen in a sample. The records
 * themselves always go on (the process tree needs them).
 */
struct scope;
struct sampler_event;

/* comm, cgroup: NULL for no narrowing. 0 or -ENOMEM. */
int scope__new(const char *comm, const char *cgroup, struct scope **out);
/* Is ev to be recorded? Records other than samples: always (and noted). */
bool scope__keep(struct scope *s, const struct sampler_event *ev);
void scope__delete(struct scope *s);	/* NULL ok */

#endif
