/*
 * The allocation's call stack: through frame pointers where the code keeps
 * them, through the DWARF call frame information (libunwind) where it does
 * not (issue 9: Rust release builds, Debian's packaged C programs).
 *
 * The frame-pointer walk starts at the allocator's caller: the return
 * address into the caller, then each frame's saved return address up the
 * chain of saved %rbp. The same stack the BPF program captures
 * (bpf/heap.bpf.c), so util/heap attributes both alike. It never faults: a
 * frame is followed only while the frame pointer lies on the thread's own
 * stack (between the stack pointer at the call and the stack's top), is
 * aligned and grows strictly. On another stack (sigaltstack, a coroutine)
 * there is no walk, the caller only.
 *
 * Which code keeps frame pointers is decided once per module, when an
 * address in it is first met (mod_judge()): up to MOD_SAMPLE of the
 * functions listed in its .eh_frame_hdr search table are sampled (spread
 * over the table); gcc and rustc built with frame pointers begin every
 * function that calls another with `push %rbp` and `mov %rsp,%rbp` (in
 * its first bytes: fp_prologue()), built without almost none do. Nine in
 * ten: the module keeps them (FP_ALL); fewer than one in twenty: it does not (FP_NONE); in
 * between (FP_MIXED: a Rust crate built with frame pointers over a std
 * built without, a small executable's C start-up stubs) the function of
 * each return address is looked up in the table and judged on its own,
 * cached by return address (fn_judge()). A return address in code without
 * frame pointers means the chain cannot be trusted past it (its function
 * may use %rbp for anything; the frame of its caller is skipped or made
 * up): the stack is then unwound by libunwind's unw_backtrace() instead,
 * from the tracker's own frames (which the CFI covers too) up, and the
 * frames below the allocator's caller dropped. unw_backtrace() walks with
 * libunwind's per-thread frame cache (UNW_CACHE_PER_THREAD): a known return
 * address costs a hash lookup and two loads, no CFI parsing.
 *
 * A chain that only ends in such a module (glibc's __libc_start_call_main
 * or start_thread, at the top of every stack) is whole, not cut: the last
 * return address of a chain is judged once (tail_learn()) by unwinding
 * through it; when libunwind finds at most TAIL_MAX frames above it, it is
 * the top of the stack and chains ending there need no CFI.
 *
 * libunwind is Debian's libunwind.so.8, opened at start with dlopen() and
 * RTLD_LOCAL: its _Unwind_* and backtrace() (it exports both) stay out of
 * the program's symbol lookups, and a target that cannot load it (another
 * mount namespace, a container without it) keeps the frame-pointer walk
 * and the stack scan below. Debian ships libunwind.a without -fPIC, so it
 * cannot be linked into this library. libunwind allocates (its thread-local
 * cache, dl_iterate_phdr()) and reads the loader's list: it runs with the
 * thread marked busy (preload/tracker.c), so allocations it makes pass
 * through untracked (and are noted, quiet[]: glibc frees its thread-local
 * block later, which must not count as an unknown free), and a signal
 * handler that allocates meanwhile passes through too. Its per-thread
 * cache takes no lock. A module unloaded (dlclose) flushes its cache at
 * the next module lookup that misses.
 *
 * Without libunwind, a chain shorter than HEAP_REGION_SCAN_MIN is cut at
 * its first frame outside the executable's code and gets the stack
 * scanned: the words of the 1 KiB above the call pointing into the
 * executable's code (rsprof keeps those that follow a call instruction:
 * util/heap/heap.c), unless the chain is whole (walked_out()). As
 * bpf/heap.bpf.c does.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <string.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "preload/tracker.h"

/* --- the modules and whether they keep frame pointers -------------------- */

#define MOD_MAX		256
#define MOD_SAMPLE	64
#define TAIL_MAX	2	/* frames above glibc's start-up code: its callers */
#define TAIL_SLOTS	64
#define FN_SLOTS	4096
#define CFI_SKIP_MAX	16	/* the tracker's own frames below the caller's, at most */

/* Does a module keep frame pointers (mod_judge())? */
enum { FP_UNJUDGED, FP_NONE, FP_MIXED, FP_ALL };

struct module {
	uintptr_t lo, hi;	/* executable segment */
	uintptr_t eh_hdr;	/* .eh_frame_hdr (0: none) */
	int fp;			/* FP_* */
};

static struct module mods[MOD_MAX];
static unsigned int n_mods;		/* published with release */
static int mods_lock;
static unsigned long long mods_adds = ~0ULL, mods_subs;
static uintptr_t text_lo, text_hi;	/* the executable's code (the scan) */

/* Return addresses that end a chain, judged: ip << 1 | (1: the top of the
 * stack, 0: a frame of code without frame pointers below its callers). */
static uint64_t tails[TAIL_SLOTS];
/* Return addresses in MIXED modules: ip << 1 | (1: its function keeps a
 * frame pointer). */
static uint64_t fn_cache[FN_SLOTS];

/* libunwind, when the target can load it (the names its header maps to). */
#define SYM_(x)	#x
#define SYM(x)	SYM_(x)
static __typeof__(unw_backtrace) *unw_bt;
static __typeof__(unw_flush_cache) *unw_flush;
static unw_addr_space_t unw_as;
/* The most frames of the tracker's own seen below the allocator's caller. */
static int cfi_skip;

/* Inside libunwind (this thread). */
static __thread uint8_t in_cfi __attribute__((tls_model("initial-exec")));

/* Blocks allocated inside libunwind, untracked (the thread's block of its
 * thread-local variables, which glibc allocates at the first use and frees
 * when the thread's stack is reused): their frees are not unknown frees. */
#define QUIET_SLOTS	4096
#define QUIET_PROBE	16
static uint64_t quiet[QUIET_SLOTS];
static unsigned int n_quiet;		/* entries in quiet[] */

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	bool *first = data;
	uintptr_t lo = 0, hi = 0, eh = 0;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && !lo) {
			lo = info->dlpi_addr + ph->p_vaddr;
			hi = lo + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_EH_FRAME) {
			eh = info->dlpi_addr + ph->p_vaddr;
		}
	}
	if (*first) {
		*first = false;
		text_lo = lo;
		text_hi = hi;
	}
	if (!lo)
		return 0;
	for (unsigned int i = 0; i < n_mods; i++)
		if (mods[i].lo == lo && mods[i].hi == hi)
			return 0;
	if (n_mods < MOD_MAX) {
		mods[n_mods].lo = lo;
		mods[n_mods].hi = hi;
		mods[n_mods].eh_hdr = eh;
		mods[n_mods].fp = FP_UNJUDGED;
		__atomic_store_n(&n_mods, n_mods + 1, __ATOMIC_RELEASE);
	}
	return 0;
}

static int gen_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	unsigned long long *g = data;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		g[0] = info->dlpi_adds;
		g[1] = info->dlpi_subs;
	}
	return 1;
}

/* Learn the modules loaded since the last look (a miss: dlopen). */
static void mods_refresh(void)
{
	unsigned long long g[2] = { 0, 0 };
	bool first = n_mods == 0;

	if (__atomic_exchange_n(&mods_lock, 1, __ATOMIC_ACQUIRE))
		return;		/* another thread is at it: this stack goes without */
	dl_iterate_phdr(gen_cb, g);
	if (g[0] != mods_adds) {
		dl_iterate_phdr(phdr_cb, &first);
		if (g[1] != mods_subs && unw_flush)
			unw_flush(unw_as, 0, 0);	/* a module went: its cached frames too */
		mods_adds = g[0];
		mods_subs = g[1];
	}
	__atomic_store_n(&mods_lock, 0, __ATOMIC_RELEASE);
}

static struct module *mod_of(uintptr_t ip)
{
	/* the module found last: a stack's frames are mostly in one (the
	 * executable), and a walk asks for each; exact while no module was
	 * ever unloaded (ranges then never overlap) */
	static __thread unsigned int last_mod __attribute__((tls_model("initial-exec")));
	unsigned int n = __atomic_load_n(&n_mods, __ATOMIC_ACQUIRE), l = last_mod;

	if (l < n && ip - mods[l].lo < mods[l].hi - mods[l].lo &&
	    !__atomic_load_n(&mods_subs, __ATOMIC_RELAXED))
		return &mods[l];
	for (unsigned int i = n; i-- > 0;)	/* newest first: a reused range */
		if (ip - mods[i].lo < mods[i].hi - mods[i].lo) {
			last_mod = i;
			return &mods[i];
		}
	return NULL;
}

/*
 * The function at f sets up a frame pointer: push %rbp, then mov %rsp,%rbp
 * with nothing pushed and no stack space taken between them. Not always at
 * its first bytes: gcc -O2 schedules other instructions before and between
 * the two (Redis's zmalloc_usable begins with a movabs, _sdsnewlen has a
 * lea between them), so both are looked for in its first FP_WINDOW bytes
 * (never past end, the module's code). Code built without frame pointers
 * may use %rbp as any register, even `mov %rsp,%rbp` to point at a buffer
 * on its stack, but after pushing other registers or `sub $N,%rsp`: a byte
 * 0x50-0x57 (a push) or 48 83/81 ec (sub from %rsp) after the push rules a
 * candidate out. Bytes are not instructions, so an operand may rule a real
 * prologue out too: that function is then unwound through the CFI, which
 * is slower, never wrong.
 */
#define FP_WINDOW	32
static bool fp_prologue(const uint8_t *f, uintptr_t end)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xe5 };
	size_t n = end - (uintptr_t)f < FP_WINDOW ? end - (uintptr_t)f : FP_WINDOW;

	for (size_t i = 0; i + 1 + sizeof(mov) <= n; i++) {
		if (f[i] != 0x55)
			continue;
		for (size_t j = i + 1; j + sizeof(mov) <= n; j++) {
			if (!memcmp(f + j, mov, sizeof(mov)))
				return true;
			if ((f[j] >= 0x50 && f[j] <= 0x57) ||
			    (f[j] == 0x48 && (f[j + 1] == 0x83 || f[j + 1] == 0x81) &&
			     f[j + 2] == 0xec))
				break;
		}
	}
	return false;
}

/* The function containing code address a in m (its .eh_frame_hdr search
 * table: sorted (initial location, FDE) pairs); 0: none known. */
static uintptr_t fn_start(const struct module *m, const int32_t *tab, uint32_t count, uintptr_t a)
{
	uint32_t lo = 0, hi = count;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->eh_hdr + (intptr_t)tab[2 * mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	a = m->eh_hdr + (intptr_t)tab[2 * lo];
	return a - m->lo < m->hi - m->lo && m->hi - a >= 8 ? a : 0;
}

/* m's search table, in the one encoding every linker writes
 * (DW_EH_PE_datarel | DW_EH_PE_sdata4); false: none to read. */
static bool eh_table(const struct module *m, const int32_t **tab, uint32_t *count)
{
	const uint8_t *h = (const uint8_t *)m->eh_hdr;

	/* version, eh_frame_ptr (pcrel sdata4), fde_count (udata4), table */
	if (!h || h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return false;
	memcpy(count, h + 8, sizeof(*count));
	*tab = (const int32_t *)(h + 12);
	return *count > 0;
}

/*
 * Does module m keep frame pointers? Sampled over its search table: ALL
 * when nine in ten of the functions begin with the prologue, NONE when
 * fewer than one in twenty do, else MIXED (each function judged on its own:
 * a small executable's C start-up stubs, a Rust crate built with frame
 * pointers whose std was not). No table to read: NONE (libunwind then
 * unwinds it, or finds nothing either).
 */
static int mod_judge(const struct module *m)
{
	const int32_t *tab;
	uint32_t count;
	unsigned int step, seen = 0, yes = 0;

	if (!eh_table(m, &tab, &count))
		return FP_NONE;
	step = count > MOD_SAMPLE ? count / MOD_SAMPLE : 1;
	for (uint32_t i = 0; i < count && seen < MOD_SAMPLE; i += step) {
		uintptr_t f = m->eh_hdr + (intptr_t)tab[2 * i];

		if (f - m->lo >= m->hi - m->lo || m->hi - f < 8)
			continue;
		seen++;
		yes += fp_prologue((const uint8_t *)f, m->hi);
	}
	if (!seen || yes * 20 < seen)
		return FP_NONE;
	return yes * 10 >= seen * 9 ? FP_ALL : FP_MIXED;
}

/* Is the function of return address ip (in m, MIXED) one with the prologue? */
static int fn_judge(const struct module *m, uintptr_t ip)
{
	uint64_t *slot = &fn_cache[(ip >> 2) % FN_SLOTS];
	uint64_t c = __atomic_load_n(slot, __ATOMIC_RELAXED);
	const int32_t *tab;
	uint32_t count;
	uintptr_t f;
	int fp;

	if (c >> 1 == ip)
		return c & 1;
	/* ip - 1: the call, when it is the last instruction of its function */
	f = eh_table(m, &tab, &count) ? fn_start(m, tab, count, ip - 1) : 0;
	fp = f && fp_prologue((const uint8_t *)f, m->hi);
	__atomic_store_n(slot, (uint64_t)ip << 1 | fp, __ATOMIC_RELAXED);
	return fp;
}

/* 1: the frame of return address ip keeps a frame pointer; 0: not;
 * -1: ip is in no module known (generated code: trusted as it is). */
static int fp_at(uintptr_t ip)
{
	struct module *m = mod_of(ip);

	if (unlikely(!m)) {
		mods_refresh();
		m = mod_of(ip);
		if (!m)
			return -1;
	}
	if (unlikely(m->fp == FP_UNJUDGED))
		__atomic_store_n(&m->fp, mod_judge(m), __ATOMIC_RELAXED);
	if (m->fp == FP_MIXED)
		return fn_judge(m, ip);
	return m->fp == FP_ALL;
}

void unwind__init(void)
{
	__typeof__(unw_set_caching_policy) *policy;
	unw_addr_space_t *as;
	void *h;

	mods_refresh();
	/* RTLD_NOW: nothing bound lazily later, inside malloc */
	h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	policy = (__typeof__(policy))dlsym(h, SYM(unw_set_caching_policy));
	as = dlsym(h, SYM(unw_local_addr_space));
	unw_flush = (__typeof__(unw_flush))dlsym(h, SYM(unw_flush_cache));
	if (!policy || !as || !unw_flush || policy(*as, UNW_CACHE_PER_THREAD))
		return;
	unw_as = *as;
	unw_bt = (__typeof__(unw_bt))dlsym(h, SYM(unw_backtrace));
}

bool unwind__cfi(void)
{
	return unw_bt != NULL;
}

bool unwind__inside(void)
{
	return in_cfi;
}

static inline unsigned int quiet_slot(uint64_t p)
{
	return (unsigned int)((p >> 4) * 0x9e3779b97f4a7c15ULL >> 52);	/* 12 bits */
}

void unwind__quiet_add(const void *p)
{
	uint64_t v = (uintptr_t)p;
	unsigned int h = quiet_slot(v);

	for (unsigned int i = 0; i < QUIET_PROBE; i++) {
		uint64_t zero = 0;

		if (__atomic_compare_exchange_n(&quiet[(h + i) % QUIET_SLOTS], &zero, v, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			__atomic_fetch_add(&n_quiet, 1, __ATOMIC_RELEASE);
			return;
		}
	}
	/* full: its free will count as an unknown free */
}

/* On every free the tracker does not know (with --heap-sample, most of
 * them): nothing noted, no work; else plain loads, a CAS on the match. */
bool unwind__quiet_take(const void *p)
{
	uint64_t v = (uintptr_t)p;
	unsigned int h;

	if (!__atomic_load_n(&n_quiet, __ATOMIC_ACQUIRE))
		return false;
	h = quiet_slot(v);
	for (unsigned int i = 0; i < QUIET_PROBE; i++) {
		uint64_t *slot = &quiet[(h + i) % QUIET_SLOTS], want = v;

		if (__atomic_load_n(slot, __ATOMIC_RELAXED) == v &&
		    __atomic_compare_exchange_n(slot, &want, 0, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			__atomic_fetch_sub(&n_quiet, 1, __ATOMIC_RELAXED);
			return true;
		}
	}
	return false;
}

/* --- the walks ------------------------------------------------------------ */

static inline bool in_text(uint64_t a)
{
	return a - text_lo < text_hi - text_lo;
}

/*
 * The chain went through the executable and out of it (into libc's
 * start-up code, or start_thread): it is whole, and the executable's code
 * is in it, so rsprof would not use the scan (a shallow program's every
 * allocation would pay for it).
 */
static inline bool walked_out(const struct unwind_stack *s)
{
	if (s->depth < 2 || in_text(s->ips[s->depth - 1]))
		return false;
	for (int i = 0; i < s->depth - 1; i++)
		if (!in_text(s->ips[i]))
			return false;
	return true;
}

/*
 * The stack through libunwind: its frames from the allocator's caller
 * (ret) up. false: ret was not among them (libunwind lost its way below
 * it), s unchanged.
 */
static bool cfi_walk(uintptr_t ret, struct unwind_stack *s)
{
	void *buf[HEAP_REGION_MAX_DEPTH + CFI_SKIP_MAX];
	int skip = __atomic_load_n(&cfi_skip, __ATOMIC_RELAXED);
	/* no deeper than needed: the tracker's frames, then the stack kept */
	int n;

	in_cfi = 1;
	n = unw_bt(buf, skip ? skip + HEAP_REGION_MAX_DEPTH : (int)(sizeof(buf) / sizeof(buf[0])));
	in_cfi = 0;

	for (int i = 0; i < n && i < CFI_SKIP_MAX; i++) {
		if ((uintptr_t)buf[i] != ret)
			continue;
		int d = n - i;

		if (d > HEAP_REGION_MAX_DEPTH)
			d = HEAP_REGION_MAX_DEPTH;
		for (int k = 0; k < d; k++)
			s->ips[k] = (uintptr_t)buf[i + k];
		s->depth = d;
		s->n_cand = 0;
		if (i > skip)
			__atomic_store_n(&cfi_skip, i, __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

/*
 * Is ip, the last return address of a whole frame-pointer chain, the top of
 * the stack (glibc's start-up code)? Judged once per address, through s
 * unwound by libunwind (whose frames from s's first up are the same).
 */
static int tail_known(uintptr_t ip)
{
	uint64_t t = __atomic_load_n(&tails[(ip >> 4) % TAIL_SLOTS], __ATOMIC_RELAXED);

	return t >> 1 == ip ? (int)(t & 1) : -1;
}

static void tail_learn(uintptr_t ip, const struct unwind_stack *cfi)
{
	for (int k = 0; k < cfi->depth; k++) {
		if (cfi->ips[k] != ip)
			continue;
		if (cfi->depth == HEAP_REGION_MAX_DEPTH)
			return;		/* cut: the top is not known */
		__atomic_store_n(&tails[(ip >> 4) % TAIL_SLOTS],
				 (uint64_t)ip << 1 | (cfi->depth - 1 - k <= TAIL_MAX), __ATOMIC_RELAXED);
		return;
	}
}

void unwind__stack(const struct unwind_from *from, uintptr_t lo, uintptr_t hi,
		   struct unwind_stack *s)
{
	uintptr_t fp = from->fp, sp = from->sp, bottom = sp;
	int n = 0, cfi = 0;

	s->ips[n++] = from->ret;
	s->n_cand = 0;
	if (unw_bt && fp_at(from->ret) == 0)
		cfi = 1;	/* the caller keeps no frame pointer */
	if (sp < lo || sp >= hi) {
		s->depth = n;
		if (cfi)
			cfi_walk(from->ret, s);
		return;
	}
	while (!cfi && n < HEAP_REGION_MAX_DEPTH) {
		const uintptr_t *f = (const uintptr_t *)fp;

		if (fp < bottom || fp > hi - 16 || (fp & 7))
			break;
		if (!f[1])
			break;
		s->ips[n++] = f[1];
		bottom = fp + 16;
		fp = f[0];
		/* a frame of code without frame pointers: its %rbp is anything */
		if (unw_bt && n < HEAP_REGION_MAX_DEPTH && fp_at(f[1]) == 0)
			cfi = 2;
	}
	s->depth = n;
	if (cfi == 2) {
		/* the chain ends in such code: the top of the stack, or cut? */
		uintptr_t last = s->ips[n - 1];
		int top = tail_known(last);

		if (top == 1)
			return;
		if (top < 0) {
			struct unwind_stack c;

			if (!cfi_walk(from->ret, &c))
				return;
			tail_learn(last, &c);
			/* the top: the chain, as every later call through it gets */
			if (tail_known(last) != 1)
				*s = c;
			return;
		}
	}
	if (cfi && cfi_walk(from->ret, s))
		return;
	if (n < HEAP_REGION_SCAN_MIN && text_hi && !walked_out(s)) {
		const uintptr_t *w = (const uintptr_t *)sp;

		/* a short chain is cut at its first word outside the executable's
		 * text: what a plain %rbp pointed at (bpf/heap.bpf.c does the same) */
		for (int i = 1; i < s->depth; i++) {
			if (!in_text(s->ips[i])) {
				s->depth = i;
				break;
			}
		}
		size_t words = (hi - sp) / sizeof(*w);

		if (words > HEAP_REGION_SCAN_WORDS)
			words = HEAP_REGION_SCAN_WORDS;
		for (size_t i = 0; i < words && s->n_cand < HEAP_REGION_MAX_CAND; i++)
			if (in_text(w[i]))
				s->cand[s->n_cand++] = w[i];
	}
}

uint64_t unwind__hash(const struct unwind_stack *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (int i = 0; i < s->depth; i++) {
		h ^= s->ips[i];
		h *= 1099511628211ULL;
		h ^= h >> 29;
	}
	for (int i = 0; i < s->n_cand; i++) {
		h ^= s->cand[i] + 1;
		h *= 1099511628211ULL;
		h ^= h >> 29;
	}
	return h ? h : 1;
}
