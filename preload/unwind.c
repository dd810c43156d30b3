/*
 * The allocation's call stack: through frame pointers where the code keeps
 * them, through the DWARF call frame information (libunwind) where it does
 * not (Rust release builds, Debian's packaged C programs).
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
 * cached by return address (fn_judge()).
 *
 * A return address in code without frame pointers means the chain cannot
 * be trusted past it (its function may use %rbp for anything): its frame
 * is stepped through by the rule its DWARF CFI gives at the call (CFA =
 * %rsp + k, the return address at CFA - 8, %rbp saved at CFA - n or
 * unchanged), read from .eh_frame once per return address and cached
 * (rule_of(), the same table holds "frame pointer" for the others): each
 * frame then costs a table lookup and a couple of loads, whichever code it
 * is in. The rules the table cannot hold (an expression, a signal frame,
 * code without FDE) hand the whole stack to libunwind's unw_backtrace(),
 * from the tracker's own frames (which the CFI covers too) up, the frames
 * below the allocator's caller dropped. The walk ends where the CFI says
 * the return address is undefined (_start, a thread's clone3), or at the
 * first frame that fails the checks above.
 *
 * libunwind is Debian's libunwind.so.8, opened at start with dlopen() and
 * RTLD_LOCAL: its _Unwind_* and backtrace() (it exports both) stay out of
 * the program's symbol lookups, and a target that cannot load it (another
 * mount namespace, a container without it) keeps the frame-pointer walk
 * and the stack scan below (and no CFI rules either: CFI unwinding is on
 * or off as a whole, HEAP_RSTAT_CFI). Debian ships libunwind.a without
 * -fPIC, so it cannot be linked into this library. libunwind allocates (its thread-local
 * cache, dl_iterate_phdr()) and reads the loader's list: it runs with the
 * thread marked busy (preload/tracker.c), so allocations it makes are not
 * counted (their headers say so: glibc frees its thread-local block later,
 * which is then no unknown free), and a signal handler that allocates
 * meanwhile is not counted either. Its per-thread
 * cache takes no lock. A module unloaded (dlclose) flushes its cache and
 * the rules at the next module lookup that misses (until then a return
 * address of a module loaded at the same place may step by a stale rule:
 * a wrong frame at worst, never a fault, every load is on the stack).
 *
 * A chain shorter than HEAP_REGION_SCAN_MIN (without libunwind, or cut
 * short by the checks) is cut at its first frame outside the executable's
 * code and gets the stack scanned: the words of the 1 KiB above the call pointing into the
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
#include "util/symbols/x86-prologue.h"
#include "util/unwind/cfi.h"

/* --- the modules and whether they keep frame pointers -------------------- */

#define MOD_MAX		256
#define MOD_SAMPLE	64
#define FN_SLOTS	4096
#define CFI_SKIP_MAX	16	/* the tracker's own frames below the caller's, at most */

/* Does a module keep frame pointers (mod_judge())? */
enum { FP_UNJUDGED, FP_NONE, FP_MIXED, FP_ALL };

struct module {
	uintptr_t lo, hi;	/* executable segment */
	uintptr_t eh_hdr;	/* .eh_frame_hdr (0: none) */
	int fp;			/* FP_* */
};

/* m's CFI, read in place: the module is mapped in this process. */
static inline struct cfi_module mod_cfi(const struct module *m)
{
	struct cfi_module c = {
		.hdr = (const uint8_t *)m->eh_hdr,
		.hdr_addr = m->eh_hdr,
		.lo = NULL,
		.hi = (const uint8_t *)UINTPTR_MAX,
		.text_lo = m->lo,
		.text_hi = m->hi,
	};

	return c;
}

static struct module mods[MOD_MAX];
static unsigned int n_mods;		/* published with release */
static int mods_lock;
static unsigned long long mods_adds = ~0ULL, mods_subs;
static uintptr_t text_lo, text_hi;	/* the executable's code (the scan) */

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

static void rules_flush(void);

static int gen_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	unsigned long long *g = data;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		g[0] = info->dlpi_adds;
		g[1] = info->dlpi_subs;
	}
	return 1;
}

/* Learn the modules loaded since the last look (at the start; later on a
 * miss where glibc has no _dl_find_object). */
static void mods_refresh(void)
{
	unsigned long long g[2] = { 0, 0 };
	bool first = n_mods == 0;
	int slot;

	if (__atomic_exchange_n(&mods_lock, 1, __ATOMIC_ACQUIRE))
		return;		/* another thread is at it: this stack goes without */
	slot = callout__begin(HEAP_CALLOUT_MODULES);
	dl_iterate_phdr(gen_cb, g);
	if (g[0] != mods_adds) {
		dl_iterate_phdr(phdr_cb, &first);
		if (g[1] != mods_subs) {
			/* a module went: its cached frames and rules too */
			if (unw_flush)
				unw_flush(unw_as, 0, 0);
			rules_flush();
		}
		mods_adds = g[0];
		mods_subs = g[1];
	}
	callout__end(slot);
	__atomic_store_n(&mods_lock, 0, __ATOMIC_RELEASE);
}

/*
 * glibc's _dl_find_object() (2.35 and later): the object containing an
 * address, without the loader's lock (dl_iterate_phdr() takes it, and a
 * program's own dl_iterate_phdr() callback may be waiting on a lock the
 * allocating thread holds). Looked up at the start: a target with an
 * older glibc refreshes through dl_iterate_phdr().
 */
#ifdef DLFO_EH_SEGMENT_TYPE
static int (*find_object)(void *pc, struct dl_find_object *o);
#else
static int (*find_object)(void *pc, void *o);	/* built with glibc < 2.35: never set */
#endif

/*
 * The module of ip, a return address in no module known: the executable
 * segment holding it, read from the object's program headers (at the start
 * of its first mapping), without the loader's lock. NULL: ip is in no
 * object (generated code), or the object cannot be read that way.
 */
static struct module *mod_found(uintptr_t ip)
{
#ifdef DLFO_EH_SEGMENT_TYPE
	struct dl_find_object o;
	const ElfW(Ehdr) *e;
	const ElfW(Phdr) *ph;
	uintptr_t start, end, lo = 0, hi = 0;
	struct module *m = NULL;

	if (find_object((void *)ip, &o))
		return NULL;
	start = (uintptr_t)o.dlfo_map_start;
	end = (uintptr_t)o.dlfo_map_end;
	e = o.dlfo_map_start;
	if (end - start < sizeof(*e) || memcmp(e->e_ident, ELFMAG, SELFMAG) ||
	    e->e_phentsize != sizeof(*ph) || e->e_phoff > end - start ||
	    (end - start - e->e_phoff) / sizeof(*ph) < e->e_phnum || !o.dlfo_link_map)
		return NULL;
	ph = (const ElfW(Phdr) *)(start + e->e_phoff);
	for (unsigned int i = 0; i < e->e_phnum; i++) {
		uintptr_t a = o.dlfo_link_map->l_addr + ph[i].p_vaddr;

		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && ip - a < ph[i].p_memsz) {
			lo = a;
			hi = a + ph[i].p_memsz;
			break;
		}
	}
	if (!lo || __atomic_exchange_n(&mods_lock, 1, __ATOMIC_ACQUIRE))
		return NULL;
	for (unsigned int i = 0; i < n_mods; i++) {
		if (mods[i].lo < hi && lo < mods[i].hi) {
			/* over a module's range: that one was unloaded */
			if (unw_flush)
				unw_flush(unw_as, 0, 0);
			rules_flush();
			__atomic_store_n(&mods_subs, mods_subs + 1, __ATOMIC_RELAXED);
			break;
		}
	}
	if (n_mods < MOD_MAX) {
		m = &mods[n_mods];
		m->lo = lo;
		m->hi = hi;
		m->eh_hdr = (uintptr_t)o.dlfo_eh_frame;
		m->fp = FP_UNJUDGED;
		__atomic_store_n(&n_mods, n_mods + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&mods_lock, 0, __ATOMIC_RELEASE);
	return m;
#else
	return NULL;
#endif
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
 * The function at f sets up a frame pointer (push %rbp, then mov
 * %rsp,%rbp in its first bytes: util/symbols/x86-prologue.h), reading
 * never past end, the module's code.
 */
static bool fp_prologue(const uint8_t *f, uintptr_t end)
{
	return x86__fp_prologue(f, end - (uintptr_t)f) == 1;
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
	struct cfi_module c = mod_cfi(m);
	const int32_t *tab;
	uint32_t count;
	unsigned int step, seen = 0, yes = 0;

	if (!cfi__table(&c, &tab, &count))
		return FP_NONE;
	step = count > MOD_SAMPLE ? count / MOD_SAMPLE : 1;
	for (uint32_t i = 0; i < count && seen < MOD_SAMPLE; i += step) {
		uintptr_t f = cfi__entry(&c, tab, i);

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
	struct cfi_module cm = mod_cfi(m);
	uintptr_t f;
	int fp;

	if (c >> 1 == ip)
		return c & 1;
	/* ip - 1: the call, when it is the last instruction of its function */
	f = cfi__fn_start(&cm, ip - 1);
	fp = f && fp_prologue((const uint8_t *)f, m->hi);
	__atomic_store_n(slot, (uint64_t)ip << 1 | fp, __ATOMIC_RELAXED);
	return fp;
}

/* 1: the frame of return address ip keeps a frame pointer; 0: not;
 * -1: ip is in no module known (generated code: trusted as it is). *mp:
 * its module. */
static int fp_at(uintptr_t ip, struct module **mp)
{
	struct module *m = mod_of(ip);

	if (unlikely(!m)) {
		if (find_object) {
			m = mod_found(ip);
		} else {
			mods_refresh();
			m = mod_of(ip);
		}
		if (!m)
			return -1;
	}
	*mp = m;
	if (unlikely(m->fp == FP_UNJUDGED))
		__atomic_store_n(&m->fp, mod_judge(m), __ATOMIC_RELAXED);
	if (m->fp == FP_MIXED)
		return fn_judge(m, ip);
	return m->fp == FP_ALL;
}

/* --- the rule of each return address ------------------------------------ */

/*
 * How to step from the frame of a return address to its caller's frame,
 * cached by return address (rules[], lock-free like fn_cache: one 64-bit
 * word a slot, written whole): the canonical frame address (CFA, the
 * stack pointer before the call into this frame) is %rsp or %rbp plus
 * `off`, the return address lies at CFA - 8, the caller's %rbp at
 * CFA - 8 * bp (bp 0: %rbp unchanged). A frame that keeps a frame pointer
 * is CFA = %rbp + 16, %rbp at CFA - 16. For code without frame pointers
 * the rule is the one the DWARF CFI (.eh_frame) gives at the call
 * (util/unwind/cfi.c), read once per return address: every later stack through
 * it steps with a table lookup and two loads. Written by hand, not asked
 * of libunwind: it has no call that returns the rule at an address, and
 * its unw_backtrace() cost ~150 ns a stack of the benchmark's
 * (bench/heap.sh, "nofp" rows), most of the tracker's time there. A rule
 * the table cannot hold (a CFA expression, a signal frame, no FDE) is
 * CFI_OTHER: libunwind unwinds that stack, as before.
 *
 * The slot's word: tag (ip >> RULE_BITS) << 32 | the rule (32 bits). 64 K
 * slots (512 KiB, touched as they fill): rustc's stacks meet ~20 K return
 * addresses, which a table of 16 K relearnt one time in ten.
 */
#define RULE_BITS	16
#define RULE_SLOTS	(1u << RULE_BITS)

static uint64_t rules[RULE_SLOTS];

static void rules_flush(void)
{
	for (unsigned int i = 0; i < RULE_SLOTS; i++)
		if (__atomic_load_n(&rules[i], __ATOMIC_RELAXED))	/* pages never filled stay untouched */
			__atomic_store_n(&rules[i], 0, __ATOMIC_RELAXED);
}

static inline unsigned int rule_slot(uintptr_t ip)
{
	return (unsigned int)((ip ^ (ip >> RULE_BITS)) & (RULE_SLOTS - 1));
}

/* Return address ip's rule, learnt at its first sight. */
static uint64_t rule_learn(uintptr_t ip)
{
	struct module *m = NULL;
	uint64_t rule = CFI_RULE_FP;

	/* code with frame pointers; generated code; no libunwind: the chain */
	if (unw_bt && fp_at(ip, &m) == 0) {
		struct cfi_module c = mod_cfi(m);

		rule = cfi__rule(&c, ip - 1);	/* the call */
	}
	if ((ip >> RULE_BITS) < (1ULL << 32))
		__atomic_store_n(&rules[rule_slot(ip)],
				 (uint64_t)(ip >> RULE_BITS) << 32 | rule, __ATOMIC_RELAXED);
	return rule;
}

static inline uint64_t rule_of(uintptr_t ip)
{
	uint64_t v = __atomic_load_n(&rules[rule_slot(ip)], __ATOMIC_RELAXED);

	if (likely(v >> 32 == ip >> RULE_BITS && v))
		return (uint32_t)v;
	return rule_learn(ip);
}

void unwind__init(void)
{
	__typeof__(unw_set_caching_policy) *policy;
	unw_addr_space_t *as;
	void *h;

	mods_refresh();
	find_object = (__typeof__(find_object))dlsym(RTLD_DEFAULT, "_dl_find_object");
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
	int n, slot;

	slot = callout__begin(HEAP_CALLOUT_LIBUNWIND);
	n = unw_bt(buf, skip ? skip + HEAP_REGION_MAX_DEPTH : (int)(sizeof(buf) / sizeof(buf[0])));
	callout__end(slot);

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

void unwind__stack(const struct unwind_from *from, uintptr_t lo, uintptr_t hi,
		   struct unwind_stack *s)
{
	uintptr_t ip = from->ret, sp = from->sp, bp = from->fp;
	uint64_t rule = rule_of(ip);
	int n = 0;

	s->ips[n++] = ip;
	s->n_cand = 0;
	s->depth = n;
	if (sp < lo || sp >= hi) {
		/* another stack (sigaltstack, a coroutine): the caller only */
		if (rule != CFI_RULE_FP && (rule & 7) != CFI_END)
			cfi_walk(from->ret, s);
		return;
	}
	/* each frame by its return address's rule, on the thread's stack only,
	 * upwards only: the CFA above the frame's stack pointer, 8-aligned */
	while (n < HEAP_REGION_MAX_DEPTH) {
		unsigned int kind = rule & 7, bpn = cfi_rule_bp(rule);
		uintptr_t cfa;
		const uintptr_t *c;

		if (likely(rule == CFI_RULE_FP)) {
			/* a branch, not arithmetic on the rule: the next frame's
			 * loads need not wait for the rule's */
			if (bp < sp || bp > hi - 16 || (bp & 7))
				break;
			c = (const uintptr_t *)bp;
			ip = c[1];
			if (!ip)
				break;
			sp = bp + 16;
			bp = c[0];
			s->ips[n++] = ip;
			rule = rule_of(ip);
			continue;
		}
		cfa = (kind == CFI_SP ? sp : bp) + cfi_rule_off(rule);
		c = (const uintptr_t *)cfa;
		if (unlikely(kind >= CFI_END)) {
			s->depth = n;
			if (kind == CFI_END || cfi_walk(from->ret, s))
				return;		/* the top of the stack: whole */
			break;
		}
		if (cfa <= sp || cfa > hi || (cfa & 7) || cfa - 8 * (bpn > 1 ? bpn : 1) < sp)
			break;
		ip = c[-1];
		if (!ip)
			break;
		if (bpn)
			bp = c[-(intptr_t)bpn];
		sp = cfa;
		s->ips[n++] = ip;
		rule = rule_of(ip);
	}
	s->depth = n;
	if (n < HEAP_REGION_SCAN_MIN && text_hi && !walked_out(s)) {
		const uintptr_t *w = (const uintptr_t *)from->sp;

		/* a short chain is cut at its first word outside the executable's
		 * text: what a plain %rbp pointed at (bpf/heap.bpf.c does the same) */
		for (int i = 1; i < s->depth; i++) {
			if (!in_text(s->ips[i])) {
				s->depth = i;
				break;
			}
		}
		size_t words = (hi - from->sp) / sizeof(*w);

		if (words > HEAP_REGION_SCAN_WORDS)
			words = HEAP_REGION_SCAN_WORDS;
		for (size_t i = 0; i < words && s->n_cand < HEAP_REGION_MAX_CAND; i++)
			if (in_text(w[i]))
				s->cand[s->n_cand++] = w[i];
	}
}

/*
 * Two lanes, the even frames and the odd ones, mixed at the end: each
 * frame's multiply waits for the one two frames back, not for the last
 * (half the latency of one chain over a deep stack).
 */
uint64_t unwind__hash(const struct unwind_stack *s)
{
	const uint64_t k = 1099511628211ULL;
	uint64_t a = 14695981039346656037ULL, b = 0x9e3779b97f4a7c15ULL ^ (uint64_t)s->depth;
	int i;

	for (i = 0; i + 1 < s->depth; i += 2) {
		a = (a ^ s->ips[i]) * k;
		b = (b ^ s->ips[i + 1]) * k;
		a ^= a >> 29;
		b ^= b >> 29;
	}
	if (i < s->depth) {
		a = (a ^ s->ips[i]) * k;
		a ^= a >> 29;
	}
	for (i = 0; i < s->n_cand; i++) {
		b = (b ^ (s->cand[i] + 1)) * k;
		b ^= b >> 29;
	}
	a = (a ^ (b << 32 | b >> 32)) * k;
	a ^= a >> 29;
	return a ? a : 1;
}
