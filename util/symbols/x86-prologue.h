#ifndef RSPROF_UTIL_SYMBOLS_X86_PROLOGUE_H
#define RSPROF_UTIL_SYMBOLS_X86_PROLOGUE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Does the x86-64 function whose first n code bytes are at f set up a
 * frame pointer? For the census of a module's code (util/symbols/
 * frame-pointers.c) and for the in-process tracker's unwinder
 * (preload/unwind.c, built apart as a -fPIC library: this header holds
 * nothing but this test, which allocates nothing and calls nothing but
 * memcmp).
 *
 * 1: push %rbp, then mov %rsp,%rbp (48 89 e5, or the other encoding of
 * the same mov, 48 8b ec) with nothing pushed and no stack space taken
 * between them. Not always at the first bytes: gcc -O2 schedules other
 * instructions before and between the two (Redis's zmalloc_usable begins
 * with a movabs, _sdsnewlen has a lea between them), so both are looked for
 * in the first X86_FP_WINDOW bytes (an endbr64 with CET comes first).
 * Code built without frame pointers may use %rbp as any register, even
 * `mov %rsp,%rbp` to point at a buffer on its stack, but after pushing
 * other registers or `sub $N,%rsp`: a byte 0x50-0x57 (a push) or 48 83/81
 * ec (sub from %rsp) after the push rules a candidate out. Bytes are not
 * instructions, so an operand may rule a real prologue out too: the
 * unwinder then steps that function by its CFI, which is slower, never
 * wrong.
 *
 * 0: a stack frame without a frame pointer: the function starts (after an
 * endbr64) with a push of a register, %rbp pushed as a plain one included,
 * or a sub from %rsp. -1: it says nothing (a leaf that needs no frame: gcc
 * gives none to those even with -fno-omit-frame-pointer; a check before the
 * frame: shrink-wrapping).
 */
#define X86_FP_WINDOW	32

static inline int x86__fp_prologue(const uint8_t *f, size_t n)
{
	static const uint8_t mov[2][3] = { { 0x48, 0x89, 0xe5 }, { 0x48, 0x8b, 0xec } };
	size_t s = 0;

	if (n > X86_FP_WINDOW)
		n = X86_FP_WINDOW;
	if (n >= 4 && f[0] == 0xf3 && f[1] == 0x0f && f[2] == 0x1e && f[3] == 0xfa)
		s = 4;	/* endbr64 */
	for (size_t i = s; i + 1 + sizeof(mov[0]) <= n; i++) {
		if (f[i] != 0x55)
			continue;
		for (size_t j = i + 1; j + sizeof(mov[0]) <= n; j++) {
			if (!memcmp(f + j, mov[0], sizeof(mov[0])) ||
			    !memcmp(f + j, mov[1], sizeof(mov[1])))
				return 1;
			if ((f[j] >= 0x50 && f[j] <= 0x57) ||
			    (f[j] == 0x48 && (f[j + 1] == 0x83 || f[j + 1] == 0x81) &&
			     f[j + 2] == 0xec))
				break;
		}
	}
	if (s + 3 > n)
		return -1;
	if ((f[s] >= 0x50 && f[s] <= 0x57) ||
	    (f[s] == 0x41 && f[s + 1] >= 0x50 && f[s + 1] <= 0x57) ||
	    (f[s] == 0x48 && (f[s + 1] == 0x83 || f[s + 1] == 0x81) && f[s + 2] == 0xec))
		return 0;
	return -1;
}

#endif
