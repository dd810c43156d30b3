/*
 * The DWARF CFI reader (util/unwind/cfi.h). Every read is bounded by the
 * module's [lo, hi): a file rsprof reads may be anything.
 */
#include "util/unwind/cfi.h"

#include <string.h>

/* May n bytes at p be read? */
static bool readable(const struct cfi_module *m, const uint8_t *p, uint64_t n)
{
	uintptr_t a = (uintptr_t)p, lo = (uintptr_t)m->lo, hi = (uintptr_t)m->hi;

	return a >= lo && a <= hi && n <= hi - a;
}

#define DW_REG_RBP	6
#define DW_REG_RSP	7
#define DW_REG_RA	16
#define CFA_STACK	8	/* DW_CFA_remember_state nesting */

/* A bounded reader of CFI bytes. */
struct cfi_rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_uleb(struct cfi_rd *r)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; r->p < r->end; shift += 7) {
		uint8_t b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static int64_t rd_sleb(struct cfi_rd *r)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (r->p >= r->end) {
			r->bad = true;
			return 0;
		}
		b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	return (int64_t)v;
}

static uint64_t rd_fixed(struct cfi_rd *r, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, n);	/* little endian */
	r->p += n;
	return v;
}

/* A value in pointer encoding enc: its format only (no pc/data relative). */
static uint64_t rd_enc(struct cfi_rd *r, uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: return rd_fixed(r, 8);
	case 0x01: return rd_uleb(r);
	case 0x02: return rd_fixed(r, 2);
	case 0x03: return rd_fixed(r, 4);
	case 0x04: return rd_fixed(r, 8);
	case 0x09: return (uint64_t)rd_sleb(r);
	case 0x0a: return (uint64_t)(int64_t)(int16_t)rd_fixed(r, 2);
	case 0x0b: return (uint64_t)(int64_t)(int32_t)rd_fixed(r, 4);
	case 0x0c: return rd_fixed(r, 8);
	}
	r->bad = true;
	return 0;
}

/* How a register is restored: unchanged, from CFA + off, or anything else. */
enum { REG_SAME, REG_AT, REG_UNDEF, REG_OTHER };

struct cfa_state {
	int cfa_reg;		/* DW_REG_RSP, DW_REG_RBP; -1: anything else */
	int64_t cfa_off;
	int bp_how, ra_how;	/* REG_* */
	int64_t bp_off, ra_off;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;	/* 'R' */
	bool signal;		/* 'S' */
	bool aug_z;		/* 'z': FDEs carry augmentation data */
	const uint8_t *insn, *end;
};

static void reg_set(struct cfa_state *st, uint64_t reg, int how, int64_t off)
{
	if (reg == DW_REG_RBP) {
		st->bp_how = how;
		st->bp_off = off;
	} else if (reg == DW_REG_RA) {
		st->ra_how = how;
		st->ra_off = off;
	}
}

static void reg_restore(struct cfa_state *st, const struct cfa_state *init, uint64_t reg)
{
	if (reg == DW_REG_RBP) {
		st->bp_how = init->bp_how;
		st->bp_off = init->bp_off;
	} else if (reg == DW_REG_RA) {
		st->ra_how = init->ra_how;
		st->ra_off = init->ra_off;
	}
}

/*
 * Run the CFA instructions in r from code address loc until the rule at
 * target is known (the next row would start past it). init: the CIE's rules
 * (DW_CFA_restore), NULL while running the CIE's own. false: an
 * instruction this reader does not know.
 */
static bool cfa_run(struct cfi_rd *r, const struct cie *c, uintptr_t loc, uintptr_t target,
		    struct cfa_state *st, const struct cfa_state *init)
{
	struct cfa_state saved[CFA_STACK];
	int depth = 0;

	while (r->p < r->end && !r->bad) {
		uint8_t op = *r->p++;
		uint64_t reg, delta = 0;

		switch (op & 0xc0) {
		case 0x40:		/* DW_CFA_advance_loc */
			delta = op & 0x3f;
			goto advance;
		case 0x80:		/* DW_CFA_offset */
			reg_set(st, op & 0x3f, REG_AT, (int64_t)rd_uleb(r) * c->data_align);
			continue;
		case 0xc0:		/* DW_CFA_restore */
			if (init)
				reg_restore(st, init, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00:		/* DW_CFA_nop */
			continue;
		case 0x02:		/* DW_CFA_advance_loc1, 2, 4 */
			delta = rd_fixed(r, 1);
			goto advance;
		case 0x03:
			delta = rd_fixed(r, 2);
			goto advance;
		case 0x04:
			delta = rd_fixed(r, 4);
			goto advance;
		case 0x05:		/* DW_CFA_offset_extended */
			reg = rd_uleb(r);
			reg_set(st, reg, REG_AT, (int64_t)rd_uleb(r) * c->data_align);
			continue;
		case 0x06:		/* DW_CFA_restore_extended */
			reg = rd_uleb(r);
			if (init)
				reg_restore(st, init, reg);
			continue;
		case 0x07:		/* DW_CFA_undefined */
			reg_set(st, rd_uleb(r), REG_UNDEF, 0);
			continue;
		case 0x08:		/* DW_CFA_same_value */
			reg_set(st, rd_uleb(r), REG_SAME, 0);
			continue;
		case 0x09:		/* DW_CFA_register */
			reg = rd_uleb(r);
			rd_uleb(r);
			reg_set(st, reg, REG_OTHER, 0);
			continue;
		case 0x0a:		/* DW_CFA_remember_state */
			if (depth == CFA_STACK)
				return false;
			saved[depth++] = *st;
			continue;
		case 0x0b:		/* DW_CFA_restore_state */
			if (!depth)
				return false;
			*st = saved[--depth];
			continue;
		case 0x0c:		/* DW_CFA_def_cfa */
			reg = rd_uleb(r);
			st->cfa_reg = reg == DW_REG_RSP || reg == DW_REG_RBP ? (int)reg : -1;
			st->cfa_off = (int64_t)rd_uleb(r);
			continue;
		case 0x0d:		/* DW_CFA_def_cfa_register */
			reg = rd_uleb(r);
			st->cfa_reg = reg == DW_REG_RSP || reg == DW_REG_RBP ? (int)reg : -1;
			continue;
		case 0x0e:		/* DW_CFA_def_cfa_offset */
			st->cfa_off = (int64_t)rd_uleb(r);
			continue;
		case 0x0f:		/* DW_CFA_def_cfa_expression */
			st->cfa_reg = -1;
			delta = rd_uleb(r);
			goto skip;
		case 0x10:		/* DW_CFA_expression */
		case 0x16:		/* DW_CFA_val_expression */
			reg_set(st, rd_uleb(r), REG_OTHER, 0);
			delta = rd_uleb(r);
			goto skip;
		case 0x11:		/* DW_CFA_offset_extended_sf */
			reg = rd_uleb(r);
			reg_set(st, reg, REG_AT, rd_sleb(r) * c->data_align);
			continue;
		case 0x12:		/* DW_CFA_def_cfa_sf */
			reg = rd_uleb(r);
			st->cfa_reg = reg == DW_REG_RSP || reg == DW_REG_RBP ? (int)reg : -1;
			st->cfa_off = rd_sleb(r) * c->data_align;
			continue;
		case 0x13:		/* DW_CFA_def_cfa_offset_sf */
			st->cfa_off = rd_sleb(r) * c->data_align;
			continue;
		case 0x14:		/* DW_CFA_val_offset */
			reg = rd_uleb(r);
			rd_uleb(r);
			reg_set(st, reg, REG_OTHER, 0);
			continue;
		case 0x15:		/* DW_CFA_val_offset_sf */
			reg = rd_uleb(r);
			rd_sleb(r);
			reg_set(st, reg, REG_OTHER, 0);
			continue;
		case 0x2e:		/* DW_CFA_GNU_args_size */
			rd_uleb(r);
			continue;
		case 0x2f:		/* DW_CFA_GNU_negative_offset_extended */
			reg = rd_uleb(r);
			reg_set(st, reg, REG_AT, -(int64_t)rd_uleb(r) * c->data_align);
			continue;
		default:		/* DW_CFA_set_loc, vendor extensions */
			return false;
		}
advance:
		if (!init)
			return false;	/* a CIE does not advance */
		loc += delta * c->code_align;
		if (loc > target)
			return !r->bad;
		continue;
skip:
		if ((uint64_t)(r->end - r->p) < delta)
			return false;
		r->p += delta;
	}
	return !r->bad;
}

/* The CIE at p (eh_frame form); false: one this reader does not know. */
static bool cie_read(const struct cfi_module *m, const uint8_t *p, struct cie *c)
{
	struct cfi_rd r;
	const char *aug;
	uint32_t len;
	uint8_t version;

	if (!readable(m, p, 4))
		return false;
	memcpy(&len, p, 4);
	if (!len || len == 0xffffffff || !readable(m, p, 4 + (uint64_t)len))
		return false;		/* 64-bit DWARF: not in .eh_frame */
	r.p = p + 4;
	r.end = r.p + len;
	r.bad = false;
	if (rd_fixed(&r, 4) != 0)
		return false;		/* not a CIE */
	version = (uint8_t)rd_fixed(&r, 1);
	if (version != 1 && version != 3)
		return false;
	aug = (const char *)r.p;
	while (r.p < r.end && *r.p)
		r.p++;
	if (r.p++ >= r.end)
		return false;
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	if ((version == 1 ? rd_fixed(&r, 1) : rd_uleb(&r)) != DW_REG_RA)
		return false;
	c->fde_enc = 0;			/* DW_EH_PE_absptr */
	c->signal = false;
	c->aug_z = aug[0] == 'z';
	if (c->aug_z) {
		uint64_t alen = rd_uleb(&r);
		const uint8_t *data_end = r.p + alen;

		if (r.bad || alen > (uint64_t)(r.end - r.p))
			return false;
		for (const char *a = aug + 1; *a && !r.bad; a++) {
			switch (*a) {
			case 'R':
				c->fde_enc = (uint8_t)rd_fixed(&r, 1);
				break;
			case 'P': {
				uint8_t enc = (uint8_t)rd_fixed(&r, 1);

				rd_enc(&r, enc);
				break;
			}
			case 'L':
				rd_fixed(&r, 1);
				break;
			case 'S':
				c->signal = true;
				break;
			default:
				return false;	/* its data cannot be skipped */
			}
		}
		r.p = data_end;
	} else if (aug[0]) {
		return false;
	}
	c->insn = r.p;
	c->end = r.end;
	return !r.bad;
}

bool cfi__table(const struct cfi_module *m, const int32_t **tab, uint32_t *count)
{
	const uint8_t *h = m->hdr;
	uint64_t room;

	/* version, eh_frame_ptr (pcrel sdata4), fde_count (udata4), table */
	if (!h || !readable(m, h, 12) || h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 ||
	    h[3] != 0x3b)
		return false;
	memcpy(count, h + 8, sizeof(*count));
	room = (uint64_t)(m->hi - (h + 12)) / 8;
	if (*count > room)
		*count = (uint32_t)room;
	*tab = (const int32_t *)(h + 12);
	return *count > 0;
}

/* The entry of a's function in the search table; -1: none. */
static int64_t fde_index(const struct cfi_module *m, const int32_t *tab, uint32_t count,
			 uintptr_t a)
{
	uint32_t lo = 0, hi = count;

	if (cfi__entry(m, tab, 0) > a)
		return -1;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cfi__entry(m, tab, mid) <= a)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

uintptr_t cfi__fn_start(const struct cfi_module *m, uintptr_t a)
{
	const int32_t *tab;
	uint32_t count;
	int64_t i;

	if (!cfi__table(m, &tab, &count) || (i = fde_index(m, tab, count, a)) < 0)
		return 0;
	a = cfi__entry(m, tab, (uint32_t)i);
	return a - m->text_lo < m->text_hi - m->text_lo && m->text_hi - a >= 8 ? a : 0;
}

/* From the FDE of target's function, found through the search table. */
uint64_t cfi__rule(const struct cfi_module *m, uintptr_t target)
{
	const int32_t *tab;
	uint32_t count, len, cie_off;
	int64_t i;
	const uint8_t *fde, *cie;
	uintptr_t start;
	struct cfa_state st = { -1, 0, REG_SAME, REG_SAME, 0, 0 }, init;
	struct cfi_rd r;
	struct cie c;
	uint64_t range, off, bp = 0;

	for (unsigned int k = 0; k < sizeof(m->plt) / sizeof(m->plt[0]); k++)
		if (target - m->plt[k].lo < m->plt[k].hi - m->plt[k].lo)
			return CFI_SP | 8u << 3;
	if (!cfi__table(m, &tab, &count) || (i = fde_index(m, tab, count, target)) < 0)
		return CFI_OTHER;
	start = cfi__entry(m, tab, (uint32_t)i);
	/* addresses computed as integers: a damaged table points anywhere */
	fde = (const uint8_t *)((uintptr_t)m->hdr + (uintptr_t)(intptr_t)tab[2 * i + 1]);
	if (!readable(m, fde, 8))
		return CFI_OTHER;
	memcpy(&len, fde, 4);
	memcpy(&cie_off, fde + 4, 4);
	cie = (const uint8_t *)((uintptr_t)fde + 4 - cie_off);
	if (!len || len == 0xffffffff || !cie_off || !readable(m, fde, 4 + (uint64_t)len) ||
	    !cie_read(m, cie, &c) || c.signal)
		return CFI_OTHER;
	r.p = fde + 8;
	r.end = fde + 4 + len;
	r.bad = false;
	rd_enc(&r, c.fde_enc);			/* pc_begin: the table's */
	range = rd_enc(&r, c.fde_enc & 0x0f);
	if (r.bad || target - start >= range)
		return CFI_OTHER;		/* past its function */
	{
		struct cfi_rd ci = { c.insn, c.end, false };

		if (!cfa_run(&ci, &c, 0, 0, &st, NULL))
			return CFI_OTHER;
	}
	init = st;
	if (c.aug_z) {				/* the FDE's augmentation data */
		uint64_t alen = rd_uleb(&r);

		if (r.bad || alen > (uint64_t)(r.end - r.p))
			return CFI_OTHER;
		r.p += alen;
	}
	if (!cfa_run(&r, &c, start, target, &st, &init))
		return CFI_OTHER;
	if (st.ra_how == REG_UNDEF)
		return CFI_END;
	if (st.ra_how != REG_AT || st.ra_off != -8 || st.cfa_reg < 0 ||
	    st.cfa_off < 8 || st.cfa_off > CFI_OFF_MAX)
		return CFI_OTHER;
	off = (uint64_t)st.cfa_off;
	if (st.bp_how == REG_AT) {
		if (st.bp_off >= 0 || (-st.bp_off & 7) || -st.bp_off / 8 > CFI_BP_MAX)
			return CFI_OTHER;
		bp = (uint64_t)(-st.bp_off / 8);
	} else if (st.bp_how != REG_SAME) {
		return CFI_OTHER;
	}
	return (st.cfa_reg == DW_REG_RSP ? CFI_SP : CFI_BP) | off << 3 | bp << CFI_BP_SHIFT;
}
