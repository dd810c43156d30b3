/*
 * Rewriting a function's entry (x86-64): its first instructions are
 * replaced by a jump to the tracker's hook, and a trampoline near the
 * function runs those instructions, relocated, then jumps back after them
 * (the hook calls the trampoline for the function's own work).
 *
 * The instructions are decoded here, by a small length decoder that
 * knows the forms compilers put at the entry of a function (endbr64,
 * pushes, moves and arithmetic between registers and memory, RIP-relative
 * loads, lock-prefixed read-modify-writes, relative jumps and calls), not
 * by rsprof with capstone: the tracker must hook images rsprof never saw
 * (a program the tree execs: rustup's rustc proxy execs the real rustc;
 * a process the tracker is injected into loads libraries later). An
 * instruction outside that set, a VEX or EVEX form, or a branch from
 * anywhere in the function back into the bytes replaced (found by
 * looking at every byte of the function as a possible branch: a false
 * alarm refuses a hook, never the reverse) leaves the function as it is.
 *
 *   function:   jmp rel32 -> stub             (5 bytes; the rest of the
 *                                              instructions replaced: int3)
 *   page near:  stub:  jmp *0(%rip); .quad hook
 *               tramp: the replaced instructions, relocated; jmp rel32 back
 *
 * The page is mapped within 2 GiB of the function (rel32 reaches it; a
 * RIP-relative operand moved there still reaches its target); it is
 * writable or executable, never both: written with signals blocked, then
 * made read-only and executable. The function's page is made writable
 * for the time of the write (mprotect; where the system refuses that, no
 * hook). A function whose size is unknown (a symbol without one) is left
 * alone: the scan for branches into the replaced bytes needs its end.
 * Done while the process has one thread (the tracker's start) or while
 * its threads are stopped.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "preload/sys.h"
#include "preload/tracker.h"

#define MAX_COPY	32	/* bytes of instructions displaced, at most */
#define PAGE		4096UL

/* One decoded instruction: its length and what moving it needs. */
struct insn {
	unsigned int len;
	int rip_disp;		/* offset of a RIP-relative disp32; -1: none */
	int rel;		/* 8 or 32: a relative branch (its offset is last); 0: none */
	int rel_off;		/* offset of the rel field */
	uint8_t branch;		/* 0xeb, 0xe9, 0xe8, 0x70-0x7f (jcc): what it is */
	bool ends;		/* ret, jmp: nothing after it runs */
};

/* ModRM (and SIB, displacement) at p, the instruction's byte base_off;
 * its length, -1: cannot decode. *rip_disp: where a RIP-relative disp32
 * is in the instruction. */
static int modrm_len(const uint8_t *p, size_t left, int *rip_disp, int base_off)
{
	uint8_t m, mod, rm;
	int n = 1;

	if (!left)
		return -1;
	m = p[0];
	mod = m >> 6;
	rm = m & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (left < 2)
			return -1;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			n += 4;		/* disp32, no base */
	} else if (mod == 0 && rm == 5) {
		*rip_disp = base_off + 1;
		return 5;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	return (size_t)n <= left ? n : -1;
}

/* Decode the instruction at p (left bytes readable). false: not one this knows. */
static bool decode(const uint8_t *p, size_t left, struct insn *in)
{
	size_t i = 0;
	bool rex_w = false, opsize = false;
	uint8_t op;
	int imm = 0, m;

	memset(in, 0, sizeof(*in));
	in->rip_disp = -1;
	/* endbr64 */
	if (left >= 4 && !memcmp(p, "\xf3\x0f\x1e\xfa", 4)) {
		in->len = 4;
		return true;
	}
	/* legacy prefixes: lock, rep, operand size, segment/branch hints */
	while (i < left && i < 4 && (p[i] == 0xf0 || p[i] == 0xf2 || p[i] == 0xf3 || p[i] == 0x66 ||
				     p[i] == 0x2e || p[i] == 0x3e)) {
		opsize |= p[i] == 0x66;
		i++;
	}
	if (i < left && (p[i] & 0xf0) == 0x40) {	/* REX */
		rex_w = p[i] & 8;
		i++;
	}
	if (i >= left)
		return false;
	op = p[i++];
	if (op == 0x0f) {
		if (i >= left)
			return false;
		op = p[i++];
		if (op >= 0x80 && op <= 0x8f) {		/* jcc rel32 */
			in->rel = 32;
			in->rel_off = (int)i;
			in->branch = (uint8_t)(0x70 + (op & 0xf));
			in->len = (unsigned int)i + 4;
			return in->len <= left;
		}
		switch (op) {
		case 0x1f:				/* nop r/m */
		case 0x10: case 0x11:			/* movups/movss/movsd */
		case 0x28: case 0x29:			/* movaps */
		case 0x57: case 0xef:			/* xorps, pxor */
		case 0x6f: case 0x7f: case 0xd6:	/* movdqa/movdqu, movq */
		case 0xaf:				/* imul */
		case 0xb6: case 0xb7: case 0xbe: case 0xbf:	/* movzx, movsx */
			break;
		default:
			if ((op & 0xf0) == 0x40 || (op & 0xf0) == 0x90)	/* cmovcc, setcc */
				break;
			return false;
		}
		m = modrm_len(p + i, left - i, &in->rip_disp, (int)i);
		if (m < 0)
			return false;
		in->len = (unsigned int)(i + (size_t)m);
		return true;
	}
	if (op >= 0x70 && op <= 0x7f) {		/* jcc rel8 */
		in->rel = 8;
		in->rel_off = (int)i;
		in->branch = op;
		in->len = (unsigned int)i + 1;
		return in->len <= left;
	}
	switch (op) {
	case 0xeb:					/* jmp rel8 */
		in->rel = 8;
		in->rel_off = (int)i;
		in->branch = op;
		in->ends = true;
		in->len = (unsigned int)i + 1;
		return in->len <= left;
	case 0xe8: case 0xe9:				/* call, jmp rel32 */
		in->rel = 32;
		in->rel_off = (int)i;
		in->branch = op;
		in->ends = op == 0xe9;
		in->len = (unsigned int)i + 4;
		return in->len <= left;
	case 0xc3:					/* ret */
		in->ends = true;
		in->len = (unsigned int)i;
		return true;
	case 0x90:
		in->len = (unsigned int)i;
		return true;
	}
	if ((op >= 0x50 && op <= 0x5f)) {		/* push, pop */
		in->len = (unsigned int)i;
		return true;
	}
	if (op >= 0xb8 && op <= 0xbf) {			/* mov reg, imm32/imm64 */
		in->len = (unsigned int)i + (rex_w ? 8 : opsize ? 2 : 4);
		return in->len <= left;
	}
	if (op >= 0xb0 && op <= 0xb7) {			/* mov reg8, imm8 */
		in->len = (unsigned int)i + 1;
		return in->len <= left;
	}
	switch (op) {
	case 0x6a:					/* push imm8 */
	case 0x04: case 0x0c: case 0x24: case 0x2c: case 0x34: case 0x3c: case 0xa8:
		in->len = (unsigned int)i + 1;		/* op al, imm8 */
		return in->len <= left;
	case 0x68:					/* push imm32 */
	case 0x05: case 0x0d: case 0x25: case 0x2d: case 0x35: case 0x3d: case 0xa9:
		in->len = (unsigned int)i + (opsize ? 2 : 4);	/* op eax, imm32 */
		return in->len <= left;
	}
	/* with ModRM: the arithmetic, test, xchg, mov, lea, movsxd, shifts, inc/dec */
	if ((op < 0x40 && (op & 7) < 4) || op == 0x63 || (op >= 0x84 && op <= 0x8b) || op == 0x8d ||
	    op == 0xd1 || op == 0xd3) {
		imm = 0;
	} else if (op == 0x80 || op == 0x83 || op == 0xc0 || op == 0xc1 || op == 0xc6 ||
		   op == 0x6b) {
		imm = 1;
	} else if (op == 0x81 || op == 0xc7 || op == 0x69) {
		imm = opsize ? 2 : 4;
	} else if (op == 0xf6 || op == 0xf7 || op == 0xff) {
		/* test r/m, imm (/0) or the others without imm; ff /2 /4: indirect call, jmp */
		uint8_t reg;

		if (i >= left)
			return false;
		reg = (p[i] >> 3) & 7;
		if (op != 0xff && reg == 0)
			imm = op == 0xf6 ? 1 : opsize ? 2 : 4;
		else if (op != 0xff && reg == 1)
			return false;
		if (op == 0xff && reg == 4)
			in->ends = true;
		if (op == 0xff && (reg == 3 || reg == 5 || reg == 7))
			return false;		/* far call/jmp */
	} else {
		return false;
	}
	m = modrm_len(p + i, left - i, &in->rip_disp, (int)i);
	if (m < 0)
		return false;
	in->len = (unsigned int)(i + (size_t)m + (size_t)imm);
	return in->len <= left;
}

/* A branch anywhere in [fn, fn + size) into (fn, fn + len)? Every byte is
 * taken as a possible opcode: a real branch is never missed. */
static bool branched_into(const uint8_t *fn, size_t size, size_t len)
{
	for (size_t i = 0; i < size; i++) {
		int64_t target = -1;
		int32_t r32;

		if ((fn[i] >= 0x70 && fn[i] <= 0x7f) || fn[i] == 0xeb) {
			if (i + 2 <= size)
				target = (int64_t)i + 2 + (int8_t)fn[i + 1];
		} else if (fn[i] == 0xe9 || fn[i] == 0xe8) {
			if (i + 5 <= size) {
				memcpy(&r32, fn + i + 1, 4);
				target = (int64_t)i + 5 + r32;
			}
		} else if (fn[i] == 0x0f && i + 6 <= size && fn[i + 1] >= 0x80 && fn[i + 1] <= 0x8f) {
			memcpy(&r32, fn + i + 2, 4);
			target = (int64_t)i + 6 + r32;
		}
		if (target > 0 && (uint64_t)target < len)
			return true;
	}
	return false;
}

/* The page near `near` where stubs and trampolines go (one per 2 GiB area). */
static struct near_page {
	uintptr_t base;
	size_t used;
} pages[8];
static unsigned int n_pages;

static bool reaches(uintptr_t from, uintptr_t to)
{
	int64_t d = (int64_t)(to - from);

	return d > INT32_MIN / 2 && d < INT32_MAX / 2;
}

/* n bytes of executable memory within reach of `near`; NULL: none. */
static uint8_t *near_alloc(uintptr_t near, size_t n)
{
	for (unsigned int i = 0; i < n_pages; i++)
		if (reaches(near, pages[i].base) && pages[i].used + n <= PAGE) {
			uint8_t *p = (uint8_t *)pages[i].base + pages[i].used;

			pages[i].used += (n + 15) & ~15UL;
			return p;
		}
	if (n_pages == sizeof(pages) / sizeof(pages[0]))
		return NULL;
	/* below the function first (where the executable's heap is not), then above */
	for (int dir = -1; dir <= 1; dir += 2) {
		for (uintptr_t k = 1; k < 4096; k++) {
			uintptr_t a = (near & ~(PAGE - 1)) + (uintptr_t)dir * k * (256 * 1024);
			void *p;

			if (!reaches(near, a) || a < 65536)
				break;
			p = sys_mmap((void *)a, PAGE, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if ((uintptr_t)p != a) {	/* an old kernel: a hint only */
				sys_munmap(p, PAGE);
				continue;
			}
			pages[n_pages].base = a;
			pages[n_pages].used = (n + 15) & ~15UL;
			n_pages++;
			return (uint8_t *)a;
		}
	}
	return NULL;
}

static void put32(uint8_t *p, int64_t v)
{
	int32_t x = (int32_t)v;

	memcpy(p, &x, 4);
}

static int hook_locked(uint8_t *fn, size_t fn_size, void *hook, void **orig);

int patch__hook(void *fn, size_t fn_size, void *hook, void **orig)
{
	sigset_t all, old;
	int rc;

	if (!fn || !hook || !fn_size)
		return -1;
	/* no handler may run the code half written */
	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &old))
		return -1;
	rc = hook_locked(fn, fn_size, hook, orig);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* The page of p, writable (w) or executable. */
static int page_prot(void *p, bool w)
{
	return sys_mprotect((void *)((uintptr_t)p & ~(PAGE - 1)), PAGE,
			    w ? PROT_READ | PROT_WRITE : PROT_READ | PROT_EXEC);
}

static int hook_locked(uint8_t *fn, size_t fn_size, void *hook, void **orig)
{
	uint8_t *page, *stub, *tr, *w;
	struct insn ins[MAX_COPY];
	size_t len = 0, n = 0, room;
	uintptr_t pg;

	/* the instructions that cover the jump (5 bytes) */
	while (len < 5) {
		if (n == MAX_COPY || !decode(fn + len, fn_size - len, &ins[n]))
			return -1;
		len += ins[n].len;
		if (ins[n++].ends && len < 5)
			return -1;	/* a function shorter than the jump */
	}
	if (len > fn_size || branched_into(fn, fn_size, len))
		return -1;
	/* stub (14) + trampoline (each insn at most 6 bytes longer) + jmp back (5) */
	room = 16 + len + 6 * n + 8;
	page = near_alloc((uintptr_t)fn, room);
	if (!page || page_prot(page, true))
		return -1;
	stub = page;
	memcpy(stub, "\xff\x25\x00\x00\x00\x00", 6);	/* jmp *0(%rip) */
	memcpy(stub + 6, &hook, 8);
	tr = w = page + 16;
	for (size_t k = 0, at = 0; k < n; at += ins[k].len, k++) {
		const struct insn *in = &ins[k];
		uintptr_t src_next = (uintptr_t)fn + at + in->len;
		int64_t target;

		if (in->rel) {
			int32_t r32 = 0;

			if (in->rel == 8)
				r32 = (int8_t)fn[at + (size_t)in->rel_off];
			else
				memcpy(&r32, fn + at + in->rel_off, 4);
			target = (int64_t)src_next + r32;
			if (in->branch >= 0x70 && in->branch <= 0x7f) {	/* jcc rel32 */
				*w++ = 0x0f;
				*w++ = (uint8_t)(0x80 + (in->branch & 0xf));
			} else {
				*w++ = in->branch == 0xe8 ? 0xe8 : 0xe9;
			}
			put32(w, target - (int64_t)((uintptr_t)w + 4));
			w += 4;
			continue;
		}
		memcpy(w, fn + at, in->len);
		if (in->rip_disp >= 0) {
			int32_t d;

			memcpy(&d, fn + at + in->rip_disp, 4);
			target = (int64_t)src_next + d;
			if (!reaches((uintptr_t)w + in->len, (uintptr_t)target)) {
				page_prot(page, false);	/* the bytes stay taken: harmless */
				return -1;
			}
			put32(w + in->rip_disp, target - (int64_t)((uintptr_t)w + in->len));
		}
		w += in->len;
	}
	*w = 0xe9;					/* back after the replaced bytes */
	put32(w + 1, (int64_t)((uintptr_t)fn + len) - (int64_t)((uintptr_t)w + 5));
	if (page_prot(page, false))
		return -1;
	*orig = tr;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* the entry: jmp stub, then int3 over the rest of what was replaced */
	pg = (uintptr_t)fn & ~(PAGE - 1);
	if (sys_mprotect((void *)pg, ((uintptr_t)fn + len - pg + PAGE - 1) & ~(PAGE - 1),
			 PROT_READ | PROT_WRITE | PROT_EXEC))
		return -1;
	{
		uint8_t jmp[MAX_COPY];

		jmp[0] = 0xe9;
		put32(jmp + 1, (int64_t)(uintptr_t)stub - (int64_t)((uintptr_t)fn + 5));
		memset(jmp + 5, 0xcc, len - 5);
		/* the first byte last: a thread that reads the entry meanwhile
		 * sees the old instructions or the jump */
		memcpy(fn + 1, jmp + 1, len - 1);
		__atomic_store_n(fn, jmp[0], __ATOMIC_RELEASE);
	}
	sys_mprotect((void *)pg, ((uintptr_t)fn + len - pg + PAGE - 1) & ~(PAGE - 1),
		     PROT_READ | PROT_EXEC);
	return 0;
}
