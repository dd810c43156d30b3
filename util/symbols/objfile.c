/*
 * A binary on disk as an export names it: build-id and load segment
 * (util/symbols/objfile.h).
 */
#include "util/symbols/objfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "util/infile.h"

/* The PT_LOAD segment whose file range holds offset; the executable one wins a shared page. */
static void find_segment(Elf *elf, uint64_t offset, struct objfile_ident *id)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		uint64_t page_off;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		page_off = ph.p_offset & ~(uint64_t)(4096 - 1);
		if (offset < page_off || offset >= ph.p_offset + ph.p_filesz)
			continue;
		if (!id->has_segment || (ph.p_flags & PF_X)) {
			id->has_segment = true;
			id->seg_offset = ph.p_offset;
			id->seg_vaddr = ph.p_vaddr;
		}
		if (ph.p_flags & PF_X)
			break;
	}
}

int objfile__ident(const char *path, time_t not_after, uint64_t offset,
		   struct objfile_ident *id)
{
	const unsigned char *bits;
	struct stat stb;
	ssize_t n;
	Elf *elf;
	int fd, err = 0;

	memset(id, 0, sizeof(*id));
	fd = infile__open(path, 0, &stb);
	if (fd < 0)
		return fd;
	if (not_after && stb.st_mtime > not_after) {
		err = -ESTALE;
		goto out;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		err = -EINVAL;
		goto out;
	}
	n = dwelf_elf_gnu_build_id(elf, (const void **)&bits);
	for (ssize_t i = 0; n > 0 && n <= 64 && i < n; i++)
		snprintf(id->build_id + 2 * i, 3, "%02x", bits[i]);
	find_segment(elf, offset, id);
	elf_end(elf);
out:
	close(fd);
	return err;
}
