/*
 * Debug files decompressed once per run (see inflated.h).
 *
 * The copy is written with libelf: the same ELF header, program headers
 * and sections in the same order, each compressed one through
 * elf_compress() (which knows every compression libelf was built with)
 * and written out plain; libelf lays the file out again. A file that has
 * no compressed section, or any step that fails, leaves the original to
 * libdw, which inflates it itself: slower, never wrong.
 */
#include "util/symbols/inflated.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gelf.h>

#include "util/array.h"
#include "util/error.h"

#define ID_MAX	64

/* One debug file met this run, by its build-id. */
struct inflated {
	unsigned char id[ID_MAX];
	int len;
	int fd;		/* the inflated copy; -1: nothing to inflate, or it failed */
};

static struct inflated *files;
static size_t n_files, alloc_files;
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;

static bool has_compressed(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			return true;
	return false;
}

/* The sections of src, inflated, into the new ELF file dst. 0 or -1. */
static int copy_inflated(Elf *src, Elf *dst)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t nph, shstrndx;

	if (!gelf_getehdr(src, &eh) || elf_getphdrnum(src, &nph) ||
	    elf_getshdrstrndx(src, &shstrndx) || !gelf_newehdr(dst, gelf_getclass(src)) ||
	    !gelf_update_ehdr(dst, &eh) || (nph && !gelf_newphdr(dst, nph)))
		return -1;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(src, (int)i, &ph) || !gelf_update_phdr(dst, (int)i, &ph))
			return -1;
	}
	(void)elf_errno();	/* the loop below checks for its own */
	while ((scn = elf_nextscn(src, scn))) {
		Elf_Scn *out = elf_newscn(dst);
		Elf_Data *d = NULL, *od;
		GElf_Shdr sh;

		if (!out || elf_ndxscn(out) != elf_ndxscn(scn) || !gelf_getshdr(scn, &sh))
			return -1;
		if ((sh.sh_flags & SHF_COMPRESSED) &&
		    (elf_compress(scn, 0, 0) != 1 || !gelf_getshdr(scn, &sh)))
			return -1;
		while ((d = elf_getdata(scn, d))) {
			if (!(od = elf_newdata(out)))
				return -1;
			*od = *d;
		}
		if (elf_errno() || !gelf_update_shdr(out, &sh))
			return -1;
	}
	/* the section names' index, in section 0 when the header cannot hold it */
	if (!gelf_getehdr(dst, &eh))
		return -1;
	if (shstrndx >= SHN_LORESERVE) {
		Elf_Scn *zero = elf_getscn(dst, 0);
		GElf_Shdr sh;

		if (!zero || !gelf_getshdr(zero, &sh))
			return -1;
		sh.sh_link = (GElf_Word)shstrndx;
		if (!gelf_update_shdr(zero, &sh))
			return -1;
		eh.e_shstrndx = SHN_XINDEX;
	} else {
		eh.e_shstrndx = (GElf_Half)shstrndx;
	}
	if (!gelf_update_ehdr(dst, &eh) || elf_update(dst, ELF_C_WRITE) < 0)
		return -1;
	return 0;
}

/* The inflated copy of the debug file at fd: a memfd, or -1. */
static int inflate_file(int fd, const char *path)
{
	Elf *src = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL), *dst = NULL;
	int out = -1;

	if (!src || elf_kind(src) != ELF_K_ELF || !has_compressed(src))
		goto done;
	out = memfd_create("rsprof-debuginfo", MFD_CLOEXEC);
	if (out < 0)
		goto done;
	dst = elf_begin(out, ELF_C_WRITE, NULL);
	if (!dst || copy_inflated(src, dst)) {
		pr_debug(1, "%s: cannot inflate its sections: %s", path, elf_errmsg(-1));
		close(out);
		out = -1;
	}
done:
	if (dst)
		elf_end(dst);
	if (src)
		elf_end(src);
	return out;
}

int inflated__open(int fd, const char *path, const unsigned char *bits, int len)
{
	struct inflated *f = NULL;
	int ret = fd;

	if (len <= 0 || len > ID_MAX)
		return fd;
	pthread_mutex_lock(&files_lock);
	for (size_t i = 0; i < n_files && !f; i++)
		if (files[i].len == len && !memcmp(files[i].id, bits, (size_t)len))
			f = &files[i];
	if (!f && !ALLOC_GROW(files, n_files + 1, alloc_files, 8)) {
		f = &files[n_files++];
		memcpy(f->id, bits, (size_t)len);
		f->len = len;
		f->fd = inflate_file(fd, path);
		if (f->fd >= 0)
			pr_debug(2, "%s: inflated once for this run (%lld bytes)", path,
				 (long long)lseek(f->fd, 0, SEEK_END));
	}
	if (f && f->fd >= 0) {
		int dup = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);

		if (dup >= 0) {
			close(fd);
			ret = dup;
		}
	}
	pthread_mutex_unlock(&files_lock);
	return ret;
}
