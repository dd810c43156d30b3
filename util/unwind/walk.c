/*
 * Walking a CPU sample's stack copy (util/unwind/walk.h). The copy is the
 * target's memory as the kernel read it: every load is checked against it,
 * every step must go up the stack.
 */
#include "util/unwind/walk.h"

#include <string.h>

#include "util/unwind/cfi.h"

/* x86-64 user addresses end below this (47 bits). */
#define USER_END	(1ULL << 47)

/* The word at address a of the sampled stack; false: not in the copy. */
static bool load(const struct unwind_sample *s, uint64_t a, uint64_t *v)
{
	if (a < s->sp || a - s->sp > s->stack_len || s->stack_len - (a - s->sp) < 8)
		return false;
	memcpy(v, s->stack + (a - s->sp), 8);
	return true;
}

/*
 * Go on with the kernel's chain after the frame out[n - 1]: where it has the
 * same return address, nearest to the same depth (it may lack the frame a
 * leaf set up none for, or have one the CFI stepped past). 0: not found.
 */
static unsigned int splice(const struct unwind_sample *s, uint64_t *out, unsigned int n,
			   unsigned int max)
{
	unsigned int best = 0, best_d = ~0u;

	if (!s->chain)
		return 0;
	for (unsigned int j = 0; j < s->chain_len; j++) {
		unsigned int d = j > n - 1 ? j - (n - 1) : (n - 1) - j;

		if (s->chain[j] == out[n - 1] && d < best_d) {
			best = j;
			best_d = d;
		}
	}
	if (best_d == ~0u)
		return 0;
	for (unsigned int j = best + 1; j < s->chain_len && n < max; j++)
		out[n++] = s->chain[j];
	return n;
}

unsigned int unwind__sample(const struct unwind_sample *s, unwind_rule_fn rule_of, void *ctx,
			    uint64_t *out, unsigned int max, bool *whole)
{
	uint64_t pc = s->ip, sp = s->sp, bp = s->bp;
	unsigned int n = 0;

	*whole = false;
	if (!max)
		return 0;
	out[n++] = pc;
	while (n < max) {
		/* the sampled instruction itself; a return address's call */
		uint64_t rule = rule_of(ctx, n == 1 ? pc : pc - 1), cfa, ra, nbp = bp;
		unsigned int kind = cfi_rule_kind(rule), bpn;

		if (kind == CFI_END) {
			*whole = true;
			return n;
		}
		if (kind != CFI_SP && kind != CFI_BP) {
			/* a rule the reader cannot hold (a PLT stub's expression) at the
			 * sampled instruction: the kernel's chain, as without a copy */
			if (n == 1 && s->chain && s->chain_len > 1 && s->chain[0] == pc) {
				n = splice(s, out, n, max);
				*whole = cfi_rule_kind(rule_of(ctx, out[n - 1])) == CFI_END;
				return n;
			}
			rule = CFI_RULE_FP;	/* no CFI: a frame pointer, as the kernel assumes */
		}
		kind = cfi_rule_kind(rule);
		bpn = cfi_rule_bp(rule);
		cfa = (kind == CFI_SP ? sp : bp) + cfi_rule_off(rule);
		if (cfa <= sp || (cfa & 7) || cfa < 8 * (bpn > 1 ? bpn : 1))
			break;
		/* %rbp's slot below the stack pointer: popped already (an
		 * epilogue, whose CFI still names the slot), the register holds it */
		if (bpn && cfa - 8 * bpn < sp)
			bpn = 0;
		if (!load(s, cfa - 8, &ra) || (bpn && !load(s, cfa - 8 * bpn, &nbp))) {
			unsigned int m = splice(s, out, n, max);

			if (m) {
				n = m;
				*whole = cfi_rule_kind(rule_of(ctx, out[n - 1])) == CFI_END;
			}
			return n;
		}
		if (!ra || ra >= USER_END)
			break;		/* no return address, or not one into user code */
		out[n++] = ra - 1;
		pc = ra;
		sp = cfa;
		bp = nbp;
	}
	return n;
}
