/*
 * The DWARF call frame information of x86-64 code (.eh_frame, found
 * through .eh_frame_hdr's search table), read into the rule that steps
 * from a frame to its caller's: one reader for the in-process heap
 * tracker (preload/unwind.c, reading the modules mapped in its process)
 * and for rsprof (unwinding the stack copies of CPU samples, reading the
 * modules' files). Plain C, libc's string functions only: it is built
 * into both.
 *
 * A rule: the canonical frame address (CFA, the stack pointer before the
 * call into the frame) is %rsp or %rbp plus `off`; the return address lies
 * at CFA - 8; the caller's %rbp at CFA - 8 * bp (bp 0: %rbp unchanged).
 * Packed in 32 bits: bp << CFI_BP_SHIFT | off << 3 | kind, off up to 1 MiB
 * (a compiler's driver can keep a frame of hundreds of KiB: rustc's
 * run_compiler), bp up to 511 slots. A frame that keeps a frame
 * pointer is CFI_RULE_FP (CFA = %rbp + 16, %rbp at CFA - 16). What a rule
 * cannot hold (a CFA expression, a signal frame, a register saved
 * elsewhere, code without an FDE) is CFI_OTHER; CFI_END is where the CFI
 * says the return address is undefined (_start, a thread's clone3).
 */
#ifndef RSPROF_UTIL_UNWIND_CFI_H
#define RSPROF_UTIL_UNWIND_CFI_H

#include <stdbool.h>
#include <stdint.h>

enum cfi_kind { CFI_NONE, CFI_SP, CFI_BP, CFI_END, CFI_OTHER };

#define CFI_OFF_MAX	0xfffff
#define CFI_BP_SHIFT	23
#define CFI_BP_MAX	0x1ff
#define CFI_RULE_FP	(CFI_BP | 16u << 3 | 2u << CFI_BP_SHIFT)
_Static_assert((CFI_OFF_MAX << 3) < (1u << CFI_BP_SHIFT) &&
	       (uint64_t)CFI_BP_MAX << CFI_BP_SHIFT < (1ULL << 32), "a rule is 32 bits");

static inline unsigned int cfi_rule_kind(uint64_t rule)
{
	return rule & 7;
}

static inline uint64_t cfi_rule_off(uint64_t rule)
{
	return (rule >> 3) & CFI_OFF_MAX;
}

static inline unsigned int cfi_rule_bp(uint64_t rule)
{
	return (unsigned int)(rule >> CFI_BP_SHIFT) & CFI_BP_MAX;
}

/*
 * A module's CFI as its code sees it: the .eh_frame_hdr section at address
 * hdr_addr (in the address space of the code the rules are asked for),
 * readable at hdr, with .eh_frame at the same distance as in that address
 * space (the two sit in one segment). [lo, hi): the bytes that may be
 * read (the mapped file, when it comes from one; everything in the
 * tracker's own process). [text_lo, text_hi): the module's code.
 */
struct cfi_module {
	const uint8_t *hdr;
	uintptr_t hdr_addr;
	const uint8_t *lo, *hi;
	uintptr_t text_lo, text_hi;
	/* the PLT stubs (.plt, .plt.sec, .plt.got; 0, 0: none known): each
	 * jumps on with the caller's return address at %rsp, where their CFI
	 * (an expression) would not be read */
	struct { uintptr_t lo, hi; } plt[3];
};

/* The search table (sorted pairs: function start, FDE, as sdata4 relative
 * to hdr_addr); false: none, or not in the encoding every linker writes. */
bool cfi__table(const struct cfi_module *m, const int32_t **tab, uint32_t *count);

/* The start of the function containing code address a; 0: none known. */
uintptr_t cfi__fn_start(const struct cfi_module *m, uintptr_t a);

/* The start of the function of table entry i (no check). */
static inline uintptr_t cfi__entry(const struct cfi_module *m, const int32_t *tab, uint32_t i)
{
	return m->hdr_addr + (intptr_t)tab[2 * i];
}

/*
 * The rule in effect at code address pc: for a return address, pass the
 * address of the call (the return address - 1), for an interrupted
 * instruction (a sample) its own address. In a PLT stub: CFA = %rsp + 8.
 */
uint64_t cfi__rule(const struct cfi_module *m, uintptr_t pc);

#endif
