/*
 * The tracker in a running process (rsprof record -p): rsprof loads this
 * library with dlopen at a safe point of one of the process's threads and
 * calls rsprof_heap_attach() there (preload/heap-inject.h tells how).
 *
 * The attach: the region (a memfd the process holds) mapped and claimed,
 * the allocator redirected in every loaded object (preload/got.c), the
 * page of hooks rsprof laid out mapped: the first instructions of glibc's
 * free, realloc and malloc_usable_size, moved there, are what the tracker
 * calls from then on, since rsprof makes those functions' entries jump to
 * the tracker. A block with the tracker's header thus reaches the tracker
 * whichever way it is freed (a function pointer to free taken before the
 * attach, dlsym(), an object loaded later, the loader), and the hooks stay
 * for the life of the process: those blocks are freed right after a
 * detach too.
 *
 * A program whose malloc is an allocator library's (libjemalloc,
 * libmimalloc, libtcmalloc: its GOT slots are not glibc's, so not
 * redirected): that library's malloc family and its own entry points are
 * rewritten to jump to the tracker (preload/hooks.c), in
 * rsprof_heap_hook(), which rsprof calls with every other thread stopped;
 * the tracker forwards to the library and keeps its blocks in the live
 * table, as launched. The rewritten entries stay, passing through once the
 * tracker stops. An executable with an allocator of its own is refused.
 *
 * dlopen() is redirected as well: objects loaded later get their slots
 * redirected as they come. glibc's dlopen looks a name up along its
 * caller's search path (its RPATH, RUNPATH, $ORIGIN) and in its caller's
 * namespace: a call whose outcome could depend on its caller goes straight
 * to glibc's dlopen with the caller's return address (no redirection of
 * what it loads: those objects' allocations go uncounted, their frees are
 * still right).
 *
 * The detach: rsprof calls rsprof_heap_detach() at a safe point (the GOT
 * slots are put back), or, when rsprof is gone without that (killed), the
 * tracker notices by itself (the read end of rsprof's pipe hangs up; a
 * thread looks every few thousand allocations) and stops counting without
 * touching the GOTs (no loader lock from inside malloc): the slots then
 * keep passing through. Either way the region is unmapped, an anonymous
 * mapping of the same size put in its place (with a copy of its header), so
 * that a thread still inside the tracker writes into memory of its own.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "preload/heap-inject.h"
#include "preload/sys.h"
#include "preload/tracker.h"

#define EXPORT __attribute__((visibility("default")))

TRACKER_HOT bool tracker_injected;

static struct heap_inject_ctl ctl;
static int inject_lock;
static int hangup_fd = -1;
static uint64_t hangup_ino;
static uintptr_t hook_page;
static void *self_handle;

/* glibc's dlopen (the thunk below jumps there) */
__attribute__((used, visibility("hidden"))) void *(*inject_real_dlopen)(const char *, int);
/* Per hook (enum heap_inject_hook): the tracker's function, glibc's (its trampoline). */
__attribute__((used, visibility("hidden"))) uintptr_t inject_ours[HEAP_HOOK_MAX];
__attribute__((used, visibility("hidden"))) uintptr_t inject_glibc[HEAP_HOOK_MAX];

/*
 * Where the jumps at glibc's free, realloc and malloc_usable_size lead
 * (rsprof_hook_*): a block with the tracker's header (bit 3 of the word
 * before it, preload/block.h) goes to the tracker, any other pointer back
 * to glibc's function as it was. glibc's own calls (a thread's cache
 * emptied at its exit, the loader's frees) pass through uncounted, and the
 * caller's frame stays as it was (jumps only).
 */
#define HOOK_THUNK(name, i)							\
	".globl " #name "\n"							\
	".type " #name ", @function\n"						\
	#name ":\n"								\
	"	test %rdi, %rdi\n"						\
	"	jz 1f\n"							\
	"	testb $8, -8(%rdi)\n"						\
	"	jz 1f\n"							\
	"	jmp *inject_ours+8*" #i "(%rip)\n"				\
	"1:	jmp *inject_glibc+8*" #i "(%rip)\n"				\
	".size " #name ", .-" #name "\n"

__asm__(".text\n"
	HOOK_THUNK(rsprof_hook_free, 0)
	HOOK_THUNK(rsprof_hook_realloc, 1)
	HOOK_THUNK(rsprof_hook_usable, 2)
	".previous\n");

/* --- rsprof's pipe ------------------------------------------------------ */

/* Is hangup_fd still the pipe rsprof gave (the program may have closed it)? */
static bool hangup_ours(void)
{
	struct stat st;

	return hangup_fd >= 0 && !syscall(SYS_fstat, hangup_fd, &st) && S_ISFIFO(st.st_mode) &&
	       (uint64_t)st.st_ino == hangup_ino;
}

/* Is rsprof gone (its end of the pipe closed)? */
static bool peer_gone(void)
{
	struct pollfd p = { .fd = hangup_fd, .events = POLLIN };

	if (!hangup_ours())
		return true;
	return syscall(SYS_poll, &p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

bool inject__peer_gone(void)
{
	return tracker_injected && peer_gone();
}

static void hangup_close(void)
{
	if (hangup_ours())
		sys_close(hangup_fd);
	hangup_fd = -1;
}

/* --- the region ---------------------------------------------------------- */

/*
 * The region goes: a copy of its header, then anonymous memory over the
 * rest, take its place (the memfd's pages are freed once rsprof lets go of
 * them too). A thread still counting writes into those.
 */
static void region_release(void)
{
	struct heap_region *r = tracker_region;
	size_t size;
	void *h;

	if (!r || !tracker_injected)
		return;
	size = r->size;
	h = sys_mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h == MAP_FAILED)
		return;		/* the region stays: nothing else to do */
	memcpy(h, r, sizeof(*r));
	if (sys_mmap((char *)r + 4096, size - 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED ||
	    sys_mremap(h, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, r) == MAP_FAILED)
		sys_munmap(h, 4096);
}

/* --- attach and detach ---------------------------------------------------- */

/* Stop counting; restore: the GOT slots back to glibc (a safe point only). */
static void detach_locked(bool restore)
{
	int m = __atomic_load_n(&tracker_mode, __ATOMIC_ACQUIRE);

	if ((m != M_ON && m != M_INIT) ||
	    !__atomic_compare_exchange_n(&tracker_mode, &m, M_OFF, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	if (restore)
		got__redirect(true, NULL);
	history_on = false;
	region_release();
	hangup_close();
}

__attribute__((noinline, cold)) void inject__check(void)
{
	if (!tracker_injected || !peer_gone() ||
	    __atomic_exchange_n(&inject_lock, 1, __ATOMIC_ACQUIRE))
		return;
	detach_locked(false);
	__atomic_store_n(&inject_lock, 0, __ATOMIC_RELEASE);
}

void inject__after_fork_child(void)
{
	hangup_close();
}

/* The tracker's function of that name (the thunk for dlopen). */
void inject_dlopen(void);

static void *ours(const char *name)
{
	if (!strcmp(name, "dlopen"))
		return (void *)inject_dlopen;
	return dlsym(self_handle, name);
}

static void detail(const char *what, const void *fn)
{
	Dl_info di;
	const char *who = fn && dladdr(fn, &di) && di.dli_fname ? di.dli_fname : "?";
	size_t n = strlen(what);

	if (n >= sizeof(ctl.detail))
		n = sizeof(ctl.detail) - 1;
	memcpy(ctl.detail, what, n);
	for (size_t i = 0; who[i] && n + 1 < sizeof(ctl.detail); i++)
		ctl.detail[n++] = who[i];
	ctl.detail[n] = '\0';
}

/* The page of hooks rsprof laid out: mapped where it asked, read-only and executable. */
static int hooks_map(const struct heap_inject_args *a)
{
	void *p;

	if (!a->page_addr)
		return hook_page ? 0 : -1;
	/* a page of an attach that never wrote its jumps may be there: this one replaces it */
	if (!a->page_len || a->page_len > 65536 || (a->page_addr & 4095))
		return -1;
	p = sys_mmap((void *)(uintptr_t)a->page_addr, (a->page_len + 4095) & ~4095UL,
		     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	if ((uintptr_t)p != a->page_addr) {
		sys_munmap(p, a->page_len);
		return -1;
	}
	memcpy(p, (const void *)(uintptr_t)a->page_src, a->page_len);
	if (sys_mprotect(p, (a->page_len + 4095) & ~4095UL, PROT_READ | PROT_EXEC)) {
		sys_munmap(p, a->page_len);
		return -1;
	}
	for (int i = 0; i < HEAP_HOOK_MAX; i++)
		if (a->tramp[i] - a->page_addr >= a->page_len)
			return -1;
	inject_glibc[HEAP_HOOK_FREE] = a->tramp[HEAP_HOOK_FREE];
	inject_glibc[HEAP_HOOK_REALLOC] = a->tramp[HEAP_HOOK_REALLOC];
	inject_glibc[HEAP_HOOK_USABLE] = a->tramp[HEAP_HOOK_USABLE];
	/* glibc's functions are the tracker's allocator only where malloc is glibc's */
	if (!next_alloc.foreign)
		malloc__set_libc((void *)(uintptr_t)a->tramp[HEAP_HOOK_FREE],
				 (void *)(uintptr_t)a->tramp[HEAP_HOOK_REALLOC],
				 (void *)(uintptr_t)a->tramp[HEAP_HOOK_USABLE]);
	hook_page = a->page_addr;
	return 0;
}

static int attach(const struct heap_inject_args *a, bool *region_taken)
{
	struct stat st;
	int m = __atomic_load_n(&tracker_mode, __ATOMIC_ACQUIRE);

	if (m == M_ON) {
		if (!peer_gone())
			return HEAP_INJECT_EBUSY;
		detach_locked(false);	/* the rsprof before is gone */
		m = __atomic_load_n(&tracker_mode, __ATOMIC_ACQUIRE);
	}
	if (m == M_ON || (!tracker_injected && m != M_UNINIT))
		return HEAP_INJECT_EBUSY;	/* preloaded by a launch, or counting */
	__atomic_store_n(&tracker_mode, M_INIT, __ATOMIC_RELEASE);
	tracker_injected = true;
	if (!self_handle) {
		Dl_info di;

		if (!dladdr((const void *)attach, &di) ||
		    !(self_handle = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
			return HEAP_INJECT_ENOMEM;
		next__init();	/* glibc's functions, before their trampolines replace them */
		malloc__resolve();
		if (got__init(ours))
			return HEAP_INJECT_ENOMEM;
		inject_ours[HEAP_HOOK_FREE] = (uintptr_t)ours("free");
		inject_ours[HEAP_HOOK_REALLOC] = (uintptr_t)ours("realloc");
		inject_ours[HEAP_HOOK_USABLE] = (uintptr_t)ours("malloc_usable_size");
		if (!inject_ours[0] || !inject_ours[1] || !inject_ours[2])
			return HEAP_INJECT_ENOMEM;
	}
	/* an allocator in the executable: no thread can be known to be out of it */
	if (next_alloc.foreign && next_alloc.owner == next__exe()) {
		detail("the process's malloc is the executable's own: ", (void *)next_alloc.malloc);
		return HEAP_INJECT_EMALLOC;
	}
	inject_real_dlopen = (void *(*)(const char *, int))got__bound("dlopen");
	if (syscall(SYS_fstat, a->hangup_fd, &st) || !S_ISFIFO(st.st_mode) ||
	    (uint64_t)st.st_ino != a->hangup_ino) {
		detail("no pipe from rsprof", NULL);
		return HEAP_INJECT_EREGION;
	}
	hangup_fd = a->hangup_fd;
	hangup_ino = a->hangup_ino;
	if (hooks_map(a)) {
		detail("the page of hooks cannot be mapped where rsprof asked", NULL);
		return HEAP_INJECT_EHOOK;
	}
	*region_taken = true;	/* closed by tracker__adopt(), whatever happens */
	if (tracker__adopt(a->region_fd)) {
		detail("the region is not valid", NULL);
		return HEAP_INJECT_EREGION;
	}
	ctl.slots = got__redirect(false, &ctl.objects);
	ctl.n_pending = (uint32_t)hooks__find_injected(ctl.pending, HEAP_INJECT_PENDING_MAX);
	/* with the hooks of an earlier attach in place, counting can start now;
	 * else rsprof starts it once it has written the jumps */
	if (!a->page_addr && !ctl.n_pending)
		__atomic_store_n(&tracker_mode, M_ON, __ATOMIC_RELEASE);
	return HEAP_INJECT_OK;
}

EXPORT const struct heap_inject_ctl *rsprof_heap_attach(const struct heap_inject_args *a)
{
	bool region_taken = false;

	memset(&ctl, 0, sizeof(ctl));
	ctl.abi = HEAP_INJECT_ABI;
	ctl.mode_addr = (uintptr_t)&tracker_mode;
	ctl.mode_on = M_ON;
	if (!a || a->abi != HEAP_INJECT_ABI || a->size != sizeof(*a)) {
		ctl.err = HEAP_INJECT_EABI;
		return &ctl;
	}
	if (__atomic_exchange_n(&inject_lock, 1, __ATOMIC_ACQUIRE)) {
		ctl.err = HEAP_INJECT_EBUSY;
		sys_close(a->region_fd);
		sys_close(a->hangup_fd);
		return &ctl;
	}
	ctl.err = attach(a, &region_taken);
	if (ctl.err) {
		/* the fds rsprof gave are the tracker's to close, whatever happened */
		if (!region_taken)
			sys_close(a->region_fd);
		if (hangup_fd == a->hangup_fd)
			hangup_fd = -1;
		sys_close(a->hangup_fd);
	}
	if (ctl.err && ctl.err != HEAP_INJECT_EBUSY) {
		/* nothing counted: back to passing through */
		int m = M_INIT;

		__atomic_compare_exchange_n(&tracker_mode, &m, M_OFF, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
	}
	ctl.hooked = hook_page != 0;
	__atomic_store_n(&inject_lock, 0, __ATOMIC_RELEASE);
	return &ctl;
}

/* The entries found at the attach rewritten, while every other thread is stopped. */
EXPORT int rsprof_heap_hook(void)
{
	if (__atomic_exchange_n(&inject_lock, 1, __ATOMIC_ACQUIRE))
		return -1;
	hooks__apply();
	__atomic_store_n(&inject_lock, 0, __ATOMIC_RELEASE);
	return 0;
}

EXPORT int rsprof_heap_detach(void)
{
	if (__atomic_exchange_n(&inject_lock, 1, __ATOMIC_ACQUIRE))
		return -1;
	detach_locked(true);
	__atomic_store_n(&inject_lock, 0, __ATOMIC_RELEASE);
	return 0;
}

/* --- dlopen --------------------------------------------------------------- */

/* The search path of dlopen called from the object lm, into buf; false: too long. */
static bool search_path(void *lm, Dl_serinfo *buf, size_t len)
{
	Dl_serinfo size;

	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &size) || size.dls_size > len)
		return false;
	buf->dls_size = size.dls_size;
	buf->dls_cnt = size.dls_cnt;
	return !dlinfo(lm, RTLD_DI_SERINFO, buf);
}

/*
 * Is glibc's dlopen(file) from caller sure to do what it does from the
 * tracker (whose dlopen then redirects what it loads)? Its name has no
 * dynamic string token ($ORIGIN), the caller is in the first namespace and,
 * for a bare name, its search path is the tracker's.
 */
__attribute__((used, visibility("hidden"))) int inject_dlopen_ours(const char *file, void *caller)
{
	_Alignas(16) char mine[2048], theirs[2048];
	Dl_serinfo *a = (Dl_serinfo *)mine, *b = (Dl_serinfo *)theirs;
	void *lm = NULL;
	Lmid_t id = -1;
	Dl_info di;

	if (__atomic_load_n(&tracker_mode, __ATOMIC_ACQUIRE) != M_ON || !file || strchr(file, '$'))
		return 0;
	if (!dladdr1(caller, &di, &lm, RTLD_DL_LINKMAP) || !lm || dlinfo(lm, RTLD_DI_LMID, &id) ||
	    id != LM_ID_BASE)
		return 0;
	if (strchr(file, '/'))
		return 1;
	if (!search_path(self_handle, a, sizeof(mine)) || !search_path(lm, b, sizeof(theirs)) ||
	    a->dls_cnt != b->dls_cnt)
		return 0;
	for (unsigned int i = 0; i < a->dls_cnt; i++)
		if (strcmp(a->dls_serpath[i].dls_name, b->dls_serpath[i].dls_name))
			return 0;
	return 1;
}

/* dlopen() from the tracker, then the objects it loaded redirected. */
__attribute__((used, visibility("hidden"))) void *inject_dlopen_redirect(const char *file, int mode)
{
	void *h = inject_real_dlopen(file, mode);
	int on = __atomic_load_n(&tracker_mode, __ATOMIC_ACQUIRE) == M_ON;

	if (h && on && !__atomic_exchange_n(&inject_lock, 1, __ATOMIC_ACQUIRE)) {
		int e = errno;

		if (__atomic_load_n(&tracker_mode, __ATOMIC_ACQUIRE) == M_ON)
			got__redirect(false, NULL);
		__atomic_store_n(&inject_lock, 0, __ATOMIC_RELEASE);
		errno = e;
	}
	return h;
}

/*
 * The dlopen the GOT slots point to: its caller's return address stays on
 * the stack for glibc's dlopen unless inject_dlopen_ours() says the caller
 * makes no difference.
 */
__asm__(".text\n"
	".globl inject_dlopen\n"
	".hidden inject_dlopen\n"
	".type inject_dlopen, @function\n"
	"inject_dlopen:\n"
	".cfi_startproc\n"
	"	push %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	push %rsi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	sub $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	mov 24(%rsp), %rsi\n"
	"	call inject_dlopen_ours\n"
	"	add $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %rsi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	test %eax, %eax\n"
	"	jnz inject_dlopen_redirect\n"
	"	jmp *inject_real_dlopen(%rip)\n"
	".cfi_endproc\n"
	".size inject_dlopen, .-inject_dlopen\n"
	".previous\n");
