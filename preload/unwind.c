/*
 * The allocation's call stack, walked through frame pointers from the
 * allocator's caller: the return address into the caller, then each frame's
 * saved return address up the chain of saved %rbp. The same stack the BPF
 * program captures (bpf/heap.bpf.c), so util/heap attributes both alike.
 *
 * Never faults: a frame is followed only while the frame pointer lies on
 * the thread's own stack (between the stack pointer at the call and the
 * stack's top), is aligned and grows strictly; code without frame pointers
 * (libc, a crate built without them) leaves garbage in %rbp, which these
 * checks stop at. On another stack (sigaltstack, a coroutine) there is no
 * walk, the caller only.
 *
 * A chain shorter than HEAP_REGION_SCAN_MIN is cut at its first frame
 * outside the executable's code and gets the stack scanned: the words of
 * the 1 KiB above the call pointing into the executable's code (rsprof
 * keeps those that follow a call instruction: util/heap/heap.c), unless
 * the chain is whole (walked_out()). As bpf/heap.bpf.c does.
 *
 * This is the step a CFI unwinder (libunwind) replaces for modules without
 * frame pointers.
 */
#include <link.h>
#include <stdbool.h>

#include "preload/tracker.h"

static uintptr_t text_lo, text_hi;

static int text_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			text_lo = info->dlpi_addr + ph->p_vaddr;
			text_hi = text_lo + ph->p_memsz;
			break;
		}
	}
	return 1;	/* the first object is the executable */
}

void unwind__init(void)
{
	dl_iterate_phdr(text_cb, NULL);
}

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

void unwind__stack(const struct unwind_from *from, uintptr_t lo, uintptr_t hi,
		   struct unwind_stack *s)
{
	uintptr_t fp = from->fp, sp = from->sp, bottom = sp;
	int n = 0;

	s->ips[n++] = from->ret;
	s->n_cand = 0;
	if (sp < lo || sp >= hi) {
		s->depth = n;
		return;
	}
	while (n < HEAP_REGION_MAX_DEPTH) {
		const uintptr_t *f = (const uintptr_t *)fp;

		if (fp < bottom || fp > hi - 16 || (fp & 7))
			break;
		if (!f[1])
			break;
		s->ips[n++] = f[1];
		bottom = fp + 16;
		fp = f[0];
	}
	s->depth = n;
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
