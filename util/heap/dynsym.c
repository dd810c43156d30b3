/*
 * Dynamic symbols of a mapped ELF object (util/heap/dynsym.h), for the
 * injection of the heap tracker: glibc's functions in the process it is
 * injected into, the tracker's own entry points. The object is read the
 * way the loader left it: the dynamic section's addresses are relocated in
 * place on x86-64 (a value below the base is not: the base is added).
 */
#include "util/heap/dynsym.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define MAX_SYMS	(1u << 20)
#define MAX_STR		(16u << 20)

struct reader {
	pid_t pid;		/* 0: buf */
	const unsigned char *buf;
	size_t len;
	const Elf64_Phdr *ph;	/* buf: addresses are virtual, through these (NULL: offsets) */
	int n_ph;
};

static int rd(const struct reader *r, uint64_t addr, void *out, size_t n)
{
	if (!r->pid) {
		for (int i = 0; r->ph && i < r->n_ph; i++) {
			if (r->ph[i].p_type == PT_LOAD && addr - r->ph[i].p_vaddr < r->ph[i].p_filesz) {
				addr = addr - r->ph[i].p_vaddr + r->ph[i].p_offset;
				break;
			}
		}
		if (addr > r->len || n > r->len - addr)
			return -EFAULT;
		memcpy(out, r->buf + addr, n);
		return 0;
	} else {
		struct iovec l = { .iov_base = out, .iov_len = n };
		struct iovec rm = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };

		return process_vm_readv(r->pid, &l, 1, &rm, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
	}
}

/* The number of symbols a DT_GNU_HASH table at h covers. */
static int gnu_hash_count(const struct reader *r, uint64_t h, size_t *n)
{
	uint32_t hdr[4], top = 0;
	uint64_t buckets;

	if (rd(r, h, hdr, sizeof(hdr)) || !hdr[0] || hdr[0] > MAX_SYMS || hdr[2] > MAX_SYMS)
		return -ENOEXEC;
	buckets = h + 16 + (uint64_t)hdr[2] * 8;
	for (uint32_t i = 0; i < hdr[0]; i++) {
		uint32_t b;

		if (rd(r, buckets + 4ULL * i, &b, 4))
			return -EFAULT;
		if (b > top)
			top = b;
	}
	if (top < hdr[1]) {
		*n = hdr[1];
		return 0;
	}
	/* the last chain: until its entry with the low bit set */
	for (uint64_t c = buckets + 4ULL * hdr[0] + 4ULL * (top - hdr[1]);; c += 4, top++) {
		uint32_t v;

		if (top >= MAX_SYMS || rd(r, c, &v, 4))
			return -ENOEXEC;
		if (v & 1)
			break;
	}
	*n = (size_t)top + 1;
	return 0;
}

static void build_id(const struct reader *r, uint64_t at, uint64_t len, struct dynsym *d)
{
	unsigned char buf[512];
	uint64_t o = 0;

	if (len > sizeof(buf) || rd(r, at, buf, len))
		return;
	while (o + 12 <= len) {
		Elf64_Nhdr nh;

		memcpy(&nh, buf + o, sizeof(nh));
		o += 12;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(buf + o, "GNU", 4) &&
		    nh.n_descsz <= sizeof(d->build_id) && o + 4 + nh.n_descsz <= len) {
			memcpy(d->build_id, buf + o + 4, nh.n_descsz);
			d->build_id_len = nh.n_descsz;
			return;
		}
		o += ((nh.n_namesz + 3) & ~3u) + ((nh.n_descsz + 3) & ~3u);
	}
}

static int load(struct reader *r, uint64_t start, struct dynsym *d)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[64];
	uint64_t dyn = 0, dynsz = 0, symtab = 0, strtab = 0, hash = 0, gnuhash = 0, low = UINT64_MAX;
	int err;

	memset(d, 0, sizeof(*d));
	if (rd(r, start, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum || eh.e_phnum > 64 ||
	    rd(r, start + eh.e_phoff, ph, eh.e_phnum * sizeof(Elf64_Phdr)))
		return -ENOEXEC;
	for (int i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_vaddr & ~4095ULL) < low)
			low = ph[i].p_vaddr & ~4095ULL;
	if (low == UINT64_MAX)
		return -ENOEXEC;
	if (!r->pid) {
		r->ph = ph;
		r->n_ph = eh.e_phnum;
	}
	d->base = r->pid ? start - low : 0;
	d->lo = UINT64_MAX;
	for (int i = 0; i < eh.e_phnum; i++) {
		uint64_t a = d->base + ph[i].p_vaddr;

		if (ph[i].p_type == PT_LOAD) {
			if (a < d->lo)
				d->lo = a;
			if (a + ph[i].p_memsz > d->hi)
				d->hi = a + ph[i].p_memsz;
			if ((ph[i].p_flags & PF_X) && !d->text_lo) {
				d->text_lo = a;
				d->text_hi = a + ph[i].p_memsz;
			}
		} else if (ph[i].p_type == PT_DYNAMIC) {
			dyn = a;
			dynsz = ph[i].p_filesz;
		} else if (ph[i].p_type == PT_NOTE) {
			build_id(r, a, ph[i].p_filesz, d);
		}
	}
	if (!dyn)
		return -ENOEXEC;
	for (uint64_t o = 0; o + sizeof(Elf64_Dyn) <= dynsz && o < 512 * sizeof(Elf64_Dyn);
	     o += sizeof(Elf64_Dyn)) {
		Elf64_Dyn e;
		uint64_t v;

		if (rd(r, dyn + o, &e, sizeof(e)))
			return -EFAULT;
		if (e.d_tag == DT_NULL)
			break;
		v = e.d_un.d_ptr;
		if (r->pid && v < d->base)
			v += d->base;
		switch (e.d_tag) {
		case DT_SYMTAB: symtab = v; break;
		case DT_STRTAB: strtab = v; break;
		case DT_STRSZ: d->strsz = e.d_un.d_val; break;
		case DT_HASH: hash = v; break;
		case DT_GNU_HASH: gnuhash = v; break;
		}
	}
	if (!symtab || !strtab || !d->strsz || d->strsz > MAX_STR)
		return -ENOEXEC;
	if (gnuhash) {
		err = gnu_hash_count(r, gnuhash, &d->n);
		if (err)
			return err;
	} else if (hash) {
		uint32_t h[2];

		if (rd(r, hash, h, sizeof(h)) || h[1] > MAX_SYMS)
			return -ENOEXEC;
		d->n = h[1];
	} else {
		return -ENOEXEC;
	}
	d->sym = malloc(d->n * sizeof(Elf64_Sym) + 1);
	d->str = malloc(d->strsz + 1);
	if (!d->sym || !d->str) {
		dynsym__free(d);
		return -ENOMEM;
	}
	if (rd(r, symtab, d->sym, d->n * sizeof(Elf64_Sym)) || rd(r, strtab, d->str, d->strsz)) {
		dynsym__free(d);
		return -EFAULT;
	}
	d->str[d->strsz] = '\0';
	return 0;
}

int dynsym__load_pid(pid_t pid, uint64_t start, struct dynsym *d)
{
	struct reader r = { .pid = pid };

	return load(&r, start, d);
}

int dynsym__load_buf(const void *buf, size_t len, struct dynsym *d)
{
	struct reader r = { .buf = buf, .len = len };

	return load(&r, 0, d);
}

bool dynsym__find(const struct dynsym *d, const char *name, uint64_t *addr, uint64_t *size)
{
	const Elf64_Sym *s = d->sym;

	for (size_t i = 1; i < d->n; i++) {
		if (s[i].st_shndx == SHN_UNDEF || !s[i].st_value || s[i].st_name >= d->strsz ||
		    strcmp(d->str + s[i].st_name, name))
			continue;
		*addr = d->base + s[i].st_value;
		if (size)
			*size = s[i].st_size;
		return true;
	}
	return false;
}

void dynsym__free(struct dynsym *d)
{
	free(d->sym);
	free(d->str);
	d->sym = NULL;
	d->str = NULL;
}
