/*
 * The call stack of a CPU sample from a copy of its user stack: each frame
 * stepped by the rule its code's CFI gives (util/unwind/cfi.h), the
 * sampled frame by the rule at the instruction itself (a leaf that set up
 * no frame, a prologue, an epilogue: its return address is where the CFI
 * says, not where a frame pointer would be); frames with no CFI as frames
 * with a frame pointer. Where a step needs stack the copy does not hold,
 * the walk goes on with the kernel's frame-pointer chain of the same
 * sample, joined at the last return address both have.
 */
#ifndef RSPROF_UTIL_UNWIND_WALK_H
#define RSPROF_UTIL_UNWIND_WALK_H

#include <stdbool.h>
#include <stdint.h>

/* The rule (cfi.h) in effect at code address pc; CFI_OTHER when unknown. */
typedef uint64_t (*unwind_rule_fn)(void *ctx, uint64_t pc);

struct unwind_sample {
	uint64_t ip, sp, bp;		/* the user registers */
	const unsigned char *stack;	/* a copy of the stack from sp */
	uint64_t stack_len;
	/* the kernel's chain of user frames: chain[0] the ip, then the
	 * return addresses minus 1 (the call); NULL: none */
	const uint64_t *chain;
	unsigned int chain_len;
};

/*
 * The frames into out (at most max), in the chain's form: out[0] the ip,
 * then return addresses minus 1. *whole: the walk reached the frame the
 * CFI marks as the first (_start, a thread's start), else it was cut.
 * Returns how many frames.
 */
unsigned int unwind__sample(const struct unwind_sample *s, unwind_rule_fn rule, void *ctx,
			    uint64_t *out, unsigned int max, bool *whole);

#endif
