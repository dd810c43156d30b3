#include "util/record/scope.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/hashmap.h"
#include "util/record/proc.h"
#include "util/record/sampler.h"

/* What is known of a process: bits of its value in the map. */
#define COMM_KNOWN	1u
#define COMM_OK		2u
#define CG_KNOWN	4u
#define CG_OK		8u

struct scope {
	char *comm;		/* NULL: any */
	char *cgroup;		/* NULL: any; no trailing slash ("" is the root) */
	pid_t self;
	struct hashmap procs;	/* pid -> bits */
};

int scope__new(const char *comm, const char *cgroup, struct scope **out)
{
	struct scope *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->self = getpid();
	if (comm && !(s->comm = strndup(comm, 15)))
		goto oom;
	if (cgroup) {
		const char *p = cgroup;
		size_t n;

		if (!strncmp(p, "/sys/fs/cgroup", 14) && (!p[14] || p[14] == '/'))
			p += 14;
		n = strlen(p);
		while (n && p[n - 1] == '/')
			n--;
		s->cgroup = strndup(p, n);
		if (!s->cgroup)
			goto oom;
	}
	*out = s;
	return 0;
oom:
	scope__delete(s);
	return -ENOMEM;
}

void scope__delete(struct scope *s)
{
	if (!s)
		return;
	free(s->comm);
	free(s->cgroup);
	hashmap__free(&s->procs);
	free(s);
}

static bool cgroup_ok(const struct scope *s, const char *cg)
{
	size_t n = strlen(s->cgroup);

	return !strncmp(cg, s->cgroup, n) && (cg[n] == '\0' || cg[n] == '/');
}

/* What /proc says of pid, for what the records did not tell. */
static unsigned int from_proc(const struct scope *s, pid_t pid, unsigned int bits)
{
	char buf[4096];

	if (s->comm && !(bits & COMM_KNOWN) && !proc__comm(pid, buf, sizeof(buf)))
		bits |= COMM_KNOWN | (!strcmp(buf, s->comm) ? COMM_OK : 0);
	if (s->cgroup && !(bits & CG_KNOWN) && !proc__cgroup(pid, true, buf, sizeof(buf)))
		bits |= CG_KNOWN | (cgroup_ok(s, buf) ? CG_OK : 0);
	return bits;
}

static bool kept(const struct scope *s, unsigned int bits)
{
	return (!s->comm || (bits & COMM_OK)) && (!s->cgroup || (bits & CG_OK));
}

bool scope__keep(struct scope *s, const struct sampler_event *ev)
{
	uint64_t v = 0;
	unsigned int bits;

	switch (ev->type) {
	case SEV_SAMPLE:
		if (ev->pid <= 0 || ev->pid == s->self)
			return false;	/* the idle task; rsprof's own work */
		if (!s->comm && !s->cgroup)
			return true;
		hashmap__get(&s->procs, (uint64_t)ev->pid, &v);
		bits = (unsigned int)v;
		if ((s->comm && !(bits & COMM_KNOWN)) || (s->cgroup && !(bits & CG_KNOWN))) {
			bits = from_proc(s, ev->pid, bits);
			hashmap__set(&s->procs, (uint64_t)ev->pid, bits);
		}
		return kept(s, bits);
	case SEV_COMM:
		if (s->comm && ev->pid == ev->tid) {
			hashmap__get(&s->procs, (uint64_t)ev->pid, &v);
			bits = ((unsigned int)v & ~(COMM_KNOWN | COMM_OK)) | COMM_KNOWN |
			       (!strncmp(ev->comm, s->comm, 15) ? COMM_OK : 0);
			hashmap__set(&s->procs, (uint64_t)ev->pid, bits);
		}
		return true;
	case SEV_FORK:
		/* a new process: its parent's comm and cgroup */
		if ((s->comm || s->cgroup) && ev->pid != ev->ppid &&
		    hashmap__get(&s->procs, (uint64_t)ev->ppid, &v))
			hashmap__set(&s->procs, (uint64_t)ev->pid, v);
		return true;
	case SEV_EXIT:
		if (ev->pid == ev->tid)
			hashmap__remove(&s->procs, (uint64_t)ev->pid);
		return true;
	default:
		return true;
	}
}
