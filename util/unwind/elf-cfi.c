/*
 * A module file's CFI for util/unwind/cfi.c (util/unwind/elf-cfi.h).
 */
#include "util/unwind/elf-cfi.h"

#include <errno.h>
#include <string.h>

/* The PLT stubs' sections, by name (when the file keeps section headers). */
static void plt_sections(Elf *elf, struct cfi_module *out)
{
	static const char *const names[] = { ".plt", ".plt.sec", ".plt.got" };
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (unsigned int k = 0; k < 3; k++)
			if (!strcmp(name, names[k])) {
				out->plt[k].lo = sh.sh_addr;
				out->plt[k].hi = sh.sh_addr + sh.sh_size;
			}
	}
}

int elf_cfi__load(Elf *elf, struct cfi_module *out)
{
	GElf_Phdr hdr = { 0 }, seg = { 0 };
	uint64_t text_lo = UINT64_MAX, text_hi = 0;
	const uint8_t *raw;
	size_t size, phnum;
	bool have_hdr = false, have_seg = false;
	int32_t ptr;

	memset(out, 0, sizeof(*out));
	raw = (const uint8_t *)elf_rawfile(elf, &size);
	if (!raw || elf_getphdrnum(elf, &phnum))
		return -ENOENT;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_GNU_EH_FRAME) {
			hdr = ph;
			have_hdr = true;
		} else if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			if (ph.p_vaddr < text_lo)
				text_lo = ph.p_vaddr;
			if (ph.p_vaddr + ph.p_memsz > text_hi)
				text_hi = ph.p_vaddr + ph.p_memsz;
		}
	}
	if (!have_hdr || hdr.p_offset > size || hdr.p_filesz > size - hdr.p_offset ||
	    hdr.p_filesz < 12 || text_lo >= text_hi)
		return -ENOENT;
	/* the load segment holding the header: file offsets and addresses
	 * differ by the same amount all through it */
	for (size_t i = 0; i < phnum && !have_seg; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    hdr.p_vaddr >= ph.p_vaddr && hdr.p_vaddr - ph.p_vaddr < ph.p_filesz &&
		    hdr.p_offset - ph.p_offset == hdr.p_vaddr - ph.p_vaddr &&
		    ph.p_offset <= size && ph.p_filesz <= size - ph.p_offset) {
			seg = ph;
			have_seg = true;
		}
	}
	if (!have_seg)
		return -ENOENT;
	out->hdr = raw + hdr.p_offset;
	out->hdr_addr = hdr.p_vaddr;
	out->lo = raw + seg.p_offset;
	out->hi = raw + seg.p_offset + seg.p_filesz;
	out->text_lo = text_lo;
	out->text_hi = text_hi;
	plt_sections(elf, out);
	/* .eh_frame (eh_frame_ptr, pcrel sdata4) in the same segment */
	memcpy(&ptr, out->hdr + 4, 4);
	if (out->hdr[1] != 0x1b ||
	    hdr.p_vaddr + 4 + (int64_t)ptr < seg.p_vaddr ||
	    hdr.p_vaddr + 4 + (int64_t)ptr >= seg.p_vaddr + seg.p_filesz) {
		memset(out, 0, sizeof(*out));
		return -ENOENT;
	}
	return 0;
}
