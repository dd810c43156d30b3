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
		if (g[1] != mods_subs) {
			/* a module went: its cached frames and rules too */
			if (unw_flush)
				unw_flush(unw_as, 0, 0);
			rules_flush();
		}
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
 * The function at f sets up a frame pointer (push %rbp, then mov
 * %rsp,%rbp in its first bytes: util/symbols/x86-prologue.h), reading
 * never past end, the module's code.
 */
static bool fp_prologue(const uint8_t *f, uintptr_t end)
{
	return x86__fp_prologue(f, end - (uintptr_t)f) == 1;
}

/* The entry of a's function in m's search table; -1: none. */
static int64_t fde_index(const struct module *m, const int32_t *tab, uint32_t count, uintptr_t a)
{
	uint32_t lo = 0, hi = count;

	if (m->eh_hdr + (intptr_t)tab[0] > a)
		return -1;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->eh_hdr + (intptr_t)tab[2 * mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The function containing code address a in m (its .eh_frame_hdr search
 * table: sorted (initial location, FDE) pairs); 0: none known. */
static uintptr_t fn_start(const struct module *m, const int32_t *tab, uint32_t count, uintptr_t a)
{
	int64_t i = fde_index(m, tab, count, a);

	if (i < 0)
		return 0;
	a = m->eh_hdr + (intptr_t)tab[2 * i];
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
 * -1: ip is in no module known (generated code: trusted as it is). *mp:
 * its module. */
static int fp_at(uintptr_t ip, struct module **mp)
{
	struct module *m = mod_of(ip);

	if (unlikely(!m)) {
		mods_refresh();
		m = mod_of(ip);
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
 * (cfi_rule()), read once per return address: every later stack through
 * it steps with a table lookup and two loads. Written by hand, not asked
 * of libunwind: it has no call that returns the rule at an address, and
 * its unw_backtrace() cost ~150 ns a stack of the benchmark's
 * (bench/heap.sh, "nofp" rows), most of the tracker's time there. A rule
 * the table cannot hold (a CFA expression, a signal frame, no FDE) is
 * RULE_CFI: libunwind unwinds that stack, as before.
 *
 * The slot's word: tag (ip >> RULE_BITS) << 30 | bp << 19 | off << 3 | kind.
 */
enum { RULE_NONE, RULE_SP, RULE_BP, RULE_END, RULE_CFI };

#define RULE_BITS	14
#define RULE_SLOTS	(1u << RULE_BITS)
#define RULE_OFF_MAX	0xffff
#define RULE_BP_MAX	0x7ff
#define RULE_FP		(RULE_BP | 16u << 3 | 2u << 19)

static uint64_t rules[RULE_SLOTS];

#define DW_REG_RBP	6
#define DW_REG_RSP	7
#define DW_REG_RA	16
#define CFA_STACK	8	/* DW_CFA_remember_state nesting */

/* A bounded reader of CFI bytes (in the module's mapped .eh_frame). */
struct cfi_rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_uleb(struct cfi_rd *r)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; r->p < r->end; shift += 7) {
		uint8_t b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static int64_t rd_sleb(struct cfi_rd *r)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return (int64_t)v;
}

static uint64_t rd_fixed(struct cfi_rd *r, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, n);	/* little endian */
	r->p += n;
	return v;
}

/* A value in pointer encoding enc: its format only (no pc/data relative). */
static uint64_t rd_enc(struct cfi_rd *r, uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: return rd_fixed(r, 8);
	case 0x01: return rd_uleb(r);
	case 0x02: return rd_fixed(r, 2);
	case 0x03: return rd_fixed(r, 4);
	case 0x04: return rd_fixed(r, 8);
	case 0x09: return (uint64_t)rd_sleb(r);
	case 0x0a: return (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2);
	case 0x0b: return (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4);
	case 0x0c: return rd_fixed(r, 8);
	}
	r->bad = true;
	return 0;
}

/* How a register is restored: unchanged, from CFA + off, or anything else. */
enum { REG_SAME, REG_AT, REG_UNDEF, REG_OTHER };

struct cfa_state {
	int cfa_reg;		/* DW_REG_RSP, DW_REG_RBP; -1: anything else */
	int64_t cfa_off;
	int bp_how, ra_how;	/* REG_* */
	int64_t bp_off, ra_off;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;	/* 'R' */
	bool signal;		/* 'S' */
	bool aug_z;		/* 'z': FDEs carry augmentation data */
	const uint8_t *insn, *end;
};

static void reg_set(struct cfa_state *st, uint64_t reg, int how, int64_t off)
{
	if (reg == DW_REG_RBP) {
		st->bp_how = how;
		st->bp_off = off;
	} else if (reg == DW_REG_RA) {
		st->ra_how = how;
		st->ra_off = off;
	}
}

static void reg_restore(struct cfa_state *st, const struct cfa_state *init, uint64_t reg)
{
	if (reg == DW_REG_RBP) {
		st->bp_how = init->bp_how;
		st->bp_off = init->bp_off;
	} else if (reg == DW_REG_RA) {
		st->ra_how = init->ra_how;
		st->ra_off = init->ra_off;
	}
}

/*
 * Run the CFA instructions in r from code address loc until the rule at
 * target is known (the next row would start past it). init: the CIE's rules
 * (DW_CFA_restore), NULL while running the CIE's own. false: an
 * instruction this reader does not know.
 */
static bool cfa_run(struct cfi_rd *r, const struct cie *c, uintptr_t loc, uintptr_t target,
		    struct cfa_state *st, const struct cfa_state *init)
{
	struct cfa_state saved[CFA_STACK];
	int depth = 0;

	while (r->p < r->end && !r->bad) {
		uint8_t op = *r->p++;
		uint64_t reg, delta = 0;

		switch (op & 0xc0) {
		case 0x40:		/* DW_CFA_advance_loc */
			delta = op & 0x3f;
			goto advance;
		case 0x80:		/* DW_CFA_offset */
			reg_set(st, op & 0x3f, REG_AT, (int64_t)rd_uleb(r) * c->data_align);
			continue;
		case 0xc0:		/* DW_CFA_restore */
			if (init)
				reg_restore(st, init, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00:		/* DW_CFA_nop */
			continue;
		case 0x02:		/* DW_CFA_advance_loc1, 2, 4 */
			delta = rd_fixed(r, 1);
			goto advance;
		case 0x03:
			delta = rd_fixed(r, 2);
			goto advance;
		case 0x04:
			delta = rd_fixed(r, 4);
			goto advance;
		case 0x05:		/* DW_CFA_offset_extended */
			reg = rd_uleb(r);
			reg_set(st, reg, REG_AT, (int64_t)rd_uleb(r) * c->data_align);
			continue;
		case 0x06:		/* DW_CFA_restore_extended */
			reg = rd_uleb(r);
			if (init)
				reg_restore(st, init, reg);
			continue;
		case 0x07:		/* DW_CFA_undefined */
			reg_set(st, rd_uleb(r), REG_UNDEF, 0);
			continue;
		case 0x08:		/* DW_CFA_same_value */
			reg_set(st, rd_uleb(r), REG_SAME, 0);
			continue;
		case 0x09:		/* DW_CFA_register */
			reg = rd_uleb(r);
			rd_uleb(r);
			reg_set(st, reg, REG_OTHER, 0);
			continue;
		case 0x0a:		/* DW_CFA_remember_state */
			if (depth == CFA_STACK)
				return false;
			saved[depth++] = *st;
			continue;
		case 0x0b:		/* DW_CFA_restore_state */
			if (!depth)
				return false;
			*st = saved[--depth];
			continue;
		case 0x0c:		/* DW_CFA_def_cfa */
			reg = rd_uleb(r);
			st->cfa_reg = reg == DW_REG_RSP || reg == DW_REG_RBP ? (int)reg : -1;
			st->cfa_off = (int64_t)rd_uleb(r);
			continue;
		case 0x0d:		/* DW_CFA_def_cfa_register */
			reg = rd_uleb(r);
			st->cfa_reg = reg == DW_REG_RSP || reg == DW_REG_RBP ? (int)reg : -1;
			continue;
		case 0x0e:		/* DW_CFA_def_cfa_offset */
			st->cfa_off = (int64_t)rd_uleb(r);
			continue;
		case 0x0f:		/* DW_CFA_def_cfa_expression */
			st->cfa_reg = -1;
			delta = rd_uleb(r);
			goto skip;
		case 0x10:		/* DW_CFA_expression */
		case 0x16:		/* DW_CFA_val_expression */
			reg_set(st, rd_uleb(r), REG_OTHER, 0);
			delta = rd_uleb(r);
			goto skip;
		case 0x11:		/* DW_CFA_offset_extended_sf */
			reg = rd_uleb(r);
			reg_set(st, reg, REG_AT, rd_sleb(r) * c->data_align);
			continue;
		case 0x12:		/* DW_CFA_def_cfa_sf */
			reg = rd_uleb(r);
			st->cfa_reg = reg == DW_REG_RSP || reg == DW_REG_RBP ? (int)reg : -1;
			st->cfa_off = rd_sleb(r) * c->data_align;
			continue;
		case 0x13:		/* DW_CFA_def_cfa_offset_sf */
			st->cfa_off = rd_sleb(r) * c->data_align;
			continue;
		case 0x14:		/* DW_CFA_val_offset */
			reg = rd_uleb(r);
			rd_uleb(r);
			reg_set(st, reg, REG_OTHER, 0);
			continue;
		case 0x15:		/* DW_CFA_val_offset_sf */
			reg = rd_uleb(r);
			rd_sleb(r);
			reg_set(st, reg, REG_OTHER, 0);
			continue;
		case 0x2e:		/* DW_CFA_GNU_args_size */
			rd_uleb(r);
			continue;
		case 0x2f:		/* DW_CFA_GNU_negative_offset_extended */
			reg = rd_uleb(r);
			reg_set(st, reg, REG_AT, -(int64_t)rd_uleb(r) * c->data_align);
			continue;
		default:		/* DW_CFA_set_loc, vendor extensions */
			return false;
		}
advance:
		if (!init)
			return false;	/* a CIE does not advance */
		loc += delta * c->code_align;
		if (loc > target)
			return !r->bad;
		continue;
skip:
		if ((uint64_t)(r->end - r->p) < delta)
			return false;
		r->p += delta;
	}
	return !r->bad;
}

/* The CIE at p (eh_frame form); false: one this reader does not know. */
static bool cie_read(const uint8_t *p, struct cie *c)
{
	struct cfi_rd r;
	const char *aug;
	uint32_t len;
	uint8_t version;

	memcpy(&len, p, 4);
	if (!len || len == 0xffffffff)
		return false;		/* 64-bit DWARF: not in .eh_frame */
	r.p = p + 4;
	r.end = r.p + len;
	r.bad = false;
	if (rd_fixed(&r, 4) != 0)
		return false;		/* not a CIE */
	version = (uint8_t)rd_fixed(&r, 1);
	if (version != 1 && version != 3)
		return false;
	aug = (const char *)r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	if (r.p++ >= r.end)
		return false;
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	if ((version == 1 ? rd_fixed(&r, 1) : rd_uleb(&r)) != DW_REG_RA)
		return false;
	c->fde_enc = 0;			/* DW_EH_PE_absptr */
	c->signal = false;
	c->aug_z = aug[0] == 'z';
	if (c->aug_z) {
		uint64_t alen = rd_uleb(&r);
		const uint8_t *data_end = r.p + alen;

		if (r.bad || alen > (uint64_t)(r.end - r.p))
			return false;
		for (const char *a = aug + 1; *a && !r.bad; a++) {
			switch (*a) {
			case 'R':
				c->fde_enc = (uint8_t)rd_fixed(&r, 1);
				break;
			case 'P': {
				uint8_t enc = (uint8_t)rd_fixed(&r, 1);

				rd_enc(&r, enc);
				break;
			}
			case 'L':
				rd_fixed(&r, 1);
				break;
			case 'S':
				c->signal = true;
				break;
			default:
				return false;	/* its data cannot be skipped */
			}
		}
		r.p = data_end;
	} else if (aug[0]) {
		return false;
	}
	c->insn = r.p;
	c->end = r.end;
	return !r.bad;
}

/*
 * The rule at return address ip in m, from its FDE (found through the
 * .eh_frame_hdr search table); RULE_CFI when the table cannot hold it.
 */
static uint64_t cfi_rule(const struct module *m, uintptr_t ip)
{
	const int32_t *tab;
	uint32_t count, len, cie_off;
	int64_t i;
	const uint8_t *fde;
	uintptr_t start, target = ip - 1;	/* the call */
	struct cfa_state st = { -1, 0, REG_SAME, REG_SAME, 0, 0 }, init;
	struct cfi_rd r;
	struct cie c;
	uint64_t range, off, bp = 0;

	if (!eh_table(m, &tab, &count) || (i = fde_index(m, tab, count, target)) < 0)
		return RULE_CFI;
	start = m->eh_hdr + (intptr_t)tab[2 * i];
	fde = (const uint8_t *)(m->eh_hdr + (intptr_t)tab[2 * i + 1]);
	memcpy(&len, fde, 4);
	memcpy(&cie_off, fde + 4, 4);
	if (!len || len == 0xffffffff || !cie_off || !cie_read(fde + 4 - cie_off, &c) || c.signal)
		return RULE_CFI;
	r.p = fde + 8;
	r.end = fde + 4 + len;
	r.bad = false;
	rd_enc(&r, c.fde_enc);			/* pc_begin: the table's */
	range = rd_enc(&r, c.fde_enc & 0x0f);
	if (r.bad || target - start >= range)
		return RULE_CFI;		/* ip is past its function */
	{
		struct cfi_rd ci = { c.insn, c.end, false };

		if (!cfa_run(&ci, &c, 0, 0, &st, NULL))
			return RULE_CFI;
	}
	init = st;
	if (c.aug_z) {				/* the FDE's augmentation data */
		uint64_t alen = rd_uleb(&r);

		if (r.bad || alen > (uint64_t)(r.end - r.p))
			return RULE_CFI;
		r.p += alen;
	}
	if (!cfa_run(&r, &c, start, target, &st, &init))
		return RULE_CFI;
	if (st.ra_how == REG_UNDEF)
		return RULE_END;
	if (st.ra_how != REG_AT || st.ra_off != -8 || st.cfa_reg < 0 ||
	    st.cfa_off < 8 || st.cfa_off > RULE_OFF_MAX)
		return RULE_CFI;
	off = (uint64_t)st.cfa_off;
	if (st.bp_how == REG_AT) {
		if (st.bp_off >= 0 || (-st.bp_off & 7) || -st.bp_off / 8 > RULE_BP_MAX)
			return RULE_CFI;
		bp = (uint64_t)(-st.bp_off / 8);
	} else if (st.bp_how != REG_SAME) {
		return RULE_CFI;
	}
	return (st.cfa_reg == DW_REG_RSP ? RULE_SP : RULE_BP) | off << 3 | bp << 19;
}

static void rules_flush(void)
{
	for (unsigned int i = 0; i < RULE_SLOTS; i++)
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
	uint64_t rule = RULE_FP;

	/* code with frame pointers; generated code; no libunwind: the chain */
	if (unw_bt && fp_at(ip, &m) == 0)
		rule = cfi_rule(m, ip);
	if ((ip >> RULE_BITS) < (1ULL << 34))
		__atomic_store_n(&rules[rule_slot(ip)],
				 (uint64_t)(ip >> RULE_BITS) << 30 | rule, __ATOMIC_RELAXED);
	return rule;
}

static inline uint64_t rule_of(uintptr_t ip)
{
	uint64_t v = __atomic_load_n(&rules[rule_slot(ip)], __ATOMIC_RELAXED);

	if (likely(v >> 30 == ip >> RULE_BITS && v))
		return v & ((1u << 30) - 1);
	return rule_learn(ip);
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

	n = unw_bt(buf, skip ? skip + HEAP_REGION_MAX_DEPTH : (int)(sizeof(buf) / sizeof(buf[0])));

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
		if (rule != RULE_FP && (rule & 7) != RULE_END)
			cfi_walk(from->ret, s);
		return;
	}
	/* each frame by its return address's rule, on the thread's stack only,
	 * upwards only: the CFA above the frame's stack pointer, 8-aligned */
	while (n < HEAP_REGION_MAX_DEPTH) {
		unsigned int kind = rule & 7, bpn = (unsigned int)(rule >> 19) & RULE_BP_MAX;
		uintptr_t cfa;
		const uintptr_t *c;

		if (likely(rule == RULE_FP)) {
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
		cfa = (kind == RULE_SP ? sp : bp) + ((rule >> 3) & RULE_OFF_MAX);
		c = (const uintptr_t *)cfa;
		if (unlikely(kind >= RULE_END)) {
			s->depth = n;
			if (kind == RULE_END || cfi_walk(from->ret, s))
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
