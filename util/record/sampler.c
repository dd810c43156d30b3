#include "util/record/sampler.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/record/caps.h"
#include "util/error.h"
#include "util/record/proc.h"

/*
 * Ring sizes in pages (a power of two, plus the header page). At 999 Hz a
 * thread writes ~24 bytes every ms, ~240 bytes per 10 ms drain: 8 pages are
 * ample. Callchains are up to ~1 KB a sample.
 */
#define RING_PAGES	8
#define RING_PAGES_CG	32
#define MAX_CHAIN	127
#define FD_HEADROOM	64

struct thread_ev {
	pid_t tid;
	int fd;
	void *base;		/* header page, then data */
	size_t len;		/* whole mapping */
	bool seen;		/* present in the latest scan */
	bool gone;		/* exited: closed after its ring's last drain */
};

struct sampler {
	struct sampler_opts o;
	struct perf_event_attr attr;
	size_t page;
	struct thread_ev *t;	/* sorted by tid */
	size_t n, cap;
	pid_t *scan;		/* scratch for rescans */
	size_t scan_n, scan_cap;
	uint64_t samples, lost, threads_seen;
	uint64_t chain[MAX_CHAIN + 1];
	unsigned char tmp[65536];	/* a record wrapping around the ring end (u16 size) */
	bool warned_mlock;
	bool warned_open;
	size_t max_threads;	/* descriptors we may use */
	uint64_t failed_opens;
};

static int perf_event_open(struct perf_event_attr *attr, pid_t tid)
{
	return (int)syscall(SYS_perf_event_open, attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void thread_close(struct thread_ev *t)
{
	if (t->base)
		munmap(t->base, t->len);
	if (t->fd >= 0)
		close(t->fd);
	t->base = NULL;
	t->fd = -1;
}

/* Open and map the event of one thread; -ESRCH when it exited meanwhile. */
static int thread_open(struct sampler *s, pid_t tid, struct thread_ev *t)
{
	size_t pages = s->o.call_graph ? RING_PAGES_CG : RING_PAGES;

	t->tid = tid;
	t->base = NULL;
	t->seen = true;
	t->gone = false;
	if (s->n >= s->max_threads)
		return -EMFILE;
	t->fd = perf_event_open(&s->attr, tid);
	if (t->fd < 0)
		return -errno;
	/*
	 * Unprivileged users share kernel.perf_event_mlock_kb (516 KB): with
	 * many threads, fall back to smaller rings rather than fail.
	 */
	for (; pages >= 1; pages /= 2) {
		t->len = (pages + 1) * s->page;
		t->base = mmap(NULL, t->len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
		if (t->base != MAP_FAILED)
			break;
		t->base = NULL;
		if (errno != EPERM && errno != ENOMEM)
			break;
	}
	if (!t->base) {
		int err = -errno;

		if (!s->warned_mlock && (err == -EPERM || err == -ENOMEM)) {
			pr_warn("cannot map the ring buffer of thread %d: %s", (int)tid,
				strerror(-err));
			pr_hint("raise kernel.perf_event_mlock_kb or run with CAP_IPC_LOCK");
			s->warned_mlock = true;
		}
		close(t->fd);
		t->fd = -1;
		return err;
	}
	s->threads_seen++;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
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

static void report_open_error(const struct sampler *s, int err)
{
	int paranoid = caps__perf_paranoid();

	switch (-err) {
	case ESRCH:
		pr_err("process %d not found", (int)s->o.pid);
		pr_hint("check the PID with 'ps -p %d'", (int)s->o.pid);
		break;
	case EPERM:
	case EACCES:
		pr_err("perf_event_open on process %d refused: %s (kernel.perf_event_paranoid "
		       "is %d)", (int)s->o.pid, strerror(-err), paranoid);
		pr_hint("run as root or with CAP_PERFMON (and CAP_SYS_PTRACE for other users' "
			"processes), or 'sysctl kernel.perf_event_paranoid=1'");
		break;
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		pr_err("this kernel has no cpu-clock perf event: %s", strerror(-err));
		pr_hint("rsprof needs a kernel built with CONFIG_PERF_EVENTS");
		break;
	default:
		pr_err("perf_event_open on process %d: %s", (int)s->o.pid, strerror(-err));
		break;
	}
}

int sampler__rescan(struct sampler *s)
{
	size_t i, j, sorted = s->n;
	int err, changes = 0;

	err = proc__threads(s->o.pid, &s->scan, &s->scan_n, &s->scan_cap);
	if (err)
		return err;
	qsort(s->scan, s->scan_n, sizeof(*s->scan), cmp_pid);
	for (i = 0; i < s->n; i++)
		s->t[i].seen = false;
	for (j = 0; j < s->scan_n; j++) {
		struct thread_ev *t = find_thread(s, sorted, s->scan[j]);

		if (t) {
			t->seen = true;
			continue;
		}
		if (s->n == s->cap) {
			size_t ncap = s->cap ? s->cap * 2 : 16;
			struct thread_ev *nv = realloc(s->t, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			s->t = nv;
			s->cap = ncap;
		}
		err = thread_open(s, s->scan[j], &s->t[s->n]);
		if (err == -ESRCH)	/* exited between the scan and the open */
			continue;
		if (err && s->n) {
			/* one thread we cannot sample does not end the recording */
			if (!s->warned_open) {
				pr_warn("cannot sample thread %d of process %d: %s",
					(int)s->scan[j], (int)s->o.pid, strerror(-err));
				if (err == -EMFILE || err == -ENFILE)
					pr_hint("raise the open files limit (ulimit -n): one per thread");
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
	/* Threads that are gone are closed by the next drain, after a last look at their rings. */
	for (i = 0; i < s->n; i++) {
		if (!s->t[i].seen && !s->t[i].gone) {
			s->t[i].gone = true;
			changes++;
		}
	}
	qsort(s->t, s->n, sizeof(*s->t), cmp_pid);
	return changes;
}

/*
 * One descriptor per thread: a big server has more threads than the soft
 * limit. Returns how many thread events may be open while leaving room for
 * the rest of rsprof (the profile, /proc files, libraries being read).
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

int sampler__new(const struct sampler_opts *o, struct sampler **out)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int err;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->page = (size_t)sysconf(_SC_PAGESIZE);
	s->max_threads = raise_nofile();
	s->attr.size = sizeof(s->attr);
	s->attr.type = PERF_TYPE_SOFTWARE;
	s->attr.config = PERF_COUNT_SW_CPU_CLOCK;
	s->attr.freq = 1;
	s->attr.sample_freq = o->freq;
	s->attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	if (o->call_graph) {
		s->attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		s->attr.exclude_callchain_kernel = 1;
		s->attr.sample_max_stack = MAX_CHAIN;
	}
	s->attr.exclude_kernel = 1;
	s->attr.exclude_hv = 1;
	s->attr.exclude_idle = 1;
	s->attr.wakeup_events = 0;
	if (o->enable_on_exec) {
		s->attr.disabled = 1;
		s->attr.enable_on_exec = 1;
	}
	err = proc__exists(o->pid);
	if (!err)
		err = sampler__rescan(s);
	if (err > 0)
		err = 0;
	if (!err && !s->n)
		err = -ESRCH;
	if (err) {
		report_open_error(s, err);
		sampler__delete(s);
		return err;
	}
	*out = s;
	return 0;
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

static uint64_t drain_one(struct sampler *s, struct thread_ev *t, sampler_cb cb, void *ctx)
{
	struct perf_event_mmap_page *mp = t->base;
	unsigned char *data = (unsigned char *)t->base + mp->data_offset;
	uint64_t size = mp->data_size;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	uint64_t n = 0;

	while (tail < head) {
		struct perf_event_header hdr;
		const unsigned char *rec;

		ring_copy(data, size, tail, &hdr, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail)
			break;	/* damaged: drop the rest */
		if ((tail & (size - 1)) + hdr.size <= size) {
			rec = data + (tail & (size - 1));
		} else {
			ring_copy(data, size, tail, s->tmp, hdr.size);
			rec = s->tmp;
		}
		if (hdr.type == PERF_RECORD_SAMPLE) {
			const uint64_t *p = (const uint64_t *)(rec + sizeof(hdr));
			uint64_t ip = p[0];
			pid_t tid = (pid_t)(p[1] >> 32);
			unsigned int depth = 0;

			if (s->o.call_graph) {
				uint64_t nr = p[2];

				for (uint64_t i = 0; i < nr && depth < MAX_CHAIN; i++) {
					uint64_t a = p[3 + i];

					if (a >= (uint64_t)-4095)	/* PERF_CONTEXT_MAX */
						continue;	/* context marker */
					s->chain[depth++] = a;
				}
			}
			cb(ctx, tid, ip, s->chain, depth);
			n++;
		} else if (hdr.type == PERF_RECORD_LOST) {
			const uint64_t *p = (const uint64_t *)(rec + sizeof(hdr));

			s->lost += p[1];	/* u64 id, u64 lost */
		}
		tail += hdr.size;
	}
	__atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
	return n;
}

uint64_t sampler__drain(struct sampler *s, sampler_cb cb, void *ctx)
{
	uint64_t n = 0;
	size_t keep = 0;

	for (size_t i = 0; i < s->n; i++) {
		n += drain_one(s, &s->t[i], cb, ctx);
		if (s->t[i].gone)
			thread_close(&s->t[i]);
		else
			s->t[keep++] = s->t[i];
	}
	s->n = keep;
	s->samples += n;
	return n;
}

void sampler__stats(const struct sampler *s, struct sampler_stats *st)
{
	st->samples = s->samples;
	st->lost = s->lost;
	st->threads = s->n;
	st->threads_seen = s->threads_seen;
}

void sampler__delete(struct sampler *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		thread_close(&s->t[i]);
	free(s->t);
	free(s->scan);
	free(s);
}
