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

/*
 * The target of a direct call or jump in text as disasm__one() printed it
 * ("callq 0x401136", "jmp 0x4011a0"); 0 for any other instruction and for
 * indirect ones ("callq *%rax", "jmpq *0x10(%rip)").
 */
uint64_t disasm__direct_target(const char *text);

#endif
