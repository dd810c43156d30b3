/*
 * Allocator entry points of a target, from the symbol tables of its ELF
 * files (libelf), and where exactly to put each uprobe.
 */
#include "util/heap/alloc-syms.h"

#include <errno.h>
#include <fcntl.h>
#include <capstone/capstone.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "bpf/heap.h"
#include "util/error.h"
#include "util/infile.h"
#include "util/record/maps.h"
#include "util/record/proc.h"

struct want {
	const char *name;
	unsigned int kind;
	bool is_free;
	bool optional;		/* rarely used: the recording goes on without it */
};

static const struct want rust_wants[] = {
	{ "__rust_alloc", HEAP_KIND_MALLOC, false },
	/* vec![0u8; n] comes here, not through __rust_alloc */
	{ "__rust_alloc_zeroed", HEAP_KIND_MALLOC, false },
	{ "__rust_realloc", HEAP_KIND_RUST_REALLOC, false },
	{ "__rust_dealloc", HEAP_KIND_RUST_DEALLOC, true },
};

static const struct want libc_wants[] = {
	{ "malloc", HEAP_KIND_MALLOC, false },
	{ "calloc", HEAP_KIND_CALLOC, false },
	{ "realloc", HEAP_KIND_REALLOC, false },
	{ "free", HEAP_KIND_FREE, true },
	{ "posix_memalign", HEAP_KIND_POSIX_MEMALIGN, false, true },
	{ "aligned_alloc", HEAP_KIND_ALIGNED, false, true },
	{ "memalign", HEAP_KIND_ALIGNED, false, true },	/* an alias of aligned_alloc in glibc */
};

/*
 * C++: operator new calls malloc from libstdc++, which keeps no frame
 * pointer, so at malloc the user's call site is not in the chain; probed
 * itself, its caller is. Nested, the malloc inside counts nothing more.
 * operator delete needs nothing: the free inside it is seen.
 */
static const struct want cxx_wants[] = {
	{ "_Znwm", HEAP_KIND_MALLOC, false, true },			/* new(size_t) */
	{ "_ZnwmRKSt9nothrow_t", HEAP_KIND_MALLOC, false, true },
	{ "_ZnwmSt11align_val_t", HEAP_KIND_MALLOC, false, true },
	{ "_Znam", HEAP_KIND_MALLOC, false, true },			/* new[](size_t) */
	{ "_ZnamRKSt9nothrow_t", HEAP_KIND_MALLOC, false, true },
	{ "_ZnamSt11align_val_t", HEAP_KIND_MALLOC, false, true },
};

#define N_WANTS(a) (sizeof(a) / sizeof((a)[0]))

/* Registers a probe of each kind reads at its probed instruction (bpf/heap.bpf.c). */
enum { R_DI = 1, R_SI = 2, R_DX = 4, R_CX = 8, R_SP = 16, R_BP = 32 };

static unsigned int regs_read_by(unsigned int kind)
{
	unsigned int r = R_SP | R_BP;	/* the return address at (%rsp), the frame chain */

	switch (kind) {
	case HEAP_KIND_MALLOC:		/* size */
	case HEAP_KIND_FREE:		/* ptr */
		return r | R_DI;
	case HEAP_KIND_ALIGNED:		/* align, size */
		return r | R_SI;
	case HEAP_KIND_POSIX_MEMALIGN:	/* memptr, align, size */
		return r | R_DI | R_DX;
	case HEAP_KIND_RUST_REALLOC:	/* ptr, old size, align, new size */
		return r | R_DI | R_SI | R_CX;
	default:			/* calloc, realloc, __rust_dealloc: two */
		return r | R_DI | R_SI;
	}
}

static unsigned int reg_bit(x86_reg reg)
{
	switch (reg) {
	case X86_REG_RDI: case X86_REG_EDI: case X86_REG_DI: case X86_REG_DIL:
		return R_DI;
	case X86_REG_RSI: case X86_REG_ESI: case X86_REG_SI: case X86_REG_SIL:
		return R_SI;
	case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: case X86_REG_DH:
		return R_DX;
	case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: case X86_REG_CH:
		return R_CX;
	case X86_REG_RSP: case X86_REG_ESP: case X86_REG_SP: case X86_REG_SPL:
		return R_SP;
	case X86_REG_RBP: case X86_REG_EBP: case X86_REG_BP: case X86_REG_BPL:
		return R_BP;
	default:
		return 0;
	}
}

/*
 * Does the kernel emulate this instruction at a uprobe (arch/x86/kernel/
 * uprobes.c: push of a register, a nop, jmp, call or jcc with a relative
 * target and no 0x66 prefix), rather than single-step it out of line?
 */
static bool emulated(const uint8_t *c, size_t len)
{
	if (!len)
		return false;
	if ((c[0] >= 0x50 && c[0] <= 0x57) || c[0] == 0x90 || c[0] == 0xe8 || c[0] == 0xe9 ||
	    c[0] == 0xeb || (c[0] >= 0x70 && c[0] <= 0x7f))
		return true;
	if (len >= 2 && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57)
		return true;
	return len >= 2 && c[0] == 0x0f && (c[1] == 0x1f || (c[1] >= 0x80 && c[1] <= 0x8f));
}

/* Does a direct branch of the function land in (0, at]? Then a probe at `at`
 * could fire twice in one call. */
static bool branched_into(csh h, const uint8_t *code, size_t len, uint64_t at)
{
	cs_insn *insn = cs_malloc(h);
	const uint8_t *p = code;
	size_t left = len;
	uint64_t addr = 0;
	bool hit = false;

	if (!insn)
		return true;
	while (!hit && cs_disasm_iter(h, &p, &left, &addr, insn)) {
		const cs_x86 *x = &insn->detail->x86;

		if (!cs_insn_group(h, insn, CS_GRP_JUMP) && !cs_insn_group(h, insn, CS_GRP_CALL))
			continue;
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM &&
		    x->operands[0].imm > 0 && (uint64_t)x->operands[0].imm <= at)
			hit = true;
	}
	cs_free(insn, 1);
	return hit;
}

int alloc_syms__probe_point(const uint8_t *code, size_t len, unsigned int kind, bool is_free,
			    unsigned int *skip, bool *is_emulated)
{
	unsigned int needed = regs_read_by(kind), start = 0;
	cs_insn *insn = NULL;
	const uint8_t *p;
	size_t left;
	uint64_t addr;
	csh h;
	int err = 0;

	*skip = 0;
	*is_emulated = emulated(code, len);
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return -ENOTSUP;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	insn = cs_malloc(h);
	if (!insn) {
		err = -ENOMEM;
		goto out;
	}
	/* free: [endbr64] test %rdi,%rdi; je: a NULL free leaves, untrapped */
	if (is_free) {
		size_t i = len >= 4 && !memcmp(code, "\xf3\x0f\x1e\xfa", 4) ? 4 : 0;

		if (i + 3 <= len && !memcmp(code + i, "\x48\x85\xff", 3)) {
			i += 3;
			if (i + 6 <= len && code[i] == 0x0f && code[i + 1] == 0x84)
				start = i + 6;
			else if (i + 2 <= len && code[i] == 0x74)
				start = i + 2;
		}
	}
	p = code + start;
	left = len - start;
	addr = start;
	/* the first emulated instruction on every path, the probe's registers untouched */
	for (int n = 0; n < 32 && cs_disasm_iter(h, &p, &left, &addr, insn); n++) {
		uint64_t at = insn->address;
		cs_regs rr, rw;
		uint8_t nr, nw;
		unsigned int written = 0;

		if (emulated(insn->bytes, insn->size)) {
			if (at && !branched_into(h, code, len, at)) {
				*skip = (unsigned int)at;
				*is_emulated = true;
			}
			break;
		}
		if (cs_insn_group(h, insn, CS_GRP_JUMP) || cs_insn_group(h, insn, CS_GRP_CALL) ||
		    cs_insn_group(h, insn, CS_GRP_RET) || cs_insn_group(h, insn, CS_GRP_INT) ||
		    cs_regs_access(h, insn, rr, &nr, rw, &nw))
			break;
		for (int i = 0; i < nw; i++)
			written |= reg_bit(rw[i]);
		if (written & needed)
			break;
	}
out:
	cs_free(insn, 1);
	cs_close(&h);
	return err;
}

/* rustc >= 1.80 or so: __rustc::__rust_alloc, v0-mangled as
 * _RNvCs<crate hash>_7___rustc12___rust_alloc. */
static bool rust_name_matches(const char *sym, const char *want)
{
	char suffix[64];
	size_t ls, lx;

	if (!strcmp(sym, want))
		return true;
	if (strncmp(sym, "_RNv", 4))
		return false;
	snprintf(suffix, sizeof(suffix), "_7___rustc%zu_%s", strlen(want), want);
	ls = strlen(sym);
	lx = strlen(suffix);
	return ls > lx && !strcmp(sym + ls - lx, suffix);
}

/* The file offset of a virtual address, through the PT_LOAD headers. */
static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static int add_probe(struct alloc_syms *s, const char *path, const char *name,
		     uint64_t off, uint64_t size, const struct want *w, int fd, bool push_only)
{
	struct alloc_probe *v, *p;
	uint8_t code[4096];
	bool emul = false;
	ssize_t got;

	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].offset - s->v[i].skip == off && !strcmp(s->v[i].path, path))
			return 0;	/* an alias (memalign = aligned_alloc): probe once */
	v = realloc(s->v, (s->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->v = v;
	p = &v[s->n];
	memset(p, 0, sizeof(*p));
	p->path = strdup(path);
	p->name = strdup(name);
	if (!p->path || !p->name) {
		free(p->path);
		free(p->name);
		return -ENOMEM;
	}
	/* the function's code (its branches matter), at least its first bytes */
	if (size < 16 || size > sizeof(code))
		size = size > sizeof(code) ? sizeof(code) : 16;
	got = pread(fd, code, size, off);
	if (got > 0 && alloc_syms__probe_point(code, got, w->kind, w->is_free, &p->skip, &emul))
		p->skip = 0;
	if (push_only && !emul) {
		/* a trap it would single-step (≈11 µs): the malloc inside will do */
		pr_debug(1, "heap: %s in %s not probed (nothing the kernel emulates to probe)",
			 name, path);
		free(p->path);
		free(p->name);
		return 0;
	}
	p->offset = off + p->skip;
	p->kind = w->kind;
	p->is_free = w->is_free;
	p->optional = w->optional;
	p->single_step = !emul;
	s->n++;
	pr_debug(1, "heap: %s in %s at %#llx (+%u%s)", name, path,
		 (unsigned long long)off, p->skip, emul ? "" : ", single-stepped");
	return 0;
}

/*
 * Scan one ELF file for the wanted functions (.symtab when present, else
 * .dynsym); add a probe for each found. *needs_libc is set when the file
 * names libc.so.6 in DT_NEEDED.
 */
static int scan_elf(const char *path, const struct want *wants, size_t n_wants, bool rust,
		    struct alloc_syms *s, bool *needs_libc, bool *needs_cxx)
{
	bool found[8] = { false };
	bool push_only = wants == cxx_wants, glibc = false;
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL, *dynamic = NULL;
	Elf *elf;
	int fd, err = 0;

	fd = infile__open(path, 0, NULL);
	if (fd < 0) {
		pr_err("cannot open %s: %s", path, strerror(-fd));
		return fd;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		pr_err("%s: not an ELF file", path);
		err = -ENOEXEC;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		else if (sh.sh_type == SHT_DYNAMIC)
			dynamic = scn;
	}
	if (needs_libc && dynamic) {
		GElf_Shdr sh;
		Elf_Data *d = elf_getdata(dynamic, NULL);

		gelf_getshdr(dynamic, &sh);
		for (size_t i = 0; d && i < sh.sh_size / sizeof(GElf_Dyn); i++) {
			GElf_Dyn dyn;
			const char *lib;

			if (!gelf_getdyn(d, i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			lib = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (lib && !strncmp(lib, "libc.so", 7))
				*needs_libc = true;
			if (lib && needs_cxx && !strncmp(lib, "libstdc++.so", 12))
				*needs_cxx = true;
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		Elf_Scn *tab = pass == 0 ? symtab : dynsym;
		Elf_Data *d;
		GElf_Shdr sh;

		if (!tab || !gelf_getshdr(tab, &sh) || !(d = elf_getdata(tab, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			uint64_t off;

			if (!gelf_getsym(d, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name)
				continue;
			if (!strcmp(name, "__libc_free"))
				glibc = true;
			for (size_t w = 0; w < n_wants; w++) {
				bool m = rust ? rust_name_matches(name, wants[w].name)
					      : !strcmp(name, wants[w].name);

				if (!m || found[w])
					continue;
				if (vaddr_to_offset(elf, sym.st_value, &off))
					continue;
				found[w] = true;
				err = add_probe(s, path, name, off, sym.st_size, &wants[w], fd, push_only);
				if (err)
					goto out;
			}
		}
	}
	/* glibc's free, whose blocks carry glibc's chunk header (bpf/heap.bpf.c) */
	for (size_t w = 0; w < n_wants; w++)
		if (found[w] && wants[w].kind == HEAP_KIND_FREE && glibc)
			s->glibc_free = true;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/* Allocator libraries that replace malloc when linked (DT_NEEDED). */
static const char *const alloc_libs[] = {
	"libjemalloc.so", "libtcmalloc", "libmimalloc.so", "libhoard.so", "libsnmalloc",
	"librpmalloc.so", "libtbbmalloc",
};

bool alloc_syms__is_alloc_lib(const char *base)
{
	for (size_t k = 0; k < sizeof(alloc_libs) / sizeof(alloc_libs[0]); k++)
		if (!strncmp(base, alloc_libs[k], strlen(alloc_libs[k])))
			return true;
	return false;
}

/* Symbol prefixes of allocators linked into an executable, and their names. */
static const struct {
	const char *prefix, *name;
} alloc_marks[] = {
	{ "_rjem_", "jemalloc" }, { "je_malloc", "jemalloc" }, { "mallocx", "jemalloc" },
	{ "mi_malloc", "mimalloc" }, { "tc_malloc", "tcmalloc" }, { "rpmalloc", "rpmalloc" },
	{ "sn_malloc", "snmalloc" },
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void inspect_sym(struct alloc_exe *x, const char *name, bool dynsym, bool defined,
			bool *rdl)
{
	if (!defined)
		return;
	if (dynsym && (!strcmp(name, "malloc") || !strcmp(name, "free")))
		x->own_malloc = true;
	if (rust_name_matches(name, "__rust_alloc"))
		x->rust = true;
	if (rust_name_matches(name, "__rdl_alloc"))
		*rdl = true;
	if (rust_name_matches(name, "__rg_alloc"))
		x->rust_global = true;
	for (size_t i = 0; i < N_OF(alloc_marks) && !x->alloc_name[0]; i++)
		if (!strncmp(name, alloc_marks[i].prefix, strlen(alloc_marks[i].prefix)))
			snprintf(x->alloc_name, sizeof(x->alloc_name), "%s", alloc_marks[i].name);
}

int alloc_syms__inspect(const char *exe, struct alloc_exe *x)
{
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	bool rdl = false;
	size_t nph;
	int fd;

	memset(x, 0, sizeof(*x));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	fd = infile__open(exe, 0, NULL);
	if (fd < 0) {
		pr_err("cannot open %s: %s", exe, strerror(-fd));
		return fd;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nph))
		goto out;	/* not ELF (a script): is_elf stays false */
	x->is_elf = true;
	x->is_static = true;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_INTERP)
			x->is_static = false;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)))
			continue;
		if (sh.sh_type == SHT_DYNAMIC) {
			for (size_t i = 0; i < sh.sh_size / sizeof(GElf_Dyn); i++) {
				GElf_Dyn dyn;
				const char *lib;

				if (!gelf_getdyn(d, i, &dyn) || dyn.d_tag != DT_NEEDED)
					continue;
				lib = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
				for (size_t k = 0; lib && k < N_OF(alloc_libs); k++)
					if (!strncmp(lib, alloc_libs[k], strlen(alloc_libs[k])))
						snprintf(x->alloc_lib, sizeof(x->alloc_lib), "%s", lib);
			}
		} else if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) && sh.sh_entsize) {
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *name;

				if (!gelf_getsym(d, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
					continue;
				name = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (name)
					inspect_sym(x, name, sh.sh_type == SHT_DYNSYM,
						    sym.st_shndx != SHN_UNDEF && sym.st_value, &rdl);
			}
		}
	}
	/* rustc inlines a #[global_allocator] into __rust_alloc: no __rdl_alloc left */
	if (x->rust && !rdl)
		x->rust_global = true;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return 0;
}

static int own_libc_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = strrchr(info->dlpi_name, '/');

	if (base && !strncmp(base + 1, "libc.so", 7)) {
		snprintf(data, PATH_MAX, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

/* A library of a running target (libc, libstdc++), from its mappings. */
static int target_lib(pid_t pid, const char *prefix, char *path)
{
	struct maps *m = NULL;
	int err = maps__load(pid, &m);

	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < m->n; i++) {
		const char *p = m->v[i].path, *base;

		if (!p || m->v[i].perms[2] != 'x' || !(base = strrchr(p, '/')))
			continue;
		if (!strncmp(base + 1, prefix, strlen(prefix)) ||
		    (!strcmp(prefix, "libc.so") && !strncmp(base + 1, "libc-", 5))) {
			snprintf(path, PATH_MAX, "%s", p);
			err = 0;
			break;
		}
	}
	maps__delete(m);
	return err;
}

/* Before exec: libstdc++.so.6 where the libc is (the same multiarch directory). */
static void cxx_beside_libc(const char *libc, char *path, bool *found)
{
	const char *slash = strrchr(libc, '/');

	*found = false;
	if (!slash)
		return;
	snprintf(path, PATH_MAX, "%.*s/libstdc++.so.6", (int)(slash - libc), libc);
	*found = !access(path, R_OK);
}

/*
 * The allocator library exe links (DT_NEEDED libjemalloc.so.2...), which
 * defines the malloc it calls: into path (which holds the libc) when found,
 * from the target's mappings, else beside the libc.
 */
static void alloc_lib(const char *exe, pid_t pid, bool before_exec, char *path)
{
	struct alloc_exe x;
	char lib[PATH_MAX];
	const char *slash;

	if (alloc_syms__inspect(exe, &x) || !x.alloc_lib[0])
		return;
	if (pid > 0 && !before_exec) {
		char prefix[64];

		snprintf(prefix, sizeof(prefix), "%.*s", (int)strcspn(x.alloc_lib, "."), x.alloc_lib);
		if (!target_lib(pid, prefix, lib)) {
			snprintf(path, PATH_MAX, "%s", lib);
			pr_debug(1, "heap: %s links %s: its malloc", exe, lib);
		}
		return;
	}
	slash = strrchr(path, '/');
	if (!slash)
		return;
	snprintf(lib, sizeof(lib), "%.*s/%s", (int)(slash - path), path, x.alloc_lib);
	if (!access(lib, R_OK)) {
		snprintf(path, PATH_MAX, "%s", lib);
		pr_debug(1, "heap: %s links %s: its malloc", exe, lib);
	}
}

static size_t count_kind(const struct alloc_syms *s, bool is_free)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += s->v[i].is_free == is_free;
	return n;
}

static void clear(struct alloc_syms *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].name);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
	s->glibc_free = false;
}

/*
 * A running target's file as the target sees it: through /proc/PID/root
 * (a process in another mount namespace, a container, has other files at
 * the same paths). The kernel resolves the probe's path there to the
 * target's own inode.
 */
static void rooted(pid_t pid, bool before_exec, char *path)
{
	char fn[PATH_MAX];

	if (pid <= 0 || before_exec || path[0] != '/')
		return;
	if (snprintf(fn, sizeof(fn), "/proc/%d/root%s", (int)pid,
		     proc__root_relative(pid, path)) < (int)sizeof(fn) &&
	    !access(fn, R_OK))
		snprintf(path, PATH_MAX, "%s", fn);
}

int alloc_syms__find(const char *exe_path, pid_t pid, bool before_exec,
		     enum heap_probes which, struct alloc_syms **out)
{
	struct alloc_syms *s;
	bool needs_libc = false, needs_cxx = false;
	char libc[PATH_MAX], cxx[PATH_MAX], exe[PATH_MAX];
	int err;

	*out = NULL;
	snprintf(exe, sizeof(exe), "%s", exe_path);
	rooted(pid, before_exec, exe);
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (which != HEAP_PROBES_LIBC) {
		err = scan_elf(exe, rust_wants, N_WANTS(rust_wants), true, s, NULL, NULL);
		if (err)
			goto fail;
		/* both sides are needed: allocations without frees would all look live */
		if (count_kind(s, false) && count_kind(s, true)) {
			s->family = "rust";
			*out = s;
			return 0;
		}
		clear(s);
		if (which == HEAP_PROBES_RUST) {
			pr_err("no Rust allocator (__rust_alloc, __rust_dealloc) in %s", exe);
			pr_hint("use --heap-probes=libc for a program that is not Rust");
			err = -RSPROF_ENODEBUG;
			goto fail;
		}
	}
	s->family = "libc";
	/* a static executable carries its own malloc */
	err = scan_elf(exe, libc_wants, N_WANTS(libc_wants), false, s, &needs_libc, &needs_cxx);
	if (err)
		goto fail;
	if (!(count_kind(s, false) && count_kind(s, true))) {
		clear(s);
		err = -ENOENT;
		if (pid > 0 && !before_exec && !(err = target_lib(pid, "libc.so", libc)))
			rooted(pid, before_exec, libc);
		if (err && (needs_libc || pid > 0))
			err = dl_iterate_phdr(own_libc_cb, libc) ? 0 : -ENOENT;
		/* an allocator library it links (jemalloc...) has the malloc it calls */
		if (!err)
			alloc_lib(exe, pid, before_exec, libc);
		if (!err)
			err = scan_elf(libc, libc_wants, N_WANTS(libc_wants), false, s, NULL, NULL);
		if (!err && !(count_kind(s, false) && count_kind(s, true)))
			err = -ENOENT;
		if (err) {
			if (err == -ENOENT) {
				pr_err("no allocator symbol (Rust __rust_alloc or libc malloc) found for %s",
				       exe);
				pr_hint("heap tracking needs the target's allocator symbols; use --no-heap");
				err = -RSPROF_ENODEBUG;
			}
			goto fail;
		}
	}
	/* C++: operator new in the libstdc++ the target maps or will load */
	if (pid > 0 && !before_exec) {
		needs_cxx = !target_lib(pid, "libstdc++.so", cxx);
		if (needs_cxx)
			rooted(pid, before_exec, cxx);
	} else if (needs_cxx && s->n)
		cxx_beside_libc(s->v[0].path, cxx, &needs_cxx);
	if (needs_cxx) {
		err = scan_elf(cxx, cxx_wants, N_WANTS(cxx_wants), false, s, NULL, NULL);
		if (err)
			goto fail;
	}
	*out = s;
	return 0;
fail:
	alloc_syms__delete(s);
	return err;
}

void alloc_syms__delete(struct alloc_syms *s)
{
	if (!s)
		return;
	clear(s);
	free(s);
}
