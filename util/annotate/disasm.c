/*
 * Disassembly through capstone (libcapstone, Debian's libcapstone-dev).
 */
#include "util/annotate/disasm.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

struct disasm {
	csh cs;
	cs_insn *insn;
};

int disasm__new(struct disasm **out)
{
	struct disasm *d = calloc(1, sizeof(*d));
	cs_err e;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	e = cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs);
	if (e == CS_ERR_OK)
		e = cs_option(d->cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	if (e != CS_ERR_OK) {
		pr_err("cannot set up the disassembler: %s", cs_strerror(e));
		if (d->cs)
			cs_close(&d->cs);
		free(d);
		return -EINVAL;
	}
	d->insn = cs_malloc(d->cs);
	if (!d->insn) {
		cs_close(&d->cs);
		free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

void disasm__delete(struct disasm *d)
{
	if (!d)
		return;
	cs_free(d->insn, 1);
	cs_close(&d->cs);
	free(d);
}

int disasm__one(struct disasm *d, const uint8_t *code, size_t len, uint64_t addr, int *size,
		char *text, size_t tlen)
{
	const uint8_t *p = code;
	uint64_t a = addr;

	if (!cs_disasm_iter(d->cs, &p, &len, &a, d->insn)) {
		*size = 1;
		snprintf(text, tlen, "(bad)");
		return -EINVAL;
	}
	*size = d->insn->size;
	if (d->insn->op_str[0])
		snprintf(text, tlen, "%-7s %s", d->insn->mnemonic, d->insn->op_str);
	else
		snprintf(text, tlen, "%s", d->insn->mnemonic);
	return 0;
}

uint64_t disasm__direct_target(const char *text)
{
	const char *op = text + strcspn(text, " ");
	char *end;
	uint64_t to;

	if (strncmp(text, "call", 4) && text[0] != 'j')
		return 0;
	op += strspn(op, " ");
	if (strncmp(op, "0x", 2))
		return 0;
	errno = 0;
	to = strtoull(op, &end, 16);
	return errno || *end ? 0 : to;
}
