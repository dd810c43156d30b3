/*
 * Frame pointers in a module's own code: see util/symbols/frame-pointers.h.
 */
#include "util/symbols/frame-pointers.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "util/symbols/srcpath.h"
#include "util/symbols/x86-prologue.h"

/* Enough functions to tell a build's flags; a big program has thousands. */
#define CENSUS_MAX 256

struct census_ctx {
	const unsigned char *raw;	/* the file's bytes (libelf's mapping) */
	size_t size;
	Elf *elf;
	size_t n_phdr;
	struct fp_census *c;
};

/* The file's code bytes at virtual address vaddr: *len of them (at most max), or NULL. */
static const unsigned char *code_at(const struct census_ctx *x, uint64_t vaddr, size_t max,
				    size_t *len)
{
	for (size_t i = 0; i < x->n_phdr; i++) {
		GElf_Phdr ph;
		uint64_t off;

		if (!gelf_getphdr(x->elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		if (vaddr < ph.p_vaddr || vaddr >= ph.p_vaddr + ph.p_filesz)
			continue;
		off = ph.p_offset + (vaddr - ph.p_vaddr);
		if (off >= x->size)
			return NULL;
		*len = ph.p_vaddr + ph.p_filesz - vaddr;
		if (*len > x->size - off)
			*len = x->size - off;
		if (*len > max)
			*len = max;
		return x->raw + off;
	}
	return NULL;
}

/*
 * A function's entry: its low_pc, or for one in several ranges (gcc -O2
 * splits the unlikely part into a .cold range, often placed first) the
 * start of its largest range. 0 when it has no code.
 */
static Dwarf_Addr entry_of(Dwarf_Die *fn)
{
	Dwarf_Addr pc, base, lo, hi, best = 0, size = 0;
	ptrdiff_t off = 0;

	if (dwarf_entrypc(fn, &pc) == 0)
		return pc;
	while ((off = dwarf_ranges(fn, off, &base, &lo, &hi)) > 0) {
		if (hi > lo && hi - lo > size) {
			size = hi - lo;
			best = lo;
		}
	}
	return best;
}

/* The functions with code under die: at unit level or in namespaces (Rust). */
static void scan(struct census_ctx *x, Dwarf_Die *die)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Addr lo;
		const unsigned char *b;
		size_t n;
		int kind;

		if (x->c->functions >= CENSUS_MAX)
			return;
		if (tag == DW_TAG_namespace || tag == DW_TAG_module) {
			scan(x, &child);
		} else if (tag == DW_TAG_subprogram && (lo = entry_of(&child)) &&
			   (b = code_at(x, lo, X86_FP_WINDOW, &n)) &&
			   (kind = x86__fp_prologue(b, n)) >= 0) {
			x->c->functions++;
			x->c->with_fp += kind;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

int frame_pointers__census(Dwfl_Module *mod, struct fp_census *c)
{
	struct census_ctx x = { .c = c };
	Dwarf_Addr bias;
	Dwarf_Off off = 0, next;
	size_t hsize;
	Dwarf *dbg;

	memset(c, 0, sizeof(*c));
	dbg = dwfl_module_getdwarf(mod, &bias);
	x.elf = dwfl_module_getelf(mod, &bias);
	if (!dbg || !x.elf || elf_getphdrnum(x.elf, &x.n_phdr) != 0)
		return -ENOENT;
	x.raw = (const unsigned char *)elf_rawfile(x.elf, &x.size);
	if (!x.raw)
		return -ENOENT;
	while (c->functions < CENSUS_MAX &&
	       dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cudie;
		Dwarf_Attribute mem;
		const char *name, *dir;
		char path[4096];

		if (dwarf_offdie(dbg, off + hsize, &cudie) && (name = dwarf_diename(&cudie))) {
			dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &mem));
			if (name[0] != '/' && dir)
				snprintf(path, sizeof(path), "%s/%s", dir, name);
			else
				snprintf(path, sizeof(path), "%s", name);
			if (!srcpath__is_toolchain(path))
				scan(&x, &cudie);
		}
		off = next;
	}
	return c->functions ? 0 : -ENOENT;
}
