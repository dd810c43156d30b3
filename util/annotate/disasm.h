#ifndef RSPROF_UTIL_ANNOTATE_DISASM_H
#define RSPROF_UTIL_ANNOTATE_DISASM_H

#include <stddef.h>
#include <stdint.h>

/*
 * x86-64 machine code to text, through Debian's capstone (a well-kept
 * disassembler; never a hand-written decoder), in AT&T syntax as objdump and
 * perf annotate print it.
 */
struct disasm;

/* 0, -ENOMEM or -EINVAL (capstone could not be set up; reported). */
int disasm__new(struct disasm **out);
void disasm__delete(struct disasm *d);	/* NULL ok */

/*
 * The instruction at code (len bytes available, at runtime address addr):
 * *size bytes long, "mnemonic operands" in text. 0, or -EINVAL when the
 * bytes are no instruction (then *size is 1 and text "(bad)").
 */
int disasm__one(struct disasm *d, const uint8_t *code, size_t len, uint64_t addr, int *size,
		char *text, size_t tlen);

#endif
