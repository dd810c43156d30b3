#include "util/record/sampler.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/array.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/record/caps.h"
#include "util/record/proc.h"
#include "util/symbols/kernel.h"

/*
 * Ring sizes in pages (a power of two, plus the header page). A per-thread
 * ring (no inherit) gets ~24 bytes a sample: 8 pages hold 1.3 s at 999 Hz.
 * A per-CPU ring takes every sampled thread on that CPU and the side-band
 * records (a few hundred bytes per exec): 64 pages. Callchains are up to
 * ~1 KB a sample. The loop drains every 10 ms, but a checkpoint that reads
 * a large library's DWARF for the first time holds it up for ~0.5 s.
 */
#define RING_PAGES	8
#define RING_PAGES_CG	32
#define CPU_RING_PAGES	64
#define CPU_RING_PAGES_CG 256
#define RING_PAGES_STACK	128	/* with stack copies of 8 KiB: 0.5 s at 99 Hz */
#define CPU_RING_PAGES_STACK	1024
/* system-wide: every process's samples and records through one ring per CPU */
#define ALL_RING_PAGES	512
#define ALL_RING_PAGES_CG 2048
#define MAX_CHAIN	127
/* perf_regs.h of x86: the registers a stack copy comes with (in bit order) */
#define PERF_REG_X86_BP	6
#define PERF_REG_X86_SP	7
#define PERF_REG_X86_IP	8
#define FD_HEADROOM	64
/* records newer than this are kept for the next drain (another ring may lag) */
#define HOLD_NS		2000000ULL

/* One mmap'd ring. */
struct ring {
	int fd;			/* the event whose buffer it is */
	void *base;		/* header page, then data */
	size_t len;
};

/*
 * A thread we opened events on ourselves. Inherit: one event per CPU (fds),
 * output into the CPU's ring. No inherit: one event with its own ring.
 */
struct thread_ev {
	pid_t tid;
	int *fds;		/* inherit: ncpu entries, -1 when not open */
	struct ring ring;	/* no inherit */
	bool seen;		/* present in the latest scan */
	bool gone;		/* exited: closed after its ring's last drain */
};

/* A record copied out of a ring, waiting to be delivered in time order. */
struct pending {
	uint64_t time;
	uint64_t seq;		/* order of arrival: equal times keep it */
	size_t off;		/* in s->arena */
	uint32_t len;
};

struct sampler {
	struct sampler_opts o;
	pid_t *pids;
	struct perf_event_attr attr;
	size_t page;
	int ncpu;
	struct ring *cpu_rings;	/* inherit: one per CPU */
	struct thread_ev *t;	/* sorted by tid */
	size_t n, cap;
	pid_t *scan;		/* scratch for rescans */
	size_t scan_n, scan_cap;

	struct pending *pend;
	size_t n_pend, cap_pend;
	unsigned char *arena;
	size_t arena_len, arena_cap;
	uint64_t seq;

	uint64_t samples, lost, threads_seen, threads_live, processes_seen;
	struct hashmap forked;	/* inherit: tids created by an inherited event (FORK seen) */
	uint64_t chain[MAX_CHAIN + 2];
	uint64_t kchain[MAX_CHAIN];
	bool warned_mlock;
	bool warned_open;
	bool kernel_refused;	/* exclude_kernel forced by the kernel's refusal */
	size_t max_fds;		/* descriptors we may use */
	size_t open_fds;
	uint64_t failed_opens;
};

static int perf_event_open(struct perf_event_attr *attr, pid_t tid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void ring_close(struct ring *r)
{
	if (r->base)
		munmap(r->base, r->len);
	r->base = NULL;
}

static void thread_close(struct sampler *s, struct thread_ev *t)
{
	if (t->fds) {
		for (int c = 0; c < s->ncpu; c++) {
			/* a CPU ring's own event stays open: others write into it */
			if (t->fds[c] >= 0 && !(s->cpu_rings && s->cpu_rings[c].fd == t->fds[c])) {
				close(t->fds[c]);
				s->open_fds--;
			}
			t->fds[c] = -1;
		}
		free(t->fds);
		t->fds = NULL;
	}
	ring_close(&t->ring);
	if (t->ring.fd >= 0) {
		close(t->ring.fd);
		s->open_fds--;
	}
	t->ring.fd = -1;
}

/*
 * Map a ring on fd. Unprivileged users share kernel.perf_event_mlock_kb
 * (516 KB): with many rings, fall back to smaller ones rather than fail.
 */
static int ring_map(struct sampler *s, int fd, size_t pages, struct ring *r, pid_t tid)
{
	r->fd = fd;
	r->base = NULL;
	for (; pages >= 1; pages /= 2) {
		r->len = (pages + 1) * s->page;
		r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (r->base != MAP_FAILED)
			return 0;
		r->base = NULL;
		if (errno != EPERM && errno != ENOMEM)
			break;
	}
	if (!s->warned_mlock && (errno == EPERM || errno == ENOMEM)) {
		pr_warn("cannot map the ring buffer of thread %d: %s", (int)tid, strerror(errno));
		pr_hint("raise kernel.perf_event_mlock_kb or run with CAP_IPC_LOCK");
		s->warned_mlock = true;
	}
	return -errno;
}

/*
 * perf_event_open, and when the kernel refuses kernel samples
 * (perf_event_paranoid > 1 without CAP_PERFMON), once more without them.
 */
static int event_open(struct sampler *s, pid_t tid, int cpu)
{
	int fd = perf_event_open(&s->attr, tid, cpu);

	if (fd < 0 && (errno == EACCES || errno == EPERM) && !s->attr.exclude_kernel) {
		bool kchain = !s->attr.exclude_callchain_kernel;

		s->attr.exclude_kernel = 1;
		s->attr.exclude_callchain_kernel = 1;
		fd = perf_event_open(&s->attr, tid, cpu);
		if (fd >= 0) {
			s->kernel_refused = true;
			pr_warn("kernel samples are not allowed here (kernel.perf_event_paranoid "
				"is %d): CPU%% is a share of user time only", caps__perf_paranoid());
			pr_hint("run as root or with CAP_PERFMON, or 'sysctl "
				"kernel.perf_event_paranoid=1', to count time in the kernel");
		} else {
			s->attr.exclude_kernel = 0;
			s->attr.exclude_callchain_kernel = !kchain;
			errno = EACCES;
		}
	}
	if (fd >= 0)
		s->open_fds++;
	return fd < 0 ? -errno : fd;
}

/* The pages of a ring (a power of two): per CPU or per thread. */
static size_t ring_pages(const struct sampler *s, bool per_cpu)
{
	if (s->o.call_graph && s->o.stack_copy > 1024)
		return per_cpu ? CPU_RING_PAGES_STACK : RING_PAGES_STACK;
	if (s->o.call_graph)
		return per_cpu ? CPU_RING_PAGES_CG : RING_PAGES_CG;
	return per_cpu ? CPU_RING_PAGES : RING_PAGES;
}

/* Open the events of one thread; -ESRCH when it exited meanwhile. */
static int thread_open(struct sampler *s, pid_t tid, struct thread_ev *t)
{
	int err = 0;

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->ring.fd = -1;
	t->seen = true;
	if (!s->o.inherit) {
		int fd;

		if (s->open_fds + 1 > s->max_fds)
			return -EMFILE;
		fd = event_open(s, tid, -1);
		if (fd < 0)
			return fd;
		err = ring_map(s, fd, ring_pages(s, false), &t->ring, tid);
		if (err) {
			close(fd);
			s->open_fds--;
			t->ring.fd = -1;
			return err;
		}
		s->threads_seen++;
		return 0;
	}
	if (s->open_fds + (size_t)s->ncpu > s->max_fds)
		return -EMFILE;
	t->fds = malloc(sizeof(int) * s->ncpu);
	if (!t->fds)
		return -ENOMEM;
	for (int c = 0; c < s->ncpu; c++)
		t->fds[c] = -1;
	for (int c = 0; c < s->ncpu && !err; c++) {
		struct ring *r = &s->cpu_rings[c];
		int fd = event_open(s, tid, c);

		if (fd == -ENODEV || fd == -EINVAL)	/* an offline CPU */
			continue;
		if (fd < 0) {
			err = fd;
			break;
		}
		t->fds[c] = fd;
		if (r->fd < 0)
			err = ring_map(s, fd, ring_pages(s, true), r, tid);
		else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd))
			err = -errno;
		if (err && r->base == NULL && r->fd == fd)
			r->fd = -1;
	}
	if (!err) {
		bool any = false;

		for (int c = 0; c < s->ncpu; c++)
			any |= t->fds[c] >= 0;
		if (!any)
			err = -ENODEV;
	}
	if (err) {
		thread_close(s, t);
		return err;
	}
	s->threads_seen++;
	s->threads_live++;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

static int cmp_thread(const void *a, const void *b)
{
	return cmp_pid(&((const struct thread_ev *)a)->tid, &((const struct thread_ev *)b)->tid);
}

/* The thread among the first n (sorted) entries. */
static struct thread_ev *find_thread(struct sampler *s, size_t n, pid_t tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->t[mid].tid == tid)
			return &s->t[mid];
		if (s->t[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void report_open_error(const struct sampler *s, pid_t pid, int err)
{
	int paranoid = caps__perf_paranoid();

	switch (-err) {
	case ESRCH:
		pr_err("process %d not found", (int)pid);
		pr_hint("check the PID with 'ps -p %d'", (int)pid);
		break;
	case EPERM:
	case EACCES:
		pr_err("perf_event_open on process %d refused: %s (kernel.perf_event_paranoid "
		       "is %d)", (int)pid, strerror(-err), paranoid);
		pr_hint("run as root or with CAP_PERFMON (and CAP_SYS_PTRACE for other users' "
			"processes), or 'sysctl kernel.perf_event_paranoid=1'");
		break;
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		pr_err("this kernel has no cpu-clock perf event: %s", strerror(-err));
		pr_hint("rsprof needs a kernel built with CONFIG_PERF_EVENTS");
		break;
	case EMFILE:
	case ENFILE:
		pr_err("too many threads to sample in process %d: %s", (int)pid, strerror(-err));
		pr_hint("raise the open files limit (ulimit -n): one per thread and CPU, or "
			"use --no-inherit (one per thread)");
		break;
	default:
		pr_err("perf_event_open on process %d: %s", (int)pid, strerror(-err));
		break;
	}
}

static int grow_threads(struct sampler *s)
{
	if (ALLOC_GROW(s->t, s->n + 1, s->cap, 16))
		return -ENOMEM;
	return 0;
}

/*
 * Open events on the threads of pid not opened yet (and, with inherit, not
 * created by a thread that has inherited events: the FORK records say).
 * Returns the number of threads opened, or -errno.
 */
static int scan_process(struct sampler *s, pid_t pid, bool first)
{
	size_t sorted = s->n;
	int err, changes = 0;

	err = proc__threads(pid, &s->scan, &s->scan_n, &s->scan_cap);
	if (err)
		return err;
	for (size_t j = 0; j < s->scan_n; j++) {
		struct thread_ev *t = find_thread(s, sorted, s->scan[j]);

		if (t) {
			t->seen = true;
			continue;
		}
		if (s->o.inherit && hashmap__get(&s->forked, (uint64_t)s->scan[j], NULL))
			continue;
		err = grow_threads(s);
		if (err)
			return err;
		err = thread_open(s, s->scan[j], &s->t[s->n]);
		if (err == -ESRCH)	/* exited between the scan and the open */
			continue;
		if (err && !first) {
			/* one thread we cannot sample does not end the recording */
			if (!s->warned_open) {
				pr_warn("cannot sample thread %d of process %d: %s",
					(int)s->scan[j], (int)pid, strerror(-err));
				if (err == -EMFILE || err == -ENFILE)
					pr_hint("raise the open files limit (ulimit -n): one per "
						"thread");
				s->warned_open = true;
			}
			s->failed_opens++;
			continue;
		}
		if (err)
			return err;
		s->n++;
		changes++;
	}
	if (s->n)
		qsort(s->t, s->n, sizeof(*s->t), cmp_thread);
	return changes;
}

int sampler__rescan(struct sampler *s)
{
	int changes = 0, alive = 0;

	if (s->o.inherit || s->o.system_wide)
		return 0;
	for (size_t i = 0; i < s->n; i++)
		s->t[i].seen = false;
	for (size_t p = 0; p < s->o.n_pids; p++) {
		int c = scan_process(s, s->pids[p], false);

		if (c == -ENOMEM)
			return c;
		if (c >= 0) {
			alive++;
			changes += c;
		}
	}
	/* Threads that are gone are closed by the next drain, after a last look at their rings. */
	for (size_t i = 0; i < s->n; i++) {
		if (!s->t[i].seen && !s->t[i].gone) {
			s->t[i].gone = true;
			changes++;
		}
	}
	return alive ? changes : -ESRCH;
}

/*
 * One descriptor per thread (and CPU): a big server has more threads than
 * the soft limit. Returns how many events may be open while leaving room
 * for the rest of rsprof (the profile, /proc files, libraries being read).
 */
static size_t raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 1024 - FD_HEADROOM;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1 << 20)
		return 1 << 20;
	return rl.rlim_cur > 2 * FD_HEADROOM ? (size_t)rl.rlim_cur - FD_HEADROOM : FD_HEADROOM;
}

static void sampler__set_attr(struct sampler *s)
{
	struct perf_event_attr *a = &s->attr;
	const struct sampler_opts *o = &s->o;

	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = o->freq;
	if (o->sideband_only) {	/* perf's "dummy" event: the records, no samples */
		a->config = PERF_COUNT_SW_DUMMY;
		a->freq = 0;
		a->sample_period = 0;
	}
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	if (o->call_graph) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		/* the kernel's part tells an interrupt from the program's work */
		a->exclude_callchain_kernel = o->user_only;
		a->sample_max_stack = MAX_CHAIN;
		if (o->stack_copy) {
			a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
			a->sample_regs_user = 1ULL << PERF_REG_X86_BP | 1ULL << PERF_REG_X86_SP |
					      1ULL << PERF_REG_X86_IP;
			a->sample_stack_user = o->stack_copy;
		}
	}
	if (o->user_ip && !(a->sample_type & PERF_SAMPLE_REGS_USER)) {
		a->sample_type |= PERF_SAMPLE_REGS_USER;
		a->sample_regs_user = 1ULL << PERF_REG_X86_IP;
	}
	a->exclude_kernel = o->user_only;
	a->exclude_hv = 1;
	a->exclude_idle = 1;
	a->inherit = o->inherit;
	/* what the processes are: exec (comm), fork/exit, executable mappings */
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->build_id = 1;
	a->sample_id_all = 1;
	/* timestamps comparable with clock_gettime(): see HOLD_NS */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	if (o->enable_on_exec) {
		a->disabled = 1;
		a->enable_on_exec = 1;
	}
}

/* Read the FORK records in the rings without consuming them (the attach race). */
static void peek_forks(struct sampler *s);

/*
 * System-wide: one event and ring per online CPU, for every process (pid
 * -1). Errors printed: -EACCES/-EPERM without CAP_PERFMON (or paranoid
 * above 0), -errno.
 */
static int open_cpus(struct sampler *s)
{
	int opened = 0, err = 0;

	for (int c = 0; c < s->ncpu; c++) {
		struct ring *r = &s->cpu_rings[c];
		int fd = event_open(s, -1, c);

		if (fd == -ENODEV || fd == -EINVAL)	/* an offline CPU */
			continue;
		if (fd < 0) {
			err = fd;
			break;
		}
		err = ring_map(s, fd, s->o.call_graph && s->o.stack_copy > 1024 ?
				      CPU_RING_PAGES_STACK : s->o.call_graph ? ALL_RING_PAGES_CG :
				      ALL_RING_PAGES, r, -1);
		if (err) {
			close(fd);
			s->open_fds--;
			r->fd = -1;
			break;
		}
		opened++;
	}
	if (!err && !opened)
		err = -ENODEV;
	if (err == -EACCES || err == -EPERM) {
		pr_err("perf_event_open on every CPU refused: %s (kernel.perf_event_paranoid is %d)",
		       strerror(-err), caps__perf_paranoid());
		pr_hint("recording every process (-a) needs root or CAP_PERFMON, or 'sysctl "
			"kernel.perf_event_paranoid=0'");
	} else if (err) {
		pr_err("perf_event_open on every CPU: %s", strerror(-err));
	}
	return err;
}

int sampler__new(const struct sampler_opts *o, struct sampler **out)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int err = 0;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->pids = malloc(sizeof(pid_t) * (o->n_pids ? o->n_pids : 1));
	if (!s->pids) {
		free(s);
		return -ENOMEM;
	}
	memcpy(s->pids, o->pids, sizeof(pid_t) * o->n_pids);
	s->o.pids = s->pids;
	s->page = (size_t)sysconf(_SC_PAGESIZE);
	s->max_fds = raise_nofile();
	s->ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (s->ncpu < 1)
		s->ncpu = 1;
	if (o->system_wide)
		s->o.inherit = false;	/* a CPU-wide event sees every task already */
	if (o->inherit || o->system_wide) {
		s->cpu_rings = calloc(s->ncpu, sizeof(*s->cpu_rings));
		if (!s->cpu_rings) {
			sampler__delete(s);
			return -ENOMEM;
		}
		for (int c = 0; c < s->ncpu; c++)
			s->cpu_rings[c].fd = -1;
	}
	sampler__set_attr(s);
	/* the build-id in mmap2 records is from Linux 5.12: without it, dev/inode */
	{
		struct perf_event_attr probe = s->attr;
		int fd;

		probe.exclude_kernel = 1;
		fd = perf_event_open(&probe, 0, -1);
		if (fd >= 0) {
			close(fd);
		} else if (errno == EINVAL) {
			s->attr.build_id = 0;
			pr_debug(1, "no build-ids in mmap records on this kernel");
		}
	}
	if (o->system_wide) {
		err = open_cpus(s);
		if (err) {
			sampler__delete(s);
			return err;
		}
		*out = s;
		return 0;
	}
	for (size_t p = 0; p < o->n_pids && !err; p++) {
		err = proc__exists(o->pids[p]);
		if (!err)
			err = scan_process(s, o->pids[p], true);
		if (err > 0)
			err = 0;
		if (err) {
			report_open_error(s, o->pids[p], err);
			break;
		}
	}
	/* threads started while we opened: not inherited when their creator was not open yet */
	if (!err && o->inherit && !o->enable_on_exec) {
		peek_forks(s);
		for (size_t p = 0; p < o->n_pids; p++)
			if (scan_process(s, o->pids[p], false) == -ENOMEM)
				err = -ENOMEM;
	}
	if (!err && !s->n)
		err = -ESRCH;
	if (err) {
		if (err == -ESRCH && o->n_pids)
			report_open_error(s, o->pids[0], err);
		sampler__delete(s);
		return err;
	}
	s->processes_seen = o->n_pids;
	*out = s;
	return 0;
}

bool sampler__user_only(const struct sampler *s)
{
	return s->attr.exclude_kernel;
}

void sampler__exec_done(struct sampler *s)
{
	s->attr.disabled = 0;
	s->attr.enable_on_exec = 0;
}

/* Copy len bytes at offset off (mod size) of the ring into dst. */
static void ring_copy(const unsigned char *data, uint64_t size, uint64_t off, void *dst,
		      size_t len)
{
	size_t first;

	off &= size - 1;
	first = size - off < len ? (size_t)(size - off) : len;
	memcpy(dst, data + off, first);
	memcpy((unsigned char *)dst + first, data, len - first);
}

/* The time of a record: samples carry it after ip and pid/tid, others at their end. */
static uint64_t record_time(const struct perf_event_header *h)
{
	const unsigned char *rec = (const unsigned char *)h;
	uint64_t t;

	if (h->type == PERF_RECORD_SAMPLE)
		memcpy(&t, rec + sizeof(*h) + 16, 8);
	else
		memcpy(&t, rec + h->size - 8, 8);
	return t;
}

static int pend_push(struct sampler *s, const unsigned char *data, uint64_t size, uint64_t off,
		     uint32_t len)
{
	struct pending *p;

	if (ALLOC_GROW(s->pend, s->n_pend + 1, s->cap_pend, 1024))
		return -ENOMEM;
	if (ALLOC_GROW(s->arena, s->arena_len + len, s->arena_cap, 65536))
		return -ENOMEM;
	ring_copy(data, size, off, s->arena + s->arena_len, len);
	p = &s->pend[s->n_pend++];
	p->off = s->arena_len;
	p->len = len;
	p->seq = s->seq++;
	p->time = record_time((const struct perf_event_header *)(s->arena + s->arena_len));
	s->arena_len += len;
	return 0;
}

/* Which records we keep: the rest (throttle, unthrottle...) are dropped at once. */
static bool wanted(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_MMAP2:
		return true;
	default:
		return false;
	}
}

/* Copy a ring's records into the pending list; count lost ones. */
static void ring_read(struct sampler *s, struct ring *r)
{
	struct perf_event_mmap_page *mp = r->base;
	unsigned char *data;
	uint64_t size, head, tail;

	if (!mp)
		return;
	data = (unsigned char *)r->base + mp->data_offset;
	size = mp->data_size;
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	while (tail < head) {
		struct perf_event_header hdr;

		ring_copy(data, size, tail, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail)
			break;	/* damaged: drop the rest */
		if (hdr.type == PERF_RECORD_LOST && hdr.size >= sizeof(hdr) + 16) {
			uint64_t v[2];

			ring_copy(data, size, tail + sizeof(hdr), v, sizeof(v));
			s->lost += v[1];	/* u64 id, u64 lost */
		} else if (wanted(hdr.type) && hdr.size >= sizeof(hdr) + 24) {
			if (pend_push(s, data, size, tail, hdr.size))
				s->lost++;	/* out of memory: counted as lost */
		}
		tail += hdr.size;
	}
	__atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
}

static void peek_forks(struct sampler *s)
{
	for (int c = 0; c < s->ncpu; c++) {
		struct perf_event_mmap_page *mp = s->cpu_rings[c].base;
		unsigned char *data;
		uint64_t size, head, tail;

		if (!mp)
			continue;
		data = (unsigned char *)mp + mp->data_offset;
		size = mp->data_size;
		head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
		for (tail = mp->data_tail; tail < head;) {
			struct perf_event_header hdr;
			uint32_t ids[4];	/* pid, ppid, tid, ptid */

			ring_copy(data, size, tail, &hdr, sizeof(hdr));
			if (hdr.size < sizeof(hdr) || hdr.size > head - tail)
				break;
			if (hdr.type == PERF_RECORD_FORK) {
				ring_copy(data, size, tail + sizeof(hdr), ids, sizeof(ids));
				hashmap__set(&s->forked, ids[2], 1);
			}
			tail += hdr.size;
		}
	}
}

static int pend_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Fill ev from the record; false when it is malformed. */
static bool parse(struct sampler *s, const unsigned char *rec, struct sampler_event *ev)
{
	const struct perf_event_header *h = (const void *)rec;
	const unsigned char *p = rec + sizeof(*h), *end = rec + h->size;
	uint32_t u[4];

	memset(ev, 0, sizeof(*ev));
	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		uint64_t ip, time, nr = 0;
		unsigned int depth = 0, user = 0, kdepth = 0;
		bool in_kernel = false;

		ev->type = SEV_SAMPLE;
		memcpy(&ip, p, 8);
		memcpy(u, p + 8, 8);
		memcpy(&time, p + 16, 8);
		ev->ip = ip;
		ev->pid = (pid_t)u[0];
		ev->tid = (pid_t)u[1];
		ev->time = time;
		ev->kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
		p += 24;
		if (s->o.call_graph) {
			if (p + 8 > end)
				return false;
			memcpy(&nr, p, 8);
			p += 8;
			if (ev->kernel)	/* the chain holds the user frames only */
				s->chain[depth++] = ip;
			for (uint64_t i = 0; i < nr && depth < MAX_CHAIN && p + 8 * (i + 1) <= end;
			     i++) {
				uint64_t a;

				memcpy(&a, p + 8 * i, 8);
				if (a >= (uint64_t)-4095) {	/* PERF_CONTEXT_MAX */
					/* a context marker: the kernel's frames come aside */
					in_kernel = a == (uint64_t)PERF_CONTEXT_KERNEL;
					continue;
				}
				if (in_kernel) {
					if (kdepth < MAX_CHAIN)
						s->kchain[kdepth++] = a;
					continue;
				}
				/*
				 * The chain holds user frames: a kernel address
				 * there is a frame-pointer walk gone wrong (code
				 * without them, the dynamic loader at start-up),
				 * and so is all that follows it; a zero return
				 * address ends it (stored minus 1 it would read
				 * as the kernel's last address).
				 */
				if (kernel_syms__is_kernel(a) || !a)
					break;
				/*
				 * The first user entry is where the thread was (the
				 * sampled IP, or where it entered the kernel); the
				 * others are return addresses, which point after the
				 * call, often to the next line or into another inline
				 * chain: - 1 is inside the call instruction (as for
				 * heap stacks).
				 */
				s->chain[depth] = user++ ? a - 1 : a;
				depth++;
			}
		}
		ev->chain = s->chain;
		ev->depth = depth;
		ev->kchain = s->kchain;
		ev->kdepth = ev->kernel ? kdepth : 0;
		if (!(s->o.call_graph && s->o.stack_copy) && (s->attr.sample_type & PERF_SAMPLE_REGS_USER)) {
			uint64_t abi;

			/* the user %rip alone (user_ip) */
			if (nr > (uint64_t)(end - p) / 8)
				return false;
			p += 8 * nr;
			if (p + 8 > end)
				return false;
			memcpy(&abi, p, 8);
			p += 8;
			if (abi) {
				if (p + 8 > end)
					return false;
				memcpy(&ev->user_ip, p, 8);
			}
		}
		if (s->o.call_graph && s->o.stack_copy) {
			uint64_t abi, size, dyn;

			if (nr > (uint64_t)(end - p) / 8)
				return false;
			p += 8 * nr;
			if (p + 8 > end)
				return false;
			memcpy(&abi, p, 8);
			p += 8;
			if (abi) {	/* PERF_SAMPLE_REGS_ABI_64 (or 32): the registers */
				if (p + 24 > end)
					return false;
				memcpy(ev->regs, p, 24);	/* bp, sp, ip: in bit order */
				p += 24;
				ev->user_regs = abi == PERF_SAMPLE_REGS_ABI_64;
				ev->user_ip = ev->regs[SREG_IP];
			}
			if (p + 8 > end)
				return false;
			memcpy(&size, p, 8);
			p += 8;
			if (size) {
				if (size > (uint64_t)(end - p) || (uint64_t)(end - p) - size < 8)
					return false;
				memcpy(&dyn, p + size, 8);
				ev->stack = p;
				ev->stack_len = dyn < size ? dyn : size;
			}
		}
		return true;
	}
	case PERF_RECORD_COMM:
		ev->type = SEV_COMM;
		memcpy(u, p, 8);
		ev->pid = (pid_t)u[0];
		ev->tid = (pid_t)u[1];
		ev->comm = (const char *)p + 8;
		if (!memchr(ev->comm, '\0', end - p - 8))
			return false;
		ev->exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		ev->type = h->type == PERF_RECORD_FORK ? SEV_FORK : SEV_EXIT;
		memcpy(u, p, 16);
		ev->pid = (pid_t)u[0];
		ev->ppid = (pid_t)u[1];
		ev->tid = (pid_t)u[2];
		ev->ptid = (pid_t)u[3];
		break;
	case PERF_RECORD_MMAP2: {
		uint64_t v[3];

		if (p + 64 > end)
			return false;
		ev->type = SEV_MMAP;
		memcpy(u, p, 8);
		ev->pid = (pid_t)u[0];
		ev->tid = (pid_t)u[1];
		memcpy(v, p + 8, 24);
		ev->start = v[0];
		ev->len = v[1];
		ev->pgoff = v[2];
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			ev->build_id_len = p[32] <= 20 ? p[32] : 20;
			ev->build_id = p + 36;
		}
		memcpy(&ev->prot, p + 56, 4);
		ev->filename = (const char *)p + 64;
		if (!memchr(ev->filename, '\0', end - p - 64))
			return false;
		break;
	}
	default:
		return false;
	}
	ev->time = record_time(h);
	return true;
}

/* Thread bookkeeping from the records: counts, and the events of exited threads. */
static void account(struct sampler *s, const struct sampler_event *ev)
{
	if (ev->type == SEV_FORK && s->o.inherit) {
		s->threads_seen++;
		s->threads_live++;
		if (ev->pid != ev->ppid)
			s->processes_seen++;
		hashmap__set(&s->forked, (uint64_t)ev->tid, 1);
	} else if (ev->type == SEV_EXIT && s->o.inherit) {
		struct thread_ev *t = find_thread(s, s->n, ev->tid);

		if (s->threads_live)
			s->threads_live--;
		hashmap__remove(&s->forked, (uint64_t)ev->tid);
		if (t && !t->gone)
			t->gone = true;	/* closed after this drain */
	}
}

uint64_t sampler__drain(struct sampler *s, bool all, sampler_cb cb, void *ctx)
{
	uint64_t n = 0, cutoff = all ? UINT64_MAX : now_ns() - HOLD_NS;
	size_t keep = 0, done = 0, arena_keep = 0;

	if (s->cpu_rings)
		for (int c = 0; c < s->ncpu; c++)
			ring_read(s, &s->cpu_rings[c]);
	for (size_t i = 0; i < s->n; i++)
		ring_read(s, &s->t[i].ring);
	if (s->n_pend)
		qsort(s->pend, s->n_pend, sizeof(*s->pend), pend_cmp);
	for (; done < s->n_pend && s->pend[done].time <= cutoff; done++) {
		struct sampler_event ev;

		if (!parse(s, s->arena + s->pend[done].off, &ev))
			continue;
		account(s, &ev);
		cb(ctx, &ev);
		if (ev.type == SEV_SAMPLE)
			n++;
	}
	/* the records kept back move to the front of the arena */
	if (done < s->n_pend) {
		unsigned char *tmp = NULL;
		size_t len = 0;

		for (size_t i = done; i < s->n_pend; i++)
			len += s->pend[i].len;
		tmp = malloc(len);
		if (tmp) {
			for (size_t i = done; i < s->n_pend; i++) {
				memcpy(tmp + arena_keep, s->arena + s->pend[i].off, s->pend[i].len);
				s->pend[keep] = s->pend[i];
				s->pend[keep].off = arena_keep;
				arena_keep += s->pend[i].len;
				keep++;
			}
			memcpy(s->arena, tmp, arena_keep);
			free(tmp);
		} else {
			s->lost += s->n_pend - done;
		}
	}
	s->n_pend = keep;
	s->arena_len = arena_keep;
	s->samples += n;

	/* threads that exited: their events go (with inherit, not the rings) */
	keep = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (s->t[i].gone)
			thread_close(s, &s->t[i]);
		else
			s->t[keep++] = s->t[i];
	}
	s->n = keep;
	return n;
}

void sampler__stats(const struct sampler *s, struct sampler_stats *st)
{
	st->samples = s->samples;
	st->lost = s->lost;
	st->threads = s->o.inherit ? s->threads_live : s->n;
	st->threads_seen = s->threads_seen;
	st->processes_seen = s->processes_seen;
}

void sampler__delete(struct sampler *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		thread_close(s, &s->t[i]);
	if (s->cpu_rings) {
		for (int c = 0; c < s->ncpu; c++) {
			ring_close(&s->cpu_rings[c]);
			if (s->cpu_rings[c].fd >= 0)
				close(s->cpu_rings[c].fd);
		}
	}
	free(s->cpu_rings);
	free(s->t);
	free(s->scan);
	free(s->pend);
	free(s->arena);
	free(s->pids);
	hashmap__free(&s->forked);
	free(s);
}
