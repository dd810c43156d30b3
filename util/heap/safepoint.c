/*
 * A thread at a safe point (util/heap/safepoint.h).
 *
 * glibc's malloc.c is not all exported: its static functions (_int_malloc,
 * _int_free, malloc_info's body...) lie between and around the exported
 * ones, so the range no frame may be in is the hull of the exported
 * functions of the malloc family, widened to the end of the exported
 * function before it and the start of the one after it (morecore.c, which
 * malloc.c #includes, counts as malloc's). A thread is chosen only when
 * its unwind reaches its start (libdwfl reports no error): a frame it
 * could not see might be one of those.
 *
 * The same for nptl-stack.c, whose static functions (__nptl_deallocate_stack,
 * __nptl_free_stacks, reached from pthread_join, pthread_detach and a
 * detached thread's exit) hold the lock of the threads' stack cache, which
 * dlopen() of a library with initial-exec TLS (the tracker) takes to set
 * up that TLS in every thread: the hull around its one exported function,
 * __pthread_get_minstack.
 */
#include "util/heap/safepoint.h"

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <elfutils/libdwfl.h>

#include "util/error.h"
#include "util/heap/dynsym.h"
#include "util/heap/tracee.h"
#include "util/record/maps.h"

#define SAFE_WAIT_MS	2000
#define STACK_ROOM	(128 * 1024)
#define MAX_RANGES	64

struct range {
	uint64_t lo, hi;
};

struct safepoint {
	pid_t pid;
	struct range v[MAX_RANGES];
	int n;
};

struct safepoint *safepoint__new(pid_t pid)
{
	struct safepoint *sp = calloc(1, sizeof(*sp));

	if (sp)
		sp->pid = pid;
	return sp;
}

void safepoint__delete(struct safepoint *sp)
{
	free(sp);
}

/* The signals blocked in thread tid. */
static uint64_t sig_blocked(pid_t pid, pid_t tid)
{
	char path[96], line[256];
	uint64_t v = ~0ULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return v;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigBlk:", 7))
			v = strtoull(line + 7, NULL, 16);
	fclose(f);
	return v;
}

static const char *const malloc_fns[] = {
	"malloc", "free", "calloc", "realloc", "memalign", "valloc", "pvalloc", "aligned_alloc",
	"posix_memalign", "malloc_usable_size", "malloc_trim", "mallopt", "mallinfo",
	"mallinfo2", "malloc_stats", "malloc_info", "__libc_malloc", "__libc_free",
	"__libc_calloc", "__libc_realloc", "__libc_memalign", "__libc_valloc",
	"__libc_pvalloc", "__libc_mallopt", "__libc_mallinfo", "reallocarray",
	"__libc_reallocarray", "cfree",
	/* morecore.c is #included into malloc.c (glibc 2.36 keeps it for compatibility):
	 * malloc.c's static functions lie around it */
	"__default_morecore",
};

/* The function of nptl-stack.c glibc exports (GLIBC_PRIVATE, 2.34 and later). */
static const char *const stack_fns[] = { "__pthread_get_minstack" };

/* glibc functions during which a thread may hold a lock dlopen takes. */
static const char *const lock_fns[] = {
	"fork", "vfork", "_Fork", "exit", "_exit", "quick_exit", "__cxa_finalize",
	"__cxa_atexit", "dl_iterate_phdr", "dlopen", "dlmopen", "dlclose", "dlsym", "dlvsym",
	"dladdr", "dladdr1", "dlinfo", "dlerror", "__libc_dlopen_mode", "__libc_dlsym",
	"__libc_dlclose", "pthread_create", "pthread_exit", "setlocale", "newlocale",
	"freelocale", "iconv_open", "iconv_close", "posix_spawn", "posix_spawnp", "system",
	"popen", "__libc_freeres",
	/* the set*id calls signal every thread with the stack cache locked */
	"setuid", "setgid", "seteuid", "setegid", "setreuid", "setregid", "setresuid",
	"setresgid", "setgroups",
};

void safepoint__add(struct safepoint *sp, uint64_t lo, uint64_t hi)
{
	pr_debug(3, "heap: unsafe %#llx-%#llx", (unsigned long long)lo, (unsigned long long)hi);
	if (sp->n < MAX_RANGES && lo < hi)
		sp->v[sp->n++] = (struct range){ lo, hi };
}

/*
 * A source file of glibc's (malloc.c, nptl-stack.c): the hull of its
 * exported functions names[0..n), widened to the exported functions around
 * it (its static helpers lie between and around them).
 */
static void add_hull(struct safepoint *sp, const struct dynsym *d, const char *const *names,
		     size_t n)
{
	const Elf64_Sym *s = d->sym;
	uint64_t a = UINT64_MAX, b = 0, lo = 0, hi = UINT64_MAX;

	for (size_t i = 0; i < n; i++) {
		uint64_t at, size;

		if (dynsym__find(d, names[i], &at, &size)) {
			if (at < a)
				a = at;
			if (at + size > b)
				b = at + size;
		}
	}
	if (a >= b)
		return;
	for (size_t i = 1; i < d->n; i++) {
		uint64_t at = d->base + s[i].st_value;

		if (ELF64_ST_TYPE(s[i].st_info) != STT_FUNC || s[i].st_shndx == SHN_UNDEF)
			continue;
		if (at < a && at + s[i].st_size > lo && at + s[i].st_size <= a)
			lo = at + s[i].st_size;
		if (at >= b && at < hi)
			hi = at;
	}
	safepoint__add(sp, lo ? lo : a, hi != UINT64_MAX ? hi : b);
}

void safepoint__add_glibc(struct safepoint *sp, const struct dynsym *libc)
{
	add_hull(sp, libc, malloc_fns, sizeof(malloc_fns) / sizeof(malloc_fns[0]));
	add_hull(sp, libc, stack_fns, sizeof(stack_fns) / sizeof(stack_fns[0]));
	for (size_t i = 0; i < sizeof(lock_fns) / sizeof(lock_fns[0]); i++) {
		uint64_t at, size;

		if (dynsym__find(libc, lock_fns[i], &at, &size))
			safepoint__add(sp, at, at + (size ? size : 1));
	}
}

struct walk {
	const struct safepoint *sp;
	int depth;
	bool unsafe;
	uint64_t at;
};

static bool is_unsafe(const struct safepoint *sp, uint64_t pc)
{
	for (int i = 0; i < sp->n; i++)
		if (pc - sp->v[i].lo < sp->v[i].hi - sp->v[i].lo)
			return true;
	return false;
}

static int frame_cb(Dwfl_Frame *f, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool act;

	if (!dwfl_frame_pc(f, &pc, &act))
		return DWARF_CB_ABORT;
	if (!act)
		pc--;
	pr_debug(3, "heap:   frame %#llx", (unsigned long long)pc);
	if (is_unsafe(w->sp, pc)) {
		w->unsafe = true;
		w->at = pc;
		return DWARF_CB_ABORT;
	}
	return ++w->depth > 512 ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	return -1;	/* the CFI of .eh_frame is all the walk needs */
}

static const Dwfl_Callbacks walk_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = no_debuginfo,
};

/* Is thread th of the stopped process at a safe point? */
static bool thread_safe(const struct safepoint *sp, Dwfl *dwfl, const struct maps *m,
			uint64_t sigign, const struct tracee_thread *th)
{
	const struct map *sm = maps__find(m, th->regs.rsp);
	struct walk w = { .sp = sp };
	uint64_t blocked = sig_blocked(sp->pid, th->tid);

	if (!th->callable || ((blocked | sigign) & (1ULL << (SIGTRAP - 1))))
		return false;	/* its calls' sentinel would reset the handler */
	if (!sm || (th->regs.rsp - sm->start < STACK_ROOM &&
		    !(sm->path && !strcmp(sm->path, "[stack]"))))
		return false;	/* too little stack (or not on a stack of its own) */
	if (is_unsafe(sp, th->regs.rip))
		return false;
	int rc = dwfl_getthread_frames(dwfl, th->tid, frame_cb, &w);

	pr_debug(2, "heap: thread %d: %d frames unwound (%d%s%s)", (int)th->tid, w.depth, rc,
		 rc ? ": " : "", rc ? dwfl_errmsg(-1) : "");
	if (rc || w.unsafe) {
		pr_debug(2, "heap: thread %d: %s (pc %#llx)", (int)th->tid,
			 w.unsafe ? "in the allocator or the loader" : "not unwound to its start",
			 (unsigned long long)(w.unsafe ? w.at : th->regs.rip));
		return false;
	}
	return true;
}

int safepoint__stop(struct safepoint *sp, uint64_t sigign, struct tracee **t, pid_t *tid)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	int waited = 0, err;

	for (;;) {
		const struct tracee_thread *v;
		struct maps *m = NULL;
		Dwfl *dwfl = NULL;
		size_t n = 0;

		err = tracee__stop_all(sp->pid, t);
		if (err)
			return err;
		v = tracee__threads(*t, &n);
		err = maps__load(sp->pid, &m);
		if (!err) {
			dwfl = dwfl_begin(&walk_callbacks);
			if (!dwfl || dwfl_linux_proc_report(dwfl, sp->pid) ||
			    dwfl_report_end(dwfl, NULL, NULL) ||
			    dwfl_linux_proc_attach(dwfl, sp->pid, true))
				err = -ENOTSUP;
		}
		for (int pass = 0; !err && pass < 3; pass++) {
			for (size_t i = 0; i < n; i++) {
				/* the main thread, then threads in a system call, then any */
				if ((pass == 0) != (v[i].tid == sp->pid) ||
				    (pass == 1 && !v[i].in_syscall) || (pass == 2 && v[i].in_syscall))
					continue;
				if (thread_safe(sp, dwfl, m, sigign, &v[i])) {
					pr_debug(1, "heap: thread %d of process %d is at a safe point",
						 (int)v[i].tid, (int)sp->pid);
					*tid = v[i].tid;
					dwfl_end(dwfl);
					maps__delete(m);
					return 0;
				}
			}
		}
		if (dwfl)
			dwfl_end(dwfl);
		maps__delete(m);
		tracee__delete(*t);
		*t = NULL;
		if (err)
			return err;
		waited += 20;
		if (waited >= SAFE_WAIT_MS)
			return -EAGAIN;
		nanosleep(&nap, NULL);
	}
}

