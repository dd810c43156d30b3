/*
 * Synthesized symbols for PLT stubs (see plt.h). By hand: libdwfl and
 * libelf have no such call (perf does the same in symbol-elf.c).
 */
#include "util/symbols/plt.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include "util/array.h"

/* A GOT slot and the name of the function its relocation binds. */
struct slot {
	uint64_t got;
	const char *name;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

static const char *slot_name(const struct slot *v, size_t n, uint64_t got)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].got == got)
			return v[mid].name;
		if (v[mid].got < got)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The JUMP_SLOT and GLOB_DAT relocations of elf's dynamic symbols, sorted by slot. */
static int read_slots(Elf *elf, struct slot **out, size_t *n_out)
{
	struct slot *v = NULL;
	size_t n = 0, cap = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Scn *symscn;
		Elf_Data *d, *symd;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		symscn = elf_getscn(elf, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		symd = elf_getdata(symscn, NULL);
		if (!d || !symd)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *name;
			unsigned long type;

			if (!gelf_getrela(d, (int)i, &r))
				break;
			type = GELF_R_TYPE(r.r_info);
			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
			    !gelf_getsym(symd, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			name = elf_strptr(elf, symsh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			if (ALLOC_GROW(v, n + 1, cap, 64)) {
				free(v);
				return -ENOMEM;
			}
			v[n++] = (struct slot){ .got = r.r_offset, .name = name };
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), slot_cmp);
	*out = v;
	*n_out = n;
	return 0;
}

/* The GOT slot that the stub at b (address a, len bytes) jumps through; 0 if none. */
static uint64_t stub_slot(const unsigned char *b, size_t len, uint64_t a)
{
	size_t i = 0;
	int32_t disp;

	if (len >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4;					/* endbr64 */
	if (i < len && b[i] == 0xf2)
		i++;					/* bnd */
	if (i + 6 > len || b[i] != 0xff || b[i + 1] != 0x25)
		return 0;				/* not jmp *disp32(%rip) */
	memcpy(&disp, b + i + 2, sizeof(disp));
	return a + i + 6 + (uint64_t)(int64_t)disp;
}

static bool is_plt(const char *name)
{
	return name && (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
			!strcmp(name, ".plt.got"));
}

int plt__symbols(Elf *elf, uint64_t bias, struct plt_sym **out, size_t *n_out)
{
	struct plt_sym *v = NULL;
	struct slot *slots = NULL;
	size_t n = 0, cap = 0, n_slots = 0, shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int err;

	*out = NULL;
	*n_out = 0;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	err = read_slots(elf, &slots, &n_slots);
	if (err || !n_slots)
		return err;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t ent;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !is_plt(elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		ent = sh.sh_entsize >= 8 && sh.sh_entsize <= 32 ? sh.sh_entsize : 16;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			continue;
		for (uint64_t off = 0; off + ent <= sh.sh_size; off += ent) {
			uint64_t a = sh.sh_addr + off;
			const char *name = slot_name(slots, n_slots,
						     stub_slot((const unsigned char *)d->d_buf + off,
							       ent, a));

			if (!name)
				continue;
			if (ALLOC_GROW(v, n + 1, cap, 64))
				goto nomem;
			/* "clock_gettime@plt", without the version ("@GLIBC_2.17") */
			if (asprintf(&v[n].name, "%.*s@plt", (int)strcspn(name, "@"), name) < 0)
				goto nomem;
			v[n].addr = a + bias;
			v[n].size = (uint32_t)ent;
			n++;
		}
	}
	free(slots);
	*out = v;
	*n_out = n;
	return 0;
nomem:
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	free(slots);
	return -ENOMEM;
}
