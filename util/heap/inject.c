/*
 * The in-process heap tracker put into a running process (record -p, -P,
 * top -p): ptrace, no gdb. How, step by step:
 *
 *  1. What would refuse it, asked before any ptrace: Yama's ptrace scope,
 *     a tracer already there, a seccomp filter, a setuid or setgid
 *     process, a stopped one, an address-space limit, not x86-64, static
 *     (no loader), a C library that is not glibc 2.34 or later, an allocator linked into the
 *     executable (no thread can be known to be out of it), a Go program
 *     (its threads run on small goroutine stacks), a tracker of another
 *     build already in it. The caller has checked that the user
 *     may trace the process at all (target__may_trace()).
 *  2. Every thread stopped (util/heap/tracee.c), and one chosen that is at
 *     a safe point: its stack, unwound through the CFI (libdwfl), has no
 *     frame in the loader, in glibc's malloc (the functions of its
 *     malloc.c) or an allocator library (libjemalloc, libmimalloc,
 *     libtcmalloc...), in fork, exit, dlopen & co. or pthread_create, nor
 *     in the tracker: it holds none of the locks dlopen takes. It has room on its
 *     stack and takes a SIGTRAP (the sentinel of its calls). None such: the
 *     threads go on and rsprof looks again, for two seconds.
 *  3. The others go on; the chosen one calls: memfd_create() (the tracker's
 *     bytes written into it by rsprof through pidfd_getfd(), then sealed),
 *     dlopen("/proc/self/fd/N"), memfd_create() for the region (set up by
 *     rsprof), pipe2() (rsprof keeps the write end), then the tracker's
 *     rsprof_heap_attach(), which redirects the GOT slots and maps the page
 *     of hooks rsprof laid out (util/heap/entry-patch.c).
 *  4. Every thread stopped again, none inside the first bytes of glibc's
 *     free, realloc or malloc_usable_size, nor of the entries the tracker
 *     found to hook (an allocator library's malloc family and own API,
 *     mi_malloc, mallocx, tc_malloc...): the jumps written at glibc's, the
 *     tracker's rsprof_heap_hook() called in the chosen thread (it rewrites
 *     the others while no other thread runs), the tracker switched on.
 *     Every thread let go as it was.
 *
 * A later attach finds the tracker in the process (its memfd's name
 * carries its build id) and calls rsprof_heap_attach() again. The end
 * (heap_inject__delete()): rsprof_heap_detach() at a safe point, or, when
 * that cannot be, the pipe closed: the tracker stops by itself.
 */
#include "util/heap/inject.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "preload/heap-inject.h"
#include "preload/heap-region.h"
#include "util/error.h"
#include "util/heap/alloc-syms.h"
#include "util/heap/dynsym.h"
#include "util/heap/entry-patch.h"
#include "util/heap/history.h"
#include "util/heap/preload.h"
#include "util/heap/safepoint.h"
#include "util/heap/tracee.h"
#include "util/record/caps.h"
#include "util/record/maps.h"

#define FN_READ_MAX	16384

struct range {
	uint64_t lo, hi;
};
#define MFD_CLOEXEC_	1U
#define MFD_SEALING_	2U

struct heap_inject {
	pid_t pid;
	struct heap_region *r;
	size_t size;
	int pipe_w;
	uint64_t lib_lo, lib_hi;	/* the tracker in the process */
	uint64_t detach_fn;		/* its rsprof_heap_detach() */
	bool gone;			/* the process exec'd: the tracker went with it */
	/* what a call at a safe point needs, found at the attach */
	uint64_t sentinel, errno_fn;
	struct safepoint *sp;		/* where no thread may be for it */
};

/* What the process's glibc holds for us. */
struct glibc {
	struct dynsym d;
	uint64_t memfd_create, dlopen, dlerror, close, pipe2, errno_location;
	uint64_t hook_fn[HEAP_HOOK_MAX], hook_size[HEAP_HOOK_MAX];
};

static char why_buf[384];
/* a thread of the process is being made to call: a SIGQUIT waits */
static volatile sig_atomic_t busy, quit_pending;

bool heap_inject__defer_quit(void)
{
	if (busy)
		quit_pending = 1;
	return busy;
}

static void busy_end(void)
{
	busy = 0;
	if (quit_pending) {
		quit_pending = 0;
		raise(SIGQUIT);
	}
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static const char *because(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
	return why_buf;
}

/* --- what the process is ----------------------------------------------------- */

struct status {
	pid_t tracer, nspid;
	int seccomp;
	char state;
	bool shstk;
	unsigned long uid[3], gid[3];
	uint64_t sigign;
};

static int read_status(pid_t pid, struct status *s)
{
	char path[64], line[512];
	FILE *f;

	memset(s, 0, sizeof(*s));
	s->nspid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "TracerPid:", 10))
			s->tracer = (pid_t)strtol(line + 10, NULL, 10);
		else if (!strncmp(line, "Seccomp:", 8))
			s->seccomp = (int)strtol(line + 8, NULL, 10);
		else if (!strncmp(line, "State:", 6))
			sscanf(line + 6, " %c", &s->state);
		else if (!strncmp(line, "Uid:", 4))
			sscanf(line + 4, "%lu %lu %lu", &s->uid[0], &s->uid[1], &s->uid[2]);
		else if (!strncmp(line, "Gid:", 4))
			sscanf(line + 4, "%lu %lu %lu", &s->gid[0], &s->gid[1], &s->gid[2]);
		else if (!strncmp(line, "SigIgn:", 7))
			s->sigign = strtoull(line + 7, NULL, 16);
		else if (!strncmp(line, "x86_Thread_features:", 20))
			s->shstk = strstr(line, "shstk") != NULL;
		else if (!strncmp(line, "NSpid:", 6)) {
			char *p = line + 6, *end;

			for (long v; v = strtol(p, &end, 10), end != p; p = end)
				s->nspid = (pid_t)v;
		}
	}
	fclose(f);
	return 0;
}

static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* Is rsprof an ancestor of pid (Yama scope 1 lets a process trace its descendants)? */
static bool is_ancestor(pid_t pid)
{
	pid_t me = getpid();

	for (int i = 0; i < 64 && pid > 1; i++) {
		char path[64], line[256];
		pid_t pp = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		f = fopen(path, "re");
		if (!f)
			return false;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "PPid:", 5))
				pp = (pid_t)strtol(line + 5, NULL, 10);
		fclose(f);
		if (pp == me)
			return true;
		pid = pp;
	}
	return false;
}

/* AT_BASE of pid's auxiliary vector: its loader; 0: none (static). */
static int loader_base(pid_t pid, uint64_t *base)
{
	char path[64];
	uint64_t v[2];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*base = 0;
	while (read(fd, v, sizeof(v)) == sizeof(v) && v[0] != AT_NULL)
		if (v[0] == AT_BASE)
			*base = v[1];
	close(fd);
	return 0;
}

/* Is the file a Go program (a .go.buildinfo section)? */
static bool go_program(const char *exe)
{
	int fd = open(exe, O_RDONLY | O_CLOEXEC);
	bool go = false;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && !elf_getshdrstrndx(e, &shstrndx)) {
		while (!go && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (gelf_getshdr(scn, &sh) && (name = elf_strptr(e, shstrndx, sh.sh_name)))
				go = !strcmp(name, ".go.buildinfo");
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return go;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* The mapping at offset 0 of the object whose mapping holds addr. */
static const struct map *first_map(const struct maps *m, uint64_t addr)
{
	const struct map *x = maps__find(m, addr);

	if (!x || !x->path)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].path && !strcmp(m->v[i].path, x->path) && !m->v[i].pgoff &&
		    m->v[i].inode == x->inode)
			return &m->v[i];
	return NULL;
}

/* The extent of the mappings of the file mapped at x. */
static struct range file_range(const struct maps *m, const struct map *x)
{
	struct range r = { UINT64_MAX, 0 };

	for (size_t i = 0; i < m->n; i++) {
		if (!m->v[i].path || strcmp(m->v[i].path, x->path) || m->v[i].inode != x->inode)
			continue;
		if (m->v[i].start < r.lo)
			r.lo = m->v[i].start;
		if (m->v[i].end > r.hi)
			r.hi = m->v[i].end;
	}
	return r;
}

/* "/memfd:librsprof-heap.so.<build id> (deleted)": the build id in it; NULL: not ours. */
static const char *tracker_memfd(const char *path)
{
	static const char pre[] = "/memfd:" HEAP_INJECT_MEMFD ".";

	return path && !strncmp(path, pre, sizeof(pre) - 1) ? path + sizeof(pre) - 1 : NULL;
}

static void hex(const unsigned char *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = '\0';
}

/* --- the tracker's bytes ------------------------------------------------------ */

struct tracker {
	const unsigned char *p;
	size_t len;
	void *buf;
	struct dynsym d;
	char id[48];		/* its build id in hex */
	uint64_t attach, detach, hook, fn[HEAP_HOOK_MAX];
};

static int tracker_load(struct tracker *t)
{
	static const char *const hooks[HEAP_HOOK_MAX] = {
		"rsprof_hook_free", "rsprof_hook_realloc", "rsprof_hook_usable",
	};
	int err = heap_tracker__bytes(&t->p, &t->len, &t->buf);

	if (err)
		return err;
	err = dynsym__load_buf(t->p, t->len, &t->d);
	if (err)
		return err;
	hex(t->d.build_id, t->d.build_id_len, t->id);
	if (!t->d.build_id_len || !dynsym__find(&t->d, HEAP_INJECT_ENTRY, &t->attach, NULL) ||
	    !dynsym__find(&t->d, "rsprof_heap_detach", &t->detach, NULL) ||
	    !dynsym__find(&t->d, HEAP_INJECT_HOOK, &t->hook, NULL))
		return -ENOEXEC;
	for (int i = 0; i < HEAP_HOOK_MAX; i++)
		if (!dynsym__find(&t->d, hooks[i], &t->fn[i], NULL))
			return -ENOEXEC;
	return 0;
}

static void tracker_free(struct tracker *t)
{
	dynsym__free(&t->d);
	free(t->buf);
}

/* --- glibc in the process ---------------------------------------------------- */

static int glibc_load(pid_t pid, const struct maps *m, struct heap_inject *ij, struct glibc *g,
		      const char **why)
{
	static const char *const hooks[HEAP_HOOK_MAX] = { "free", "realloc", "malloc_usable_size" };
	const struct map *lm = NULL;
	uint64_t dummy;

	for (size_t i = 0; i < m->n && !lm; i++) {
		const char *b = m->v[i].path ? base_name(m->v[i].path) : "";

		if (m->v[i].path && m->v[i].path[0] == '/' && !m->v[i].pgoff &&
		    (!strncmp(b, "libc.so.", 8) || !strncmp(b, "libc-", 5)))
			lm = &m->v[i];
	}
	if (!lm || dynsym__load_pid(pid, lm->start, &g->d)) {
		*why = "its C library is not glibc (no libc.so.6 mapped): the tracker needs glibc";
		return -ENOTSUP;
	}
	if (!dynsym__find(&g->d, "__libc_malloc", &dummy, NULL)) {
		*why = "its C library is not glibc";
		return -ENOTSUP;
	}
	if (!dynsym__find(&g->d, "dlopen", &g->dlopen, NULL) ||
	    !dynsym__find(&g->d, "_dl_find_object", &dummy, NULL) ||
	    !dynsym__find(&g->d, "memfd_create", &g->memfd_create, NULL) ||
	    !dynsym__find(&g->d, "dlerror", &g->dlerror, NULL) ||
	    !dynsym__find(&g->d, "close", &g->close, NULL) ||
	    !dynsym__find(&g->d, "pipe2", &g->pipe2, NULL) ||
	    !dynsym__find(&g->d, "__errno_location", &g->errno_location, NULL)) {
		*why = "its glibc is older than 2.35 (the tracker needs dlopen and _dl_find_object "
		       "in libc.so.6)";
		return -ENOTSUP;
	}
	for (int i = 0; i < HEAP_HOOK_MAX; i++)
		if (!dynsym__find(&g->d, hooks[i], &g->hook_fn[i], &g->hook_size[i]) ||
		    !g->hook_size[i]) {
			*why = "its glibc has no free, realloc or malloc_usable_size to hook";
			return -ENOTSUP;
		}
	safepoint__add_glibc(ij->sp, &g->d);
	return 0;
}

/* An int3 instruction in glibc's code: the return address of calls. */
static int find_sentinel(pid_t pid, const struct dynsym *d, uint64_t *at)
{
	unsigned char buf[4096];

	for (uint64_t a = d->text_lo; a + sizeof(buf) <= d->text_hi; a += sizeof(buf)) {
		struct iovec l = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct iovec r = { .iov_base = (void *)(uintptr_t)a, .iov_len = sizeof(buf) };
		unsigned char *p;

		if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)sizeof(buf))
			return -EFAULT;
		p = memchr(buf, 0xcc, sizeof(buf));
		if (p) {
			*at = a + (uint64_t)(p - buf);
			return 0;
		}
	}
	return -ENOENT;
}

/* --- refusals before any ptrace ----------------------------------------------- */

/* Is the ELF file at path an x86-64 one (not i386, x32, another machine)? */
static bool x86_64(const char *path)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return true;	/* unreadable: said by the next check */
	ok = read(fd, &eh, sizeof(eh)) != (ssize_t)sizeof(eh) ||
	     memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	     (eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_machine == EM_X86_64);
	close(fd);
	return ok;
}

static const char *refusal(pid_t pid, const struct status *st, const struct maps *m,
			   const struct tracker *tr, uint64_t *loaded)
{
	char exe[64];
	struct alloc_exe x;
	struct rlimit as;
	uint64_t ld;
	int scope = yama_scope();

	*loaded = 0;
	if (scope == 3)
		return "kernel.yama.ptrace_scope is 3: ptrace is disabled until the next boot "
		       "(boot with it lower to inject the heap tracker)";
	if (scope == 2 && !caps__has_ptrace())
		return "kernel.yama.ptrace_scope is 2 (only CAP_SYS_PTRACE may ptrace): give rsprof "
		       "CAP_SYS_PTRACE, or run it as root";
	if (scope == 1 && !caps__has_ptrace() && !is_ancestor(pid))
		return "kernel.yama.ptrace_scope is 1 (only a process's ancestors may ptrace it): "
		       "run 'sysctl kernel.yama.ptrace_scope=0' or give rsprof CAP_SYS_PTRACE";
	if (st->tracer)
		return because("the process is being traced already (by PID %d: a debugger?): "
			       "detach it first", (int)st->tracer);
	if (st->seccomp)
		return "the process runs under a seccomp filter, which could refuse or kill the "
		       "tracker's set-up calls (start it without the filter to inject)";
	if (st->state == 'T' || st->state == 't')
		return "the process is stopped: continue it first (kill -CONT)";
	if (!prlimit(pid, RLIMIT_AS, NULL, &as) && as.rlim_cur != RLIM_INFINITY)
		return "the process has an address-space limit (ulimit -v), against which the "
		       "tracker's region (a few hundred MiB of address space) would count";
	if (st->uid[0] != st->uid[1] || st->uid[0] != st->uid[2] ||
	    st->gid[0] != st->gid[1] || st->gid[0] != st->gid[2])
		return "the process runs a setuid or setgid program: its privileges are not its "
		       "user's, so nothing is injected into it (run a copy without the bit)";
	if (st->shstk)
		return "the process runs with shadow stacks, which the tracker's set-up calls would "
		       "break (GLIBC_TUNABLES=glibc.cpu.x86_shstk=off to inject)";
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (!x86_64(exe))
		return "the process is not an x86-64 program (the tracker and its set-up are "
		       "x86-64's)";
	if (alloc_syms__inspect(exe, &x) || !x.is_elf)
		return "its executable cannot be read as an ELF file";
	if (loader_base(pid, &ld) || !ld || x.is_static)
		return "the executable is statically linked: no loader to add the tracker with "
		       "(link it dynamically to inject)";
	/* a thread stopped inside an allocator may hold its lock, which the
	 * tracker's set-up takes: told by the allocator's code range, which
	 * inside an executable is not known (its functions are local symbols) */
	if (x.own_malloc)
		return because("the executable has its own malloc%s%s%s, not glibc's, and a "
			       "thread stopped inside it cannot be told (launch the program "
			       "under rsprof to track it in-process; uprobes probe it)",
			       x.alloc_name[0] ? " (" : "", x.alloc_name, x.alloc_name[0] ? ")" : "");
	if (x.rust_global && x.alloc_name[0])
		return because("the Rust program's #[global_allocator] is %s, linked into the "
			       "executable, and a thread stopped inside it cannot be told (launch "
			       "the program under rsprof to track it in-process; uprobes probe it)",
			       x.alloc_name);
	if (go_program(exe))
		return "a Go program: its threads run on goroutine stacks too small for the "
		       "tracker's set-up calls";
	for (size_t i = 0; i < m->n; i++) {
		const char *p = m->v[i].path, *b, *id;

		if (!p)
			continue;
		b = base_name(p);
		if (!strcmp(b, HEAP_REGION_SO))
			return "it was launched by rsprof with the heap tracker preloaded (record it "
			       "with that rsprof)";
		id = tracker_memfd(p);
		if (id) {
			if (strncmp(id, tr->id, strlen(tr->id)) || id[strlen(tr->id)] != ' ')
				return "it holds the heap tracker of another rsprof build (attach "
				       "with that rsprof, or restart the process)";
			if (!m->v[i].pgoff)
				*loaded = m->v[i].start;
		}
	}
	return NULL;
}

/* --- the calls ----------------------------------------------------------------- */

static int call(struct tracee *t, uint64_t fn, int n, uint64_t a0, uint64_t a1, uint64_t *ret)
{
	uint64_t args[2] = { a0, a1 };

	return tracee__call(t, fn, args, n, ret);
}

/* fd of the process, dup'ed into rsprof. */
static int grab_fd(pid_t pid, int fd)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), r = -1;

	if (pfd >= 0) {
		r = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
		close(pfd);
	}
	if (r < 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		r = open(path, O_RDWR | O_CLOEXEC);
	}
	return r < 0 ? -errno : r;
}

/* A memfd made by the process (named name): its fd there and here. */
static int make_memfd(struct tracee *t, pid_t pid, const struct glibc *g, const char *name,
		      unsigned int flags, int *theirs, int *mine)
{
	uint64_t at, ret;
	int err = tracee__push(t, name, strlen(name) + 1, &at);

	if (!err)
		err = call(t, g->memfd_create, 2, at, flags, &ret);
	if (err)
		return err;
	if ((int)ret < 0)
		return -EMFILE;
	*theirs = (int)ret;
	*mine = grab_fd(pid, *theirs);
	if (*mine < 0) {
		call(t, g->close, 1, (uint64_t)*theirs, 0, &ret);
		return *mine;
	}
	return 0;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* dlopen() the tracker in the process: the start of its mapping there. */
static int load_tracker(struct tracee *t, pid_t pid, const struct glibc *g,
			const struct tracker *tr, uint64_t *start, const char **why)
{
	char name[96], path[64];
	uint64_t at, ret;
	int theirs, mine, err;
	struct maps *m = NULL;

	snprintf(name, sizeof(name), HEAP_INJECT_MEMFD ".%s", tr->id);
	err = make_memfd(t, pid, g, name, MFD_CLOEXEC_ | MFD_SEALING_, &theirs, &mine);
	if (err) {
		*why = "the process could not make a memfd for the tracker";
		return err;
	}
	err = write_all(mine, tr->p, tr->len);
	if (!err && fcntl(mine, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL))
		err = -errno;
	close(mine);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", theirs);
	if (!err)
		err = tracee__push(t, path, strlen(path) + 1, &at);
	if (!err)
		err = call(t, g->dlopen, 2, at, RTLD_NOW | RTLD_LOCAL, &ret);
	if (!err && !ret) {
		char msg[160] = "";

		if (!call(t, g->dlerror, 0, 0, 0, &ret) && ret)
			tracee__read(t, ret, msg, sizeof(msg) - 1);
		*why = because("dlopen of the tracker failed in the process: %s", msg);
		err = -ENOTSUP;
	}
	call(t, g->close, 1, (uint64_t)theirs, 0, &ret);
	if (err) {
		if (!*why)
			*why = "the tracker could not be loaded into the process";
		return err;
	}
	err = maps__load(pid, &m);
	if (err)
		return err;
	*start = 0;
	for (size_t i = 0; i < m->n && !*start; i++)
		if (tracker_memfd(m->v[i].path) && !m->v[i].pgoff)
			*start = m->v[i].start;
	maps__delete(m);
	if (!*start) {
		*why = "the tracker loaded into the process is not in its mappings";
		return -ENOTSUP;
	}
	return 0;
}

/* A free range near glibc's code for the page of hooks (a rel32 jump reaches it). */
static uint64_t page_near(const struct maps *m, const struct dynsym *libc)
{
	const uint64_t reach = (1ULL << 31) - (1ULL << 24);
	uint64_t best = 0, dist = UINT64_MAX;

	for (size_t i = 0; i + 1 < m->n; i++) {
		uint64_t lo = m->v[i].end + 4096, hi = m->v[i + 1].start - 4096, c;

		if (hi < lo + 4096 || hi <= 0x100000)
			continue;
		/* the end of the gap nearest glibc's code */
		c = hi - 4096 < libc->text_lo ? hi - 4096 : lo;
		if (c < 0x100000)
			continue;
		if (c < libc->text_lo ? libc->text_hi - c < reach : c + 4096 - libc->text_lo < reach) {
			uint64_t d = c < libc->text_lo ? libc->text_lo - c : c - libc->text_hi;

			if (d < dist) {
				dist = d;
				best = c;
			}
		}
	}
	return best;
}

/* Lay out the page of hooks: the jumps at glibc's free, realloc and malloc_usable_size. */
static int plan_hooks(pid_t pid, const struct maps *m, const struct glibc *g, uint64_t lib_base,
		      const struct tracker *tr, struct entry_page *page,
		      struct entry_patch patch[HEAP_HOOK_MAX], const char **why)
{
	unsigned char *code = malloc(FN_READ_MAX);
	int err = 0;

	if (!code)
		return -ENOMEM;
	memset(page, 0, sizeof(*page));
	page->addr = page_near(m, &g->d);
	if (!page->addr) {
		*why = "no room near glibc's code for the tracker's jumps";
		free(code);
		return -ENOTSUP;
	}
	for (int i = 0; i < HEAP_HOOK_MAX && !err; i++) {
		size_t size = g->hook_size[i] < FN_READ_MAX ? g->hook_size[i] : FN_READ_MAX;
		struct iovec l = { .iov_base = code, .iov_len = size };
		struct iovec r = { .iov_base = (void *)(uintptr_t)g->hook_fn[i], .iov_len = size };

		if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)size) {
			err = -EFAULT;
			break;
		}
		err = entry_patch__plan(page, g->hook_fn[i], code, size,
					lib_base + tr->fn[i], &patch[i], why);
		if (err && *why)
			*why = because("glibc's %s cannot be hooked: %s",
				       i == HEAP_HOOK_FREE ? "free" :
				       i == HEAP_HOOK_REALLOC ? "realloc" : "malloc_usable_size", *why);
	}
	free(code);
	return err;
}

/* The region for the process: a memfd it made, set up here. */
static int make_region(struct tracee *t, struct heap_inject *ij, const struct glibc *g,
		       const struct status *st, unsigned int sample, uint64_t sample_bytes,
		       bool history, int *theirs)
{
	struct heap_region h;
	int mine, err;
	void *p;

	heap_region__header(&h, sample ? sample : 1, sample_bytes);
	if (history)
		h.size += heap_history__layout(&h, h.size);
	h.pid = (uint32_t)st->nspid;
	err = make_memfd(t, ij->pid, g, "rsprof-heap-region", MFD_CLOEXEC_, theirs, &mine);
	if (err)
		return err;
	if (ftruncate(mine, (off_t)h.size)) {
		err = -errno;
		close(mine);
		return err;
	}
	p = mmap(NULL, h.size, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0);
	close(mine);
	if (p == MAP_FAILED)
		return -errno;
	h.state = 0;
	memcpy(p, &h, sizeof(h));
	__atomic_store_n(&((struct heap_region *)p)->state, HEAP_REGION_OFFERED, __ATOMIC_RELEASE);
	ij->r = p;
	ij->size = h.size;
	return 0;
}

/* rsprof's pipe: the process keeps the read end (theirs), rsprof the write end. */
static int make_pipe(struct tracee *t, struct heap_inject *ij, const struct glibc *g, int *theirs,
		     uint64_t *ino)
{
	int fds[2] = { -1, -1 };
	uint64_t at, ret;
	struct stat sb;
	int err = tracee__push(t, fds, sizeof(fds), &at);

	if (!err)
		err = call(t, g->pipe2, 2, at, O_CLOEXEC, &ret);
	if (!err && (int)ret)
		err = -EMFILE;
	if (!err)
		err = tracee__read(t, at, fds, sizeof(fds));
	if (err)
		return err;
	ij->pipe_w = grab_fd(ij->pid, fds[1]);
	call(t, g->close, 1, (uint64_t)fds[1], 0, &ret);
	if (ij->pipe_w < 0 || fstat(ij->pipe_w, &sb)) {
		err = ij->pipe_w < 0 ? ij->pipe_w : -errno;
		call(t, g->close, 1, (uint64_t)fds[0], 0, &ret);
		return err;
	}
	*theirs = fds[0];
	*ino = (uint64_t)sb.st_ino;
	return 0;
}

static const char *attach_error(const struct heap_inject_ctl *c)
{
	switch (c->err) {
	case HEAP_INJECT_EBUSY:
		return "another rsprof is tracking its heap already (stop it first)";
	case HEAP_INJECT_EMALLOC:
		return because("%s", c->detail);
	case HEAP_INJECT_EHOOK:
		return because("the tracker's jumps could not be put in: %s", c->detail);
	case HEAP_INJECT_EREGION:
		return because("the tracker could not take its region: %s", c->detail);
	case HEAP_INJECT_EABI:
		return "the tracker in the process is of another version";
	default:
		return "the tracker could not start in the process";
	}
}

/* Is pc inside the first bytes of an entry to be rewritten? */
static bool in_entries(uint64_t pc, const struct entry_patch *patch, size_t n_patch,
		       const struct heap_inject_ctl *c)
{
	for (size_t k = 0; k < n_patch; k++)
		if (pc > patch[k].at && pc < patch[k].at + patch[k].len)
			return true;
	for (uint32_t k = 0; k < c->n_pending && k < HEAP_INJECT_PENDING_MAX; k++)
		if (pc > c->pending[k] && pc < c->pending[k] + HEAP_INJECT_PENDING_LEN)
			return true;
	return false;
}

/*
 * Every thread stopped, none inside the bytes the jumps take (glibc's,
 * patch[0..n_patch), and the entries the tracker rewrites): write them, have
 * the tracker rewrite its entries in the thread kept (hook_fn), and switch
 * it on. -EAGAIN: threads kept being inside.
 */
static int put_hooks(struct tracee *t, pid_t kept, uint64_t kept_rip,
		     const struct entry_patch *patch, size_t n_patch, uint64_t hook_fn,
		     const struct heap_inject_ctl *c)
{
	int on = c->mode_on;

	for (int round = 0; round < 50; round++) {
		const struct tracee_thread *v;
		size_t n;
		bool clear = true;
		int err = tracee__restop(t);

		if (err)
			return err;
		v = tracee__threads(t, &n);
		clear = !in_entries(kept_rip, patch, n_patch, c);
		for (size_t i = 0; i < n && clear; i++)
			clear = !in_entries(v[i].regs.rip, patch, n_patch, c);
		if (clear) {
			uint64_t ret;

			for (size_t k = 0; k < n_patch; k++) {
				err = tracee__poke(t, patch[k].at, patch[k].bytes, patch[k].len);
				if (err)
					return err;	/* a half-written jump is never run: all stopped */
			}
			if (c->n_pending) {
				err = tracee__call(t, hook_fn, NULL, 0, &ret);
				if (!err && (int)ret)
					err = -EBUSY;	/* the tracker was busy: nothing rewritten */
				if (err)
					return err;
			}
			return tracee__write(t, c->mode_addr, &on, sizeof(on));
		}
		tracee__release_others(t, kept);
		{
			struct timespec ts = { 0, 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	return -EAGAIN;
}

/* The injection itself, the process stopped with thread tid at a safe point. */
static int inject(struct heap_inject *ij, struct tracee *t, pid_t tid, const struct glibc *g,
		  const struct tracker *tr, const struct status *st, uint64_t loaded,
		  unsigned int sample, uint64_t sample_bytes, bool history, const char **why)
{
	struct heap_inject_args a = { .abi = HEAP_INJECT_ABI, .size = sizeof(a), .region_fd = -1,
				      .hangup_fd = -1 };
	struct heap_inject_ctl c;
	struct entry_patch patch[HEAP_HOOK_MAX];
	struct entry_page *page = calloc(1, sizeof(*page));
	struct maps *m = NULL;
	uint64_t lib = loaded, ret, at, kept_rip;
	unsigned char first;
	int err;

	if (!page)
		return -ENOMEM;
	kept_rip = 0;
	{
		size_t n = 0;
		const struct tracee_thread *v = tracee__threads(t, &n);

		for (size_t k = 0; v && k < n; k++)
			if (v[k].tid == tid)
				kept_rip = v[k].regs.rip;
	}
	tracee__release_others(t, tid);
	err = tracee__hijack(t, tid, ij->sentinel, ij->errno_fn);
	if (err)
		goto out;
	if (!lib) {
		err = load_tracker(t, ij->pid, g, tr, &lib, why);
		if (err)
			goto out;
	}
	ij->lib_lo = lib;
	ij->lib_hi = lib + tr->d.hi;
	ij->detach_fn = lib + tr->detach;
	if (!loaded)
		safepoint__add(ij->sp, ij->lib_lo, ij->lib_hi);	/* for the call at the end */
	err = make_region(t, ij, g, st, sample, sample_bytes, history, &a.region_fd);
	if (err) {
		*why = "the region could not be set up in the process";
		goto out;
	}
	err = make_pipe(t, ij, g, &a.hangup_fd, &a.hangup_ino);
	if (err) {
		call(t, g->close, 1, (uint64_t)a.region_fd, 0, &ret);
		*why = "the process could not make a pipe";
		goto out;
	}
	/* hooks: planned unless glibc's free jumps already (a tracker of an earlier attach) */
	err = tracee__read(t, g->hook_fn[HEAP_HOOK_FREE], &first, 1);
	if (!err && first != 0xe9) {
		err = maps__load(ij->pid, &m);
		if (!err)
			err = plan_hooks(ij->pid, m, g, lib, tr, page, patch, why);
		if (!err)
			err = tracee__push(t, page->code, page->len, &a.page_src);
		a.page_addr = page->addr;
		a.page_len = page->len;
		for (int k = 0; k < HEAP_HOOK_MAX; k++)
			a.tramp[k] = patch[k].tramp;
	}
	if (!err)
		err = tracee__push(t, &a, sizeof(a), &at);
	if (err) {
		/* the process's fds are still its own: closed there */
		call(t, g->close, 1, (uint64_t)a.region_fd, 0, &ret);
		call(t, g->close, 1, (uint64_t)a.hangup_fd, 0, &ret);
		goto out;
	}
	/* from here the tracker owns both fds */
	err = call(t, lib + tr->attach, 1, at, 0, &ret);
	if (!err)
		err = tracee__read(t, ret, &c, sizeof(c));
	if (err)
		goto out;
	if (c.abi != HEAP_INJECT_ABI || c.err) {
		*why = attach_error(&c);
		err = -ENOTSUP;
		goto out;
	}
	pr_debug(1, "heap: tracker in process %d at %#llx: %llu GOT slots in %llu objects "
		 "redirected", (int)ij->pid, (unsigned long long)lib,
		 (unsigned long long)c.slots, (unsigned long long)c.objects);
	if (a.page_addr || c.n_pending) {
		err = put_hooks(t, tid, kept_rip, patch, a.page_addr ? HEAP_HOOK_MAX : 0,
				lib + tr->hook, &c);
		if (err) {
			uint64_t r2;

			*why = err == -EAGAIN ?
			       "threads of the process kept running the first bytes of the "
			       "allocator's functions" :
			       "the jumps into the tracker could not be put in";
			tracee__release_others(t, tid);
			call(t, ij->detach_fn, 0, 0, 0, &r2);
			goto out;
		}
	}
out:
	maps__delete(m);
	free(page);
	return err;
}

int heap_inject__new(pid_t pid, enum heap_backend want, unsigned int sample,
		     uint64_t sample_bytes, bool history, struct heap_inject **out,
		     const char **why)
{
	struct heap_inject *ij = NULL;
	struct tracker tr = { 0 };
	struct glibc g = { 0 };
	struct status st;
	struct maps *m = NULL;
	struct tracee *t = NULL;
	uint64_t loaded = 0, t0 = now_us();
	pid_t tid = 0;
	int err;

	*out = NULL;
	*why = NULL;
	if (want == HEAP_BACKEND_UPROBE) {
		*why = "--heap-backend uprobe";
		return 0;
	}
	err = tracker_load(&tr);
	if (err) {
		pr_err("the heap tracker inside rsprof cannot be read: %s", strerror(-err));
		goto out;
	}
	ij = calloc(1, sizeof(*ij));
	if (!ij) {
		err = -ENOMEM;
		goto out;
	}
	ij->pid = pid;
	ij->pipe_w = -1;
	ij->sp = safepoint__new(pid);
	if (!ij->sp) {
		err = -ENOMEM;
		goto out;
	}
	err = read_status(pid, &st);
	if (!err)
		err = maps__load(pid, &m);
	if (err) {
		pr_err("cannot read process %d: %s", (int)pid, strerror(-err));
		goto out;
	}
	*why = refusal(pid, &st, m, &tr, &loaded);
	if (!*why && glibc_load(pid, m, ij, &g, why))
		err = 0;
	if (!*why) {
		uint64_t ld;

		if (find_sentinel(pid, &g.d, &ij->sentinel))
			*why = "no int3 instruction in glibc's code to return to";
		ij->errno_fn = g.errno_location;
		/* the loader, and the tracker itself when it is there */
		if (!loader_base(pid, &ld) && ld) {
			const struct map *x = first_map(m, ld);

			if (x) {
				struct range r = file_range(m, x);

				safepoint__add(ij->sp, r.lo, r.hi);
			}
		}
		if (loaded)
			safepoint__add(ij->sp, loaded, loaded + tr.d.hi);
		/* an allocator library the program has instead of glibc's */
		for (size_t i = 0; i < m->n; i++) {
			const char *p = m->v[i].path;

			if (p && p[0] == '/' && !m->v[i].pgoff &&
			    alloc_syms__is_alloc_lib(base_name(p))) {
				struct range r = file_range(m, &m->v[i]);

				safepoint__add(ij->sp, r.lo, r.hi);
			}
		}
	}
	if (!*why) {
		busy = 1;
		err = safepoint__stop(ij->sp, st.sigign, &t, &tid);
		if (err == -EAGAIN)
			*why = "no thread of the process came to a safe point (out of the allocator "
			       "and the loader) within 2 s: attach again when it is less busy there";
		else if (err == -EPERM)
			*why = "ptrace was refused (a security module, or the process's own "
			       "protection)";
		else if (err == -EBUSY)
			*why = "the process is being traced already";
		else if (err)
			pr_err("cannot stop process %d: %s", (int)pid, strerror(-err));
		if (*why || err == -ESRCH)
			err = err == -ESRCH ? err : 0;
	}
	if (!*why && !err) {
		err = inject(ij, t, tid, &g, &tr, &st, loaded, sample, sample_bytes, history, why);
		if (err && *why)
			err = 0;
		else if (err)
			pr_err("cannot put the heap tracker into process %d: %s", (int)pid,
			       strerror(-err));
	}
	tracee__delete(t);
	t = NULL;
	busy_end();
	if (!err && !*why) {
		pr_debug(1, "heap: the in-process tracker is in process %d (%.1f ms)", (int)pid,
			 (now_us() - t0) / 1000.0);
		*out = ij;
		ij = NULL;
	}
out:
	if (*why && want == HEAP_BACKEND_INJECT) {
		pr_err("the heap tracker cannot be put into process %d: %s", (int)pid, *why);
		pr_hint("use --heap-backend uprobe, or auto to fall back by itself");
		err = -ENOTSUP;
	}
	if (ij) {
		if (ij->r)
			munmap(ij->r, ij->size);
		if (ij->pipe_w >= 0)
			close(ij->pipe_w);
		safepoint__delete(ij->sp);
		free(ij);
	}
	dynsym__free(&g.d);
	tracker_free(&tr);
	maps__delete(m);
	return err;
}

bool heap_inject__present(pid_t pid)
{
	struct maps *m = NULL;
	bool there = false;

	if (maps__load(pid, &m))
		return false;
	for (size_t i = 0; i < m->n && !there; i++)
		there = tracker_memfd(m->v[i].path) != NULL;
	/* and its jump at glibc's free (a set-up that failed before put none) */
	for (size_t i = 0; there && i < m->n; i++) {
		const char *b = m->v[i].path ? base_name(m->v[i].path) : "";
		struct dynsym d;
		uint64_t at;
		unsigned char first = 0xe9;

		if (!m->v[i].path || m->v[i].pgoff || m->v[i].path[0] != '/' ||
		    (strncmp(b, "libc.so.", 8) && strncmp(b, "libc-", 5)) ||
		    dynsym__load_pid(pid, m->v[i].start, &d))
			continue;
		if (dynsym__find(&d, "free", &at, NULL)) {
			struct iovec l = { .iov_base = &first, .iov_len = 1 };
			struct iovec r = { .iov_base = (void *)(uintptr_t)at, .iov_len = 1 };

			if (process_vm_readv(pid, &l, 1, &r, 1, 0) != 1)
				first = 0xe9;	/* unreadable: take it as there */
		}
		dynsym__free(&d);
		there = first == 0xe9;
		break;
	}
	maps__delete(m);
	return there;
}

static bool still_there(const struct heap_inject *ij);

bool heap_inject__alive(struct heap_inject *ij)
{
	struct maps *m = NULL;

	if (ij->gone)
		return false;
	if (maps__load(ij->pid, &m))
		return true;	/* gone, or not readable: its end is seen otherwise */
	maps__delete(m);
	ij->gone = !still_there(ij);
	if (ij->gone)
		pr_warn("process %d replaced its program (exec): its heap is not tracked from "
			"there on", (int)ij->pid);
	return !ij->gone;
}

struct heap_region *heap_inject__region(const struct heap_inject *ij, size_t *size)
{
	*size = ij->size;
	return ij->r;
}

/* Is the tracker still mapped where the attach found it (no exec since)? */
static bool still_there(const struct heap_inject *ij)
{
	struct maps *m = NULL;
	bool there = false;

	if (maps__load(ij->pid, &m))
		return false;
	for (size_t i = 0; i < m->n && !there; i++)
		there = m->v[i].start == ij->lib_lo && tracker_memfd(m->v[i].path);
	maps__delete(m);
	return there;
}

void heap_inject__delete(struct heap_inject *ij)
{
	struct status st;
	struct tracee *t = NULL;
	pid_t tid;

	if (!ij)
		return;
	/* at a safe point: the GOT slots back, the region let go */
	busy = 1;
	if (!ij->gone && !read_status(ij->pid, &st) && st.state != 'Z' && still_there(ij) &&
	    !safepoint__stop(ij->sp, st.sigign, &t, &tid)) {
		uint64_t ret;

		tracee__release_others(t, tid);
		if (!tracee__hijack(t, tid, ij->sentinel, ij->errno_fn) &&
		    !tracee__call(t, ij->detach_fn, NULL, 0, &ret))
			pr_debug(1, "heap: the tracker in process %d stopped", (int)ij->pid);
		tracee__delete(t);
	}
	busy_end();
	/* else the tracker stops by itself: its pipe hangs up */
	if (ij->pipe_w >= 0)
		close(ij->pipe_w);
	safepoint__delete(ij->sp);
	free(ij);
}
