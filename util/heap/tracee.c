/*
 * A running process under ptrace while rsprof injects the heap tracker
 * (util/heap/inject.c): PTRACE_SEIZE and PTRACE_INTERRUPT on every thread
 * (PTRACE_O_TRACECLONE: a thread started meanwhile is seized at birth),
 * one thread made to call functions of the process, everything put back.
 *
 * A call: the thread's registers set for the function (arguments in
 * registers, data below its stack pointer past the red zone, the stack
 * aligned as the ABI wants it), its return address an int3 instruction of
 * the process's code (the sentinel), so that the return stops it with a
 * SIGTRAP rsprof takes. Meanwhile every signal but the synchronous ones is
 * blocked in that thread (PTRACE_SETSIGMASK): a signal sent to it waits
 * for its own code. orig_rax is -1 during a call, so that a system call the
 * thread was inside is not restarted into the call; the thread's own
 * registers, vector state (PTRACE_GETREGSET NT_X86_XSTATE), signal mask and
 * errno are put back at a signal-delivery stop, where the kernel then
 * restarts the system call it was in, as it would after a signal without
 * a handler.
 */
#include "util/heap/tracee.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "util/array.h"
#include "util/error.h"
#include "util/record/proc.h"

#ifndef PTRACE_GETSIGMASK
#define PTRACE_GETSIGMASK	0x420a
#define PTRACE_SETSIGMASK	0x420b
#endif
#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE		0x202
#endif

#define XSTATE_MAX	(64 * 1024)
#define STOP_WAIT_MS	5000
#define CALL_WAIT_MS	60000

struct thr {
	pid_t tid;
	bool stopped;
	int sig;		/* a signal it stopped for: delivered when let go */
	bool clone_stop;	/* stopped reporting a new thread */
	struct user_regs_struct regs;
};

struct tracee {
	pid_t pid;
	struct thr *v;
	size_t n, cap;
	struct tracee_thread *view;

	pid_t h;		/* the hijacked thread; 0: none */
	struct user_regs_struct saved;
	unsigned char *xstate;
	size_t xstate_len;
	uint64_t sigmask;
	bool mask_saved;
	uint64_t errno_addr;
	int errno_val;
	uint64_t sentinel, sp;
	int redeliver;		/* a signal for it that came during a call */
	bool group_stop;	/* the process was stopped meanwhile: stopped again at the end */
};

static struct thr *thr_of(struct tracee *t, pid_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].tid == tid)
			return &t->v[i];
	return NULL;
}

static struct thr *thr_add(struct tracee *t, pid_t tid)
{
	struct thr *v;

	if (ALLOC_GROW(t->v, t->n + 1, t->cap, 16))
		return NULL;
	v = &t->v[t->n++];
	memset(v, 0, sizeof(*v));
	v->tid = tid;
	return v;
}

static void thr_remove(struct tracee *t, struct thr *r)
{
	*r = t->v[--t->n];
}

static void nap(unsigned int *us)
{
	struct timespec ts = { 0, (long)*us * 1000 };

	nanosleep(&ts, NULL);
	if (*us < 2000)
		*us *= 2;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * One stop of thread r (WNOHANG): 1 stopped, 0 not yet, -ESRCH gone.
 * A thread it starts is added, seized already.
 */
static int poll_stop(struct tracee *t, struct thr *r)
{
	int st, sig, ev;
	pid_t w = waitpid(r->tid, &st, __WALL | WNOHANG);

	if (!w)
		return 0;
	if (w < 0)
		return errno == EINTR ? 0 : -ESRCH;
	if (WIFEXITED(st) || WIFSIGNALED(st))
		return -ESRCH;
	if (!WIFSTOPPED(st))
		return 0;
	sig = WSTOPSIG(st);
	ev = st >> 16;
	if (ev == PTRACE_EVENT_CLONE) {
		unsigned long msg = 0;

		if (!ptrace(PTRACE_GETEVENTMSG, r->tid, NULL, &msg) && msg && !thr_of(t, (pid_t)msg))
			thr_add(t, (pid_t)msg);		/* it reports a stop of its own */
		r->clone_stop = true;
	} else if (ev == PTRACE_EVENT_STOP) {
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			t->group_stop = true;
	} else if (!ev) {
		r->sig = sig;	/* a signal it was about to take: it gets it when let go */
	}
	r->stopped = true;
	return 1;
}

/* Wait for every seized thread to stop. */
static int wait_all(struct tracee *t)
{
	uint64_t end = now_ms() + STOP_WAIT_MS;
	unsigned int us = 20;

	for (;;) {
		bool all = true;

		for (size_t i = 0; i < t->n;) {
			struct thr *r = &t->v[i];
			int rc = r->stopped ? 1 : poll_stop(t, r);

			if (rc < 0) {
				thr_remove(t, r);	/* it exited */
				continue;
			}
			all &= rc == 1;
			i++;
		}
		if (all)
			return 0;
		if (now_ms() > end)
			return -ETIMEDOUT;
		nap(&us);
	}
}

/*
 * Is thread tid of pid on its way out (a zombie, dead, or gone)? Only what
 * /proc says for sure: a stat file that cannot be read for another reason
 * is a live thread (skipping one that runs would let it run on through
 * the injection).
 */
static bool thread_exiting(pid_t pid, pid_t tid)
{
	char path[80], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0 && errno == ESRCH) {
		close(fd);
		return true;
	}
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* the state follows the last ')' (comm may hold parentheses) */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/*
 * Is thread tid of pid traced by this process already? A thread started by
 * one seized meanwhile is (PTRACE_O_TRACECLONE), before its parent's clone
 * event has been read.
 */
static bool traced_by_us(pid_t pid, pid_t tid)
{
	char path[80], line[128];
	bool ours = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "TracerPid:", 10)) {
			ours = strtol(line + 10, NULL, 10) == (long)getpid();
			break;
		}
	fclose(f);
	return ours;
}

/*
 * PTRACE_SEIZE of thread tid: 0 seized, 1 gone, 2 traced by us already
 * (started by a seized thread: it reports a stop of its own), or -errno. A
 * thread that is exiting refuses with EPERM (the kernel has set its exit
 * state): for a thread other than the main one that is its end, not a
 * refusal, told apart by its state, for up to 20 ms while it finishes.
 */
static int seize(pid_t pid, pid_t tid)
{
	unsigned int us = 250;
	uint64_t end = now_ms() + 20;
	int e;

	for (;;) {
		if (!ptrace(PTRACE_SEIZE, tid, NULL, (void *)PTRACE_O_TRACECLONE))
			return 0;
		e = errno;
		if (e == ESRCH)
			return 1;	/* gone meanwhile */
		if (e != EPERM || tid == pid)
			return -e;
		if (traced_by_us(pid, tid))
			return 2;
		if (thread_exiting(pid, tid))
			return 1;
		if (now_ms() > end)
			return -e;
		nap(&us);
	}
}

/* Seize and interrupt every thread of the process not seized yet. */
static int seize_new(struct tracee *t)
{
	pid_t *tids = NULL;
	size_t n = 0, cap = 0;
	bool added = true;
	int err = 0;

	while (added && !err) {
		added = false;
		n = 0;
		err = proc__threads(t->pid, &tids, &n, &cap);
		for (size_t i = 0; i < n && !err; i++) {
			struct thr *r;

			if (thr_of(t, tids[i]))
				continue;
			err = seize(t->pid, tids[i]);
			if (err == 1) {
				err = 0;	/* gone meanwhile */
				continue;
			}
			if (err < 0)
				continue;
			r = thr_add(t, tids[i]);
			if (!r) {
				ptrace(PTRACE_DETACH, tids[i], NULL, NULL);
				err = -ENOMEM;
				break;
			}
			if (!err)
				ptrace(PTRACE_INTERRUPT, tids[i], NULL, NULL);
			err = 0;
			added = true;
		}
	}
	free(tids);
	return err;
}

static int read_regs(struct tracee *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].tid != t->h && ptrace(PTRACE_GETREGS, t->v[i].tid, NULL, &t->v[i].regs))
			return -errno;
	return 0;
}

int tracee__stop_all(pid_t pid, struct tracee **out)
{
	struct tracee *t = calloc(1, sizeof(*t));
	int err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->pid = pid;
	err = tracee__restop(t);
	if (err) {
		pr_debug(1, "heap: cannot stop the threads of process %d: %s", (int)pid,
			 strerror(-err));
		tracee__delete(t);
		return err;
	}
	*out = t;
	return 0;
}

int tracee__restop(struct tracee *t)
{
	int err;

	/* threads may start while others are being stopped: until none does */
	for (int round = 0; round < 100; round++) {
		size_t before = t->n;

		err = seize_new(t);
		if (!err)
			err = wait_all(t);
		if (err)
			return err;
		err = seize_new(t);	/* any thread that started unseen */
		if (err)
			return err;
		if (t->n == before || round > 0) {
			bool all = true;

			for (size_t i = 0; i < t->n; i++)
				all &= t->v[i].stopped;
			if (all)
				return read_regs(t);
		}
	}
	return -EAGAIN;
}

const struct tracee_thread *tracee__threads(const struct tracee *t, size_t *n)
{
	struct tracee *m = (struct tracee *)t;
	struct tracee_thread *v = realloc(m->view, (t->n ? t->n : 1) * sizeof(*v));
	size_t k = 0;

	*n = 0;
	if (!v)
		return NULL;
	m->view = v;
	for (size_t i = 0; i < t->n; i++) {
		const struct thr *r = &t->v[i];

		if (r->tid == t->h)
			continue;
		v[k].tid = r->tid;
		v[k].regs = r->regs;
		v[k].in_syscall = (long long)r->regs.orig_rax >= 0;
		v[k].callable = !r->clone_stop && !r->sig;
		k++;
	}
	*n = k;
	return v;
}

static void let_go(struct tracee *t, struct thr *r)
{
	ptrace(PTRACE_DETACH, r->tid, NULL, (void *)(long)r->sig);
}

void tracee__release_others(struct tracee *t, pid_t keep)
{
	for (size_t i = 0; i < t->n;) {
		struct thr *r = &t->v[i];

		if (r->tid == keep) {
			i++;
			continue;
		}
		let_go(t, r);
		thr_remove(t, r);
	}
}

/* --- calls --------------------------------------------------------------- */

int tracee__read(struct tracee *t, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { .iov_base = buf, .iov_len = len };
	struct iovec r = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_readv(t->pid, &l, 1, &r, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

int tracee__write(struct tracee *t, uint64_t addr, const void *buf, size_t len)
{
	struct iovec l = { .iov_base = (void *)buf, .iov_len = len };
	struct iovec r = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_writev(t->pid, &l, 1, &r, 1, 0);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

int tracee__poke(struct tracee *t, uint64_t addr, const void *buf, size_t len)
{
	pid_t tid = t->h ? t->h : t->n ? t->v[0].tid : 0;
	const unsigned char *b = buf;

	if (!tid)
		return -ESRCH;
	while (len) {
		uint64_t a = addr & ~7ULL, word;
		size_t off = addr - a, k = len < 8 - off ? len : 8 - off;

		errno = 0;
		word = (uint64_t)ptrace(PTRACE_PEEKDATA, tid, (void *)(uintptr_t)a, NULL);
		if (errno)
			return -errno;
		memcpy((unsigned char *)&word + off, b, k);
		if (ptrace(PTRACE_POKEDATA, tid, (void *)(uintptr_t)a, (void *)(uintptr_t)word))
			return -errno;
		addr += k;
		b += k;
		len -= k;
	}
	return 0;
}

int tracee__push(struct tracee *t, const void *data, size_t len, uint64_t *addr)
{
	t->sp = (t->sp - len) & ~15ULL;
	*addr = t->sp;
	return tracee__write(t, t->sp, data, len);
}

/* Wait for the hijacked thread's return to the sentinel: 0, or -errno. */
static int wait_return(struct tracee *t, uint64_t *ret)
{
	uint64_t end = now_ms() + CALL_WAIT_MS;
	unsigned int us = 20;

	for (;;) {
		struct user_regs_struct r;
		int st, sig, ev;
		pid_t w = waitpid(t->h, &st, __WALL | WNOHANG);

		if (w < 0 && errno != EINTR)
			return -ESRCH;
		if (w <= 0) {
			if (now_ms() > end) {
				pr_warn("a thread of process %d has not returned from the heap "
					"tracker's set-up for %d s", (int)t->pid, CALL_WAIT_MS / 1000);
				end = now_ms() + CALL_WAIT_MS;
			}
			nap(&us);
			continue;
		}
		us = 20;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return -ESRCH;
		sig = WSTOPSIG(st);
		ev = st >> 16;
		if (ev == PTRACE_EVENT_CLONE) {
			unsigned long msg = 0;

			/* a thread started by the call: let it go at its first stop */
			if (!ptrace(PTRACE_GETEVENTMSG, t->h, NULL, &msg) && msg) {
				while (waitpid((pid_t)msg, &st, __WALL) < 0 && errno == EINTR)
					;
				ptrace(PTRACE_DETACH, (pid_t)msg, NULL, NULL);
			}
		} else if (ev == PTRACE_EVENT_STOP) {
			if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
				t->group_stop = true;
		} else if (sig == SIGTRAP) {
			if (ptrace(PTRACE_GETREGS, t->h, NULL, &r))
				return -errno;
			if (r.rip == t->sentinel + 1) {
				*ret = r.rax;
				return 0;
			}
			t->redeliver = SIGTRAP;
		} else if (!ev) {
			/* a fault inside the call: give up on it, the thread goes back */
			pr_debug(1, "heap: signal %d in process %d's thread %d during the "
				 "tracker's set-up", sig, (int)t->pid, (int)t->h);
			return -EFAULT;
		}
		if (ptrace(PTRACE_CONT, t->h, NULL, NULL))
			return -errno;
	}
}

int tracee__call(struct tracee *t, uint64_t fn, const uint64_t *args, int n, uint64_t *ret)
{
	struct user_regs_struct r = t->saved;
	uint64_t sp = (t->sp & ~15ULL) - 8;
	int err;

	if (!t->h || n > 6)
		return -EINVAL;
	err = tracee__write(t, sp, &t->sentinel, sizeof(t->sentinel));
	if (err)
		return err;
	r.rip = fn;
	r.rsp = sp;
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1;
	r.eflags &= ~((1ULL << 8) | (1ULL << 10));	/* TF, DF */
	r.rdi = n > 0 ? args[0] : 0;
	r.rsi = n > 1 ? args[1] : 0;
	r.rdx = n > 2 ? args[2] : 0;
	r.rcx = n > 3 ? args[3] : 0;
	r.r8 = n > 4 ? args[4] : 0;
	r.r9 = n > 5 ? args[5] : 0;
	if (ptrace(PTRACE_SETREGS, t->h, NULL, &r) || ptrace(PTRACE_CONT, t->h, NULL, NULL))
		return -errno;
	return wait_return(t, ret);
}

int tracee__hijack(struct tracee *t, pid_t tid, uint64_t sentinel, uint64_t errno_fn)
{
	struct iovec iov;
	uint64_t mask;
	int err;

	if (t->h || !thr_of(t, tid))
		return -EINVAL;
	t->xstate = malloc(XSTATE_MAX);
	if (!t->xstate)
		return -ENOMEM;
	iov.iov_base = t->xstate;
	iov.iov_len = XSTATE_MAX;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &t->saved) ||
	    ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) ||
	    ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof(t->sigmask), &t->sigmask))
		return -errno;
	t->xstate_len = iov.iov_len;
	t->h = tid;
	t->mask_saved = true;
	t->sentinel = sentinel;
	/* below the red zone, with room to spare */
	t->sp = (t->saved.rsp - 128 - 256) & ~15ULL;
	mask = ~0ULL;
	for (int s = 1; s <= 64; s++)
		if (s == SIGTRAP || s == SIGSEGV || s == SIGBUS || s == SIGILL || s == SIGFPE)
			mask &= ~(1ULL << (s - 1));
	if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(mask), &mask))
		return -errno;
	if (errno_fn) {
		err = tracee__call(t, errno_fn, NULL, 0, &t->errno_addr);
		if (!err)
			err = tracee__read(t, t->errno_addr, &t->errno_val, sizeof(t->errno_val));
		if (err) {
			t->errno_addr = 0;
			return err;
		}
	}
	return 0;
}

void tracee__delete(struct tracee *t)
{
	if (!t)
		return;
	if (t->h) {
		struct iovec iov = { .iov_base = t->xstate, .iov_len = t->xstate_len };

		if (t->errno_addr)
			tracee__write(t, t->errno_addr, &t->errno_val, sizeof(t->errno_val));
		ptrace(PTRACE_SETREGS, t->h, NULL, &t->saved);
		if (t->xstate_len)
			ptrace(PTRACE_SETREGSET, t->h, (void *)NT_X86_XSTATE, &iov);
		if (t->mask_saved)
			ptrace(PTRACE_SETSIGMASK, t->h, (void *)sizeof(t->sigmask), &t->sigmask);
		ptrace(PTRACE_DETACH, t->h, NULL, (void *)(long)t->redeliver);
		for (size_t i = 0; i < t->n; i++)
			if (t->v[i].tid == t->h) {
				thr_remove(t, &t->v[i]);
				break;
			}
	}
	tracee__release_others(t, 0);
	if (t->group_stop)
		kill(t->pid, SIGSTOP);
	free(t->xstate);
	free(t->view);
	free(t->v);
	free(t);
}
