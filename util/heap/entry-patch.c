/*
 * Jumps at function entries (util/heap/entry-patch.h): the heap tracker
 * injected into a running process makes glibc's free, realloc and
 * malloc_usable_size go through it (util/heap/inject.c).
 *
 * The entry gets `jmp rel32` to a stub in the page (`jmp *0(%rip)` and the
 * target's address); the instructions the jump covers go to a trampoline
 * in the same page, followed by an absolute jump back to the first
 * instruction after them. Moved: any instruction but a call (its return
 * would land in the covered bytes), a return, loop/jrcxz, or one whose
 * operands are relative to RIP in a way not re-aimed below; relative jumps
 * become rel32 ones to the same targets, RIP-relative memory operands get
 * their displacement re-computed. The whole function is decoded first: a
 * relative branch of its own into the covered bytes (after the first)
 * would land in the middle of the jump, so the function is not patched.
 */
#include "util/heap/entry-patch.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <string.h>

#define JMP_LEN		5
#define ABS_JMP_LEN	14

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* `jmp *0(%rip)` and its target, at out. */
static void abs_jmp(unsigned char *out, uint64_t to)
{
	static const unsigned char op[6] = { 0xff, 0x25, 0, 0, 0, 0 };

	memcpy(out, op, sizeof(op));
	memcpy(out + 6, &to, 8);
}

/* The condition code of a jcc (rel8 or rel32, a bnd/notrack prefix skipped); -1: not one. */
static int jcc_code(const cs_insn *in)
{
	const uint8_t *b = in->bytes;
	size_t i = (b[0] == 0xf2 || b[0] == 0x3e) ? 1 : 0;

	if (b[i] >= 0x70 && b[i] <= 0x7f)
		return b[i] - 0x70;
	if (b[i] == 0x0f && i + 1 < in->size && b[i + 1] >= 0x80 && b[i + 1] <= 0x8f)
		return b[i + 1] - 0x80;
	return -1;
}

static bool is_group(const cs_insn *in, uint8_t g)
{
	for (uint8_t i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return true;
	return false;
}

/* The target of a relative branch (its immediate operand); false: none. */
static bool branch_target(const cs_insn *in, uint64_t *to)
{
	const cs_x86 *x = &in->detail->x86;

	if (!is_group(in, CS_GRP_BRANCH_RELATIVE) || x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*to = (uint64_t)x->operands[0].imm;
	return true;
}

/* Move instruction in to out (at address at); its length there, or -1 with *why. */
static int move(const cs_insn *in, uint64_t at, unsigned char *out, const char **why)
{
	const cs_x86 *x = &in->detail->x86;
	uint64_t to;

	if (is_group(in, CS_GRP_CALL) || is_group(in, CS_GRP_RET) || is_group(in, CS_GRP_INT) ||
	    is_group(in, CS_GRP_IRET) || in->id == X86_INS_JRCXZ || in->id == X86_INS_JECXZ ||
	    in->id == X86_INS_LOOP || in->id == X86_INS_LOOPE || in->id == X86_INS_LOOPNE) {
		*why = "a call, a return or a loop among its first instructions";
		return -1;
	}
	if (branch_target(in, &to)) {
		int cc = jcc_code(in);

		if (in->id == X86_INS_JMP) {
			out[0] = 0xe9;
			if (!fits32((int64_t)(to - (at + 5))))
				goto far;
			int32_t rel = (int32_t)(to - (at + 5));
			memcpy(out + 1, &rel, 4);
			return 5;
		}
		if (cc < 0) {
			*why = "a relative branch of a kind not moved";
			return -1;
		}
		out[0] = 0x0f;
		out[1] = (unsigned char)(0x80 + cc);
		if (!fits32((int64_t)(to - (at + 6))))
			goto far;
		int32_t rel = (int32_t)(to - (at + 6));
		memcpy(out + 2, &rel, 4);
		return 6;
	}
	memcpy(out, in->bytes, in->size);
	for (uint8_t i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		int64_t disp;
		int32_t d32;

		if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP)
			continue;
		if (x->encoding.disp_size != 4 || !x->encoding.disp_offset) {
			*why = "a RIP-relative operand it cannot re-aim";
			return -1;
		}
		/* the same absolute address from the new place */
		disp = (int64_t)(in->address + in->size + op->mem.disp) - (int64_t)(at + in->size);
		if (!fits32(disp))
			goto far;
		d32 = (int32_t)disp;
		memcpy(out + x->encoding.disp_offset, &d32, 4);
	}
	return in->size;
far:
	*why = "the page of hooks is out of a 32-bit jump's reach";
	return -1;
}

int entry_patch__plan(struct entry_page *p, uint64_t fn, const unsigned char *code, size_t size,
		      uint64_t to, struct entry_patch *out, const char **why)
{
	csh cs;
	cs_insn *in = NULL;
	size_t n, covered = 0, k, stub, tramp;
	uint64_t decoded = 0;
	size_t len0 = p->len;
	int rc = -ENOTSUP;

	*why = NULL;
	memset(out, 0, sizeof(*out));
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		*why = "the disassembler cannot start";
		return -ENOTSUP;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(cs, code, size, fn, 0, &in);
	for (k = 0; k < n; k++)
		decoded += in[k].size;
	if (!n || decoded != size) {
		*why = "its code cannot be decoded";
		goto out;
	}
	for (k = 0; k < n && covered < JMP_LEN; k++)
		covered += in[k].size;
	/* no branch of the function may land inside the bytes the jump covers */
	for (size_t i = 0; i < n; i++) {
		uint64_t t;

		if (branch_target(&in[i], &t) && t > fn && t < fn + covered) {
			*why = "a branch of its own lands in its first instructions";
			goto out;
		}
	}
	stub = (p->len + 15) & ~(size_t)15;
	tramp = stub + 16;
	if (tramp + k * 15 + ABS_JMP_LEN > ENTRY_PAGE_MAX) {
		rc = -ENOSPC;
		*why = "no room left in the page of hooks";
		goto out;
	}
	if (!fits32((int64_t)(p->addr + stub - (fn + JMP_LEN)))) {
		*why = "the page of hooks is out of a 32-bit jump's reach";
		goto out;
	}
	abs_jmp(p->code + stub, to);
	p->len = tramp;
	for (size_t i = 0; i < k; i++) {
		int len = move(&in[i], p->addr + p->len, p->code + p->len, why);

		if (len < 0)
			goto out;
		p->len += (size_t)len;
	}
	abs_jmp(p->code + p->len, fn + covered);
	p->len += ABS_JMP_LEN;

	out->at = fn;
	out->len = covered;
	out->tramp = p->addr + tramp;
	out->bytes[0] = 0xe9;
	{
		int32_t rel = (int32_t)(p->addr + stub - (fn + JMP_LEN));

		memcpy(out->bytes + 1, &rel, 4);
	}
	memset(out->bytes + JMP_LEN, 0xcc, covered - JMP_LEN);	/* never run */
	rc = 0;
out:
	if (rc)
		p->len = len0;
	if (in)
		cs_free(in, n);
	cs_close(&cs);
	return rc;
}
