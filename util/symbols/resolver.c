/*
 * Address to symbol for one target process.
 *
 * Every file-backed executable mapping (of /proc/PID/maps, or of the
 * mappings the recorder builds from perf's mmap2 records) is reported to
 * libdwfl with dwfl_report_elf() and its own load bias, computed from the
 * mapping and the ELF program headers (PIE, non-PIE, ASLR). We do not use
 * dwfl_linux_proc_report(): the modules come from our own maps snapshot, so
 * resolution keeps working after the target has exited (the recorder
 * resolves its last checkpoint then). Files are found by util/symbols/
 * symfile.c (the target's root, build-ids, every debug-file rule). Code in
 * no file (a JIT's) is named from /tmp/perf-PID.map when the JIT writes
 * one. Results are cached per address.
 */
#include "util/symbols/resolver.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "preload/heap-region.h"
#include "util/array.h"
#include "util/infile.h"
#include "util/symbols/demangle.h"
#include "util/symbols/dwarf.h"
#include "util/symbols/filepages.h"
#include "util/symbols/frame-pointers.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/record/maps.h"
#include "util/symbols/symcache.h"
#include "util/symbols/symfile.h"
#include "util/symbols/symtab.h"
#include "util/unwind/elf-cfi.h"

/* One reported module: a file at one load bias. */
struct module {
	char *path;
	uint64_t bias;
	Dwfl_Module *mod;
	bool dwarf;		/* look up DWARF lines (see resolver__report()) */
	struct symtab *symtab;	/* loaded at the first symbol-table lookup */
	bool symtab_loaded;
	struct cfi_module cfi;	/* its call frame information (hdr NULL: none) */
	bool cfi_loaded;
	/* the file read, for a module without a build-id (util/symbols/symcache.h):
	 * "stat", device, inode, size and modification time; 0 bytes: unknown */
	unsigned char file_id[4 + 3 * 8 + 16];
	int file_id_len;
	uint64_t share_hash;	/* symcache__file_hash() of its key; 0: not yet */
};

_Static_assert(sizeof(((struct stat *)0)->st_mtim) == 16, "file_id holds st_mtim");

struct resolver {
	pid_t pid;
	bool fed;			/* maps given by the caller (resolver__new_maps) */
	struct symfile_ctx fctx;	/* libdwfl module userdata: whose files */
	struct maps *maps;
	char *exe;			/* readlink /proc/PID/exe at start */
	Dwfl *dwfl;
	struct module *mods;
	size_t n_mods, alloc_mods;
	struct dwarf_index *index;
	struct hashmap cache;		/* addr -> struct symbol * */
	struct hashmap rules;		/* code address -> its CFI rule | RULE_KNOWN */
	/* symbols taken out of the cache by a refresh, freed at delete */
	struct symbol **stale;
	size_t n_stale, alloc_stale;
	/* a JIT's /tmp/perf-PID.map, read at the first address in no file */
	struct symtab *perf_map;
	char perf_map_path[PATH_MAX];
	long long perf_map_size;	/* the file's size when read; -1: none */
};

static char *debuginfo_path;

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = symfile__find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Does the file itself carry DWARF line tables? */
static bool elf_has_lines(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && (!strcmp(name, ".debug_line") || !strcmp(name, ".zdebug_line")))
			return true;
	}
	return false;
}

/*
 * The load bias of the file mapped by m: the PT_LOAD segment whose file
 * range holds m->pgoff is loaded at m->start, so bias = m->start - vaddr of
 * that file offset. 0 for ET_EXEC. -ENOENT when no segment matches.
 * *has_lines: the file has DWARF line tables of its own.
 */
static int elf_inspect(int fd, const struct map *m, uint64_t *bias, bool *has_lines)
{
	GElf_Ehdr ehdr;
	size_t phnum;
	int err = -ENOENT;
	Elf *elf;

	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EINVAL;
	if (!gelf_getehdr(elf, &ehdr) || elf_getphdrnum(elf, &phnum)) {
		err = -EINVAL;
		goto out;
	}
	*has_lines = elf_has_lines(elf);
	if (ehdr.e_type == ET_EXEC) {
		*bias = 0;
		err = 0;
		goto out;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		uint64_t page_off;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		page_off = ph.p_offset & ~(uint64_t)(4096 - 1);
		if (m->pgoff < page_off || m->pgoff >= ph.p_offset + ph.p_filesz)
			continue;
		/* segments may share a page: the executable one wins */
		if (err || (ph.p_flags & PF_X)) {
			*bias = m->start - m->pgoff - (ph.p_vaddr - ph.p_offset);
			err = 0;
		}
		if (ph.p_flags & PF_X)
			break;
	}
out:
	elf_end(elf);
	return err;
}

/*
 * The [vdso] as a file: the kernel maps the same image into every process,
 * so our own copy (AT_SYSINFO_EHDR) goes into a memfd that libdwfl reads
 * like any library; its .dynsym names clock_gettime & co (Rust's
 * Instant::now() spends its time there).
 */
static int vdso_fd(const struct map *m)
{
	const void *image = (const void *)getauxval(AT_SYSINFO_EHDR);
	size_t len = m->end - m->start;
	int fd;

	if (!image || len > (1 << 20))
		return -ENOENT;
	fd = memfd_create("rsprof-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, image, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	return fd;
}

static bool resolver__known(const struct resolver *r, const char *path, uint64_t bias)
{
	for (size_t i = 0; i < r->n_mods; i++)
		if (r->mods[i].bias == bias && !strcmp(r->mods[i].path, path))
			return true;
	return false;
}

/*
 * Report each new file-backed executable mapping. Call between report
 * begin/end.
 *
 * Every module gets the same rules: DWARF wherever it is found, else its
 * symbol table.
 */
static int resolver__report(struct resolver *r)
{
	for (size_t i = 0; i < r->maps->n; i++) {
		const struct map *m = &r->maps->v[i];
		struct module *mod;
		Dwfl_Module *dm;
		struct stat st;
		uint64_t bias;
		bool lines = false;
		int fd, err;

		if (!m->path || m->perms[2] != 'x' || !strncmp(m->path, "/memfd:", 7))
			continue;	/* no file to read (the injected heap tracker's: one row) */
		if (!strcmp(m->path, "[vdso]"))
			fd = vdso_fd(m);
		else if (m->path[0] == '/')
			fd = symfile__open_mapped(r->pid, m);
		else
			continue;
		if (fd < 0) {
			pr_debug(1, "cannot open %s: %s", m->path, strerror(-fd));
			continue;
		}
		err = elf_inspect(fd, m, &bias, &lines);
		if (!err && fstat(fd, &st))
			st.st_ino = 0;
		if (err || resolver__known(r, m->path, bias)) {
			if (err)
				pr_debug(1, "%s: no load segment at offset %#llx", m->path,
					 (unsigned long long)m->pgoff);
			close(fd);
			continue;
		}
		dm = dwfl_report_elf(r->dwfl, m->path, m->path, fd, bias, true);
		if (!dm) {
			pr_debug(1, "%s: %s", m->path, dwfl_errmsg(-1));
			close(fd);
			continue;
		}
		/* symfile__find_debuginfo() looks in the target's root */
		{
			void **ud = NULL;

			dwfl_module_info(dm, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
			if (ud)
				*ud = &r->fctx;
		}
		if (ALLOC_GROW(r->mods, r->n_mods + 1, r->alloc_mods, 16))
			return -ENOMEM;
		mod = &r->mods[r->n_mods];
		memset(mod, 0, sizeof(*mod));
		mod->path = strdup(m->path);
		if (!mod->path)
			return -ENOMEM;
		mod->bias = bias;
		mod->mod = dm;
		if (st.st_ino && S_ISREG(st.st_mode)) {
			unsigned char *p = mod->file_id;
			uint64_t f[3] = { st.st_dev, st.st_ino, (uint64_t)st.st_size };

			memcpy(p, "stat", 4);
			memcpy(p + 4, f, sizeof(f));
			memcpy(p + 4 + sizeof(f), &st.st_mtim, sizeof(st.st_mtim));
			mod->file_id_len = (int)(4 + sizeof(f) + sizeof(st.st_mtim));
		}
		/*
		 * DWARF for every module, wherever its debug information is (in
		 * the file, by build-id, by debuglink...): looked up at the first
		 * address in it. libc's (libc6-dbg) is compressed and costs ~0.4 s
		 * to read once, when a sample falls there.
		 */
		mod->dwarf = true;
		(void)lines;
		r->n_mods++;
	}
	return 0;
}

/* Report r->maps to a new Dwfl; on error r is deleted. */
static int resolver__start(struct resolver *r, struct resolver **out)
{
	int err = 0;

	r->fctx.pid = r->pid;
	r->perf_map_size = -1;
	r->index = dwarf_index__new();
	r->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!r->index || !r->dwfl)
		err = -ENOMEM;
	if (!err) {
		dwfl_report_begin(r->dwfl);
		err = resolver__report(r);
		if (dwfl_report_end(r->dwfl, NULL, NULL) != 0 && !err)
			err = -EINVAL;
	}
	if (err) {
		resolver__delete(r);
		return err;
	}
	*out = r;
	return 0;
}

int resolver__new(pid_t pid, struct resolver **out)
{
	char fn[64], exe[PATH_MAX];
	struct resolver *r;
	ssize_t n;
	int err;

	*out = NULL;
	elf_version(EV_CURRENT);
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->pid = pid;
	err = maps__load(pid, &r->maps);
	if (err) {
		resolver__delete(r);
		return err;
	}
	snprintf(fn, sizeof(fn), "/proc/%d/exe", (int)pid);
	n = readlink(fn, exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		r->exe = strdup(exe);
	}
	return resolver__start(r, out);
}

int resolver__new_offline(struct maps *maps, const char *exe, struct resolver **out)
{
	struct resolver *r;

	*out = NULL;
	elf_version(EV_CURRENT);
	r = calloc(1, sizeof(*r));
	if (!r) {
		maps__delete(maps);
		return -ENOMEM;
	}
	r->maps = maps;
	r->exe = exe ? strdup(exe) : NULL;
	if (exe && !r->exe) {
		resolver__delete(r);
		return -ENOMEM;
	}
	return resolver__start(r, out);
}

int resolver__new_maps(pid_t pid, const char *exe, struct maps *m, struct resolver **out)
{
	struct resolver *r;

	*out = NULL;
	elf_version(EV_CURRENT);
	r = calloc(1, sizeof(*r));
	if (!r) {
		maps__delete(m);
		return -ENOMEM;
	}
	r->pid = pid;
	r->fed = true;
	r->maps = m;
	if (exe && !(r->exe = strdup(exe))) {
		resolver__delete(r);
		return -ENOMEM;
	}
	return resolver__start(r, out);
}

void resolver__delete(struct resolver *r)
{
	if (!r)
		return;
	hashmap__for_each(&r->cache, i)
		symbol__delete((struct symbol *)(uintptr_t)r->cache.vals[i]);
	if (r->cache.has_zero)
		symbol__delete((struct symbol *)(uintptr_t)r->cache.zero);
	hashmap__free(&r->cache);
	hashmap__free(&r->rules);
	for (size_t i = 0; i < r->n_stale; i++)
		symbol__delete(r->stale[i]);
	free(r->stale);
	dwarf_index__delete(r->index);
	if (r->dwfl)
		dwfl_end(r->dwfl);
	for (size_t i = 0; i < r->n_mods; i++) {
		free(r->mods[i].path);
		symtab__delete(r->mods[i].symtab);
	}
	free(r->mods);
	free(r->exe);
	maps__delete(r->maps);
	symtab__delete(r->perf_map);
	free(r);
}

/*
 * Take symbols out of the cache (every one, or the unresolved ones) so that
 * their addresses are looked up again. Callers may still hold them (they
 * live until resolver__delete(), says resolver.h): they are kept aside.
 */
static bool evicted(const struct symbol *s, bool all)
{
	return all || !s->module;
}

static int resolver__evict(struct resolver *r, bool all)
{
	struct hashmap keep = { 0 };
	struct symbol *zero = (struct symbol *)(uintptr_t)r->cache.zero;
	size_t n = 0;

	hashmap__for_each(&r->cache, i)
		n += evicted((struct symbol *)(uintptr_t)r->cache.vals[i], all);
	n += r->cache.has_zero && evicted(zero, all);
	if (r->n_stale + n > r->alloc_stale) {
		size_t na = 2 * (r->n_stale + n);
		struct symbol **v = realloc(r->stale, na * sizeof(*v));

		if (!v)
			return -ENOMEM;	/* they stay cached: no harm but a stale answer */
		r->stale = v;
		r->alloc_stale = na;
	}
	hashmap__for_each(&r->cache, i) {
		struct symbol *s = (struct symbol *)(uintptr_t)r->cache.vals[i];

		if (!evicted(s, all)) {
			if (hashmap__set(&keep, r->cache.keys[i], r->cache.vals[i]))
				goto nomem;
		}
	}
	if (r->cache.has_zero && !evicted(zero, all) && hashmap__set(&keep, 0, r->cache.zero))
		goto nomem;
	hashmap__for_each(&r->cache, i) {
		struct symbol *s = (struct symbol *)(uintptr_t)r->cache.vals[i];

		if (evicted(s, all))
			r->stale[r->n_stale++] = s;
	}
	if (r->cache.has_zero && evicted(zero, all))
		r->stale[r->n_stale++] = zero;
	hashmap__free(&r->cache);
	r->cache = keep;
	return 0;
nomem:
	hashmap__free(&keep);
	return -ENOMEM;
}

/* Forget every module: the process has run execve(). */
static int resolver__reset(struct resolver *r, const char *exe)
{
	char *e = strdup(exe);
	int err;

	if (!e)
		return -ENOMEM;
	free(r->exe);
	r->exe = e;
	for (size_t i = 0; i < r->n_mods; i++) {
		free(r->mods[i].path);
		symtab__delete(r->mods[i].symtab);
	}
	r->n_mods = 0;
	hashmap__clear(&r->rules);
	dwarf_index__delete(r->index);
	r->index = dwarf_index__new();
	dwfl_end(r->dwfl);
	r->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!r->index || !r->dwfl)
		return -ENOMEM;
	err = resolver__evict(r, true);
	dwfl_report_begin(r->dwfl);
	return err;
}

/*
 * Between dwfl_report_begin(_add) and the end: report the modules of
 * r->maps; when some are new (n_mods before), unresolved cached addresses
 * may be in a library mapped since (dlopen): looked up again.
 */
static int resolver__report_new(struct resolver *r, size_t n_mods)
{
	int err = resolver__report(r);

	if (dwfl_report_end(r->dwfl, NULL, NULL) != 0 && !err)
		err = -EINVAL;
	if (err || r->n_mods == n_mods)
		return err;
	return resolver__evict(r, false);
}

int resolver__refresh_maps(struct resolver *r)
{
	size_t n_mods = r->n_mods;
	char fn[64], exe[PATH_MAX];
	struct maps *m;
	ssize_t n;
	int err;

	if (!r->dwfl)		/* a reset after an exec ran out of memory */
		return -ENOMEM;
	if (r->fed)		/* the caller gives the mappings (resolver__set_maps) */
		return 0;
	err = maps__load(r->pid, &m);
	if (err)
		return err;
	maps__delete(r->maps);
	r->maps = m;
	snprintf(fn, sizeof(fn), "/proc/%d/exe", (int)r->pid);
	n = readlink(fn, exe, sizeof(exe) - 1);
	if (n > 0)
		exe[n] = '\0';
	if (n > 0 && r->exe && strcmp(exe, r->exe)) {
		pr_debug(1, "process %d is now %s", (int)r->pid, exe);
		err = resolver__reset(r, exe);
		if (err)
			return err;
	} else {
		dwfl_report_begin_add(r->dwfl);
	}
	return resolver__report_new(r, n_mods);
}

int resolver__set_maps(struct resolver *r, struct maps *m)
{
	if (!r->dwfl) {
		maps__delete(m);
		return -ENOMEM;
	}
	maps__delete(r->maps);
	r->maps = m;
	dwfl_report_begin_add(r->dwfl);
	return resolver__report_new(r, r->n_mods);
}

/* glibc's hidden internal aliases (__GI_getpid) read as the public name. */
static const char *symtab_name(const char *name)
{
	return strncmp(name, "__GI_", 5) || !name[5] ? name : name + 5;
}

static struct module *resolver__module(struct resolver *r, Dwfl_Module *mod)
{
	for (size_t i = 0; i < r->n_mods; i++)
		if (r->mods[i].mod == mod)
			return &r->mods[i];
	return NULL;
}

/*
 * The function symbols of m, loaded at the first use; NULL when there are
 * none (a stripped executable's .dynsym holds only imports).
 */
static const struct symtab *module__symtab(struct module *m)
{
	if (!m)
		return NULL;
	if (!m->symtab_loaded) {
		m->symtab = symtab__new(m->mod);
		m->symtab_loaded = true;
	}
	return m->symtab;
}

/* The symbol table name of the function at addr, or NULL. */
static const char *module__symname(struct module *m, uint64_t addr)
{
	return symtab__find(module__symtab(m), addr);
}

/*
 * frame->function from a symbol table name: demangled, or as is, without
 * the symbol version of a versioned name ("clock_gettime@@GLIBC_2.17").
 */
static int frame__set_symname(struct frame *f, const char *name)
{
	size_t len = strcspn(symtab_name(name), "@");
	char *plain = strndup(symtab_name(name), len);
	char *d;

	if (!plain)
		return -ENOMEM;
	d = demangle(plain);
	if (d)
		free(plain);
	else
		d = plain;
	/* a PLT stub (util/symbols/plt.h) keeps its "@plt", as perf shows it */
	if (!strcmp(symtab_name(name) + len, "@plt")) {
		char *p = NULL;

		if (asprintf(&p, "%s@plt", d) < 0)
			p = NULL;
		free(d);
		if (!p)
			return -ENOMEM;
		d = p;
	}
	f->function = d;
	return 0;
}

const struct map *resolver__map_of(const struct resolver *r, uint64_t addr)
{
	return r && r->maps ? maps__find(r->maps, addr) : NULL;
}

/* CPU time spent tracking the heap: the tracker's code, the uprobe trampoline. */
#define RSPROF_HEAP_TRACKING "[rsprof heap tracking]"

static bool is_heap_tracker(const char *path)
{
	static const char memfd[] = "/memfd:" HEAP_REGION_SO ".";
	const char *base = strrchr(path, '/');

	/* preloaded from its file, or injected into a running process from a memfd */
	return !strcmp(base ? base + 1 : path, HEAP_REGION_SO) ||
	       !strncmp(path, memfd, sizeof(memfd) - 1);
}

/*
 * libunwind in a process the tracker is in: the tracker opened it to unwind
 * code without frame pointers (preload/unwind.c), so its time is the
 * tracker's too. (A program using libunwind itself while being tracked has
 * its own unwinding counted there as well.)
 */
static bool is_tracker_unwinder(const struct resolver *r, const char *path)
{
	const char *base = strrchr(path, '/');

	if (strncmp(base ? base + 1 : path, "libunwind.so.", 13) || !r->maps)
		return false;
	for (size_t i = 0; i < r->maps->n; i++)
		if (r->maps->v[i].path && is_heap_tracker(r->maps->v[i].path))
			return true;
	return false;
}

/* The PID of pid inside its own PID namespace (NSpid's last field), or pid. */
static pid_t ns_pid(pid_t pid)
{
	char fn[64], line[256];
	pid_t v = pid;
	FILE *f;

	snprintf(fn, sizeof(fn), "/proc/%d/status", (int)pid);
	f = fopen(fn, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (;;) {
			long n = strtol(p, &end, 10);

			if (end == p)
				break;
			v = (pid_t)n;
			p = end;
		}
		break;
	}
	fclose(f);
	return v;
}

/*
 * A JIT's name for addr from its perf map, as perf reads it: the process's
 * /tmp/perf-PID.map (inside its root and PID namespace while it runs),
 * read again whenever the file has grown.
 */
static const char *resolver__jit_name(struct resolver *r, uint64_t addr)
{
	struct stat st;

	if (r->pid <= 0)
		return NULL;
	if (symfile__pid_alive(r->pid))
		snprintf(r->perf_map_path, sizeof(r->perf_map_path), "/proc/%d/root/tmp/perf-%d.map",
			 (int)r->pid, (int)ns_pid(r->pid));
	if (!r->perf_map_path[0] || stat(r->perf_map_path, &st))
		snprintf(r->perf_map_path, sizeof(r->perf_map_path), "/tmp/perf-%d.map",
			 (int)r->pid);
	if (stat(r->perf_map_path, &st) || !S_ISREG(st.st_mode))
		return NULL;
	if (st.st_size != r->perf_map_size) {
		/* in /tmp: anyone may have put a link or a FIFO there since */
		FILE *f = infile__fopen(r->perf_map_path, INFILE_NOFOLLOW, &st);

		symtab__delete(r->perf_map);
		r->perf_map = f ? symtab__from_text(f, SYMTAB_PERF_MAP) : NULL;
		if (f)
			fclose(f);
		r->perf_map_size = st.st_size;
	}
	return symtab__find(r->perf_map, addr);
}

static struct symbol *resolver__lookup(struct resolver *r, uint64_t addr)
{
	struct symbol *s = calloc(1, sizeof(*s)), *c;
	struct symcache_key shared = { 0 };
	struct module *m;
	Dwfl_Module *mod;
	const char *name;
	char fn[64];
	int err = 0;

	if (!s)
		return NULL;
	s->addr = addr;
	mod = r->dwfl ? dwfl_addrmodule(r->dwfl, addr) : NULL;
	if (!mod) {
		const struct map *map = maps__find(r->maps, addr);

		/* [vdso], anonymous code: no module we can read */
		if (map && map->path && !(s->module = strdup(map->path)))
			goto nomem;
		s->frames = calloc(1, sizeof(*s->frames));
		if (!s->frames)
			goto nomem;
		s->n_frames = 1;
		/* the kernel's page for return probes (ours, when tracking the heap),
		 * the tracker injected into the process (its memfd, named after its
		 * build: the same row every run) */
		if (map && map->path && (!strcmp(map->path, "[uprobes]") ||
					 is_heap_tracker(map->path))) {
			/* one row with the probes' kernel time (checkpoint-writer.c) */
			free(s->module);
			if (!(s->module = strdup(RSPROF_HEAP_TRACKING)) ||
			    !(s->frames[0].function = strdup(RSPROF_HEAP_TRACKING)))
				goto nomem;
			return s;
		}
		/* code in no file: a JIT's, named by its perf map */
		if ((!map || !map->path || map->path[0] != '/') &&
		    (name = resolver__jit_name(r, addr))) {
			snprintf(fn, sizeof(fn), "/tmp/perf-%d.map", (int)r->pid);
			free(s->module);
			if (!(s->module = strdup(fn)) || !(s->mangled = strdup(name)) ||
			    frame__set_symname(&s->frames[0], name))
				goto nomem;
		}
		return s;
	}
	m = resolver__module(r, mod);
	name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	if (!(s->module = strdup(name ? name : "")))
		goto nomem;
	if (is_heap_tracker(s->module) || is_tracker_unwinder(r, s->module)) {
		/* rsprof's in-process tracker: one row, named for what it is, its
		 * module too (not the private directory it was loaded from, another
		 * one each run: a diff would see it come and go) */
		free(s->module);
		if (!(s->module = strdup(RSPROF_HEAP_TRACKING)))
			goto nomem;
		s->frames = calloc(1, sizeof(*s->frames));
		if (!s->frames || !(s->frames[0].function = strdup(RSPROF_HEAP_TRACKING)))
			goto nomem;
		s->n_frames = 1;
		return s;
	}
	/* named already in another process with the same file */
	if (m) {
		Dwarf_Addr start = 0;
		GElf_Addr bid_vaddr;

		dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
		shared = (struct symcache_key){
			.module = s->module, .offset = addr - start, .dwarf = m->dwarf && r->index,
		};
		shared.build_id_len = dwfl_module_build_id(mod, &shared.build_id, &bid_vaddr);
		if (shared.build_id_len <= 0) {
			/* no build-id (Rust's toolchain has none): the file read, by stat */
			shared.build_id = m->file_id;
			shared.build_id_len = m->file_id_len;
		}
		if (!m->share_hash)
			m->share_hash = symcache__file_hash(&shared) | 1;
		shared.file_hash = m->share_hash;
		if ((c = symcache__get(&shared, addr))) {
			symbol__delete(s);
			return c;
		}
	}
	err = m && m->dwarf && r->index ? dwarf__resolve(r->index, mod, addr, s) : -ENOENT;
	if (err == -ENOENT) {
		/* no DWARF: one frame, the function from the symbol table */
		s->frames = calloc(1, sizeof(*s->frames));
		if (!s->frames)
			goto nomem;
		s->n_frames = 1;
		err = 0;
	} else if (err) {
		goto nomem;
	} else {
		s->has_debuginfo = true;
	}
	/* C has no linkage names in DWARF: the ELF symbol is the outer function */
	if (!s->mangled && (name = module__symname(m, addr)) && !(s->mangled = strdup(name)))
		goto nomem;
	if (!s->frames[s->n_frames - 1].function && s->mangled &&
	    frame__set_symname(&s->frames[s->n_frames - 1], s->mangled))
		goto nomem;
	if (m)
		symcache__put(&shared, s);
	return s;
nomem:
	symbol__delete(s);
	return NULL;
}

const struct symbol *resolver__resolve(struct resolver *r, uint64_t addr)
{
	struct symbol *s;
	uint64_t v;

	if (hashmap__get(&r->cache, addr, &v))
		return (struct symbol *)(uintptr_t)v;
	s = resolver__lookup(r, addr);
	if (!s)
		return NULL;
	if (hashmap__set(&r->cache, addr, (uint64_t)(uintptr_t)s)) {
		symbol__delete(s);
		return NULL;
	}
	return s;
}

/* The executable's module: by its path, else the lowest executable mapping. */
static Dwfl_Module *main_module(struct resolver *r)
{
	for (size_t i = 0; i < r->n_mods; i++)
		if (r->exe && !strcmp(r->mods[i].path, r->exe))
			return r->mods[i].mod;
	return r->n_mods ? r->mods[0].mod : NULL;
}

int resolver__frame_pointers(struct resolver *r, struct fp_census *c)
{
	Dwfl_Module *m = main_module(r);

	if (!m) {
		memset(c, 0, sizeof(*c));
		return -ENOENT;
	}
	return frame_pointers__census(m, c);
}

int resolver__check_debuginfo(struct resolver *r)
{
	Dwfl_Module *main_mod = main_module(r);

	if (!main_mod)
		return -RSPROF_ENODEBUG;
	if (dwarf__has_own_lines(main_mod) == 0)
		return 0;
	if (symtab__functions(module__symtab(resolver__module(r, main_mod))))
		return 1;
	return -RSPROF_ENODEBUG;
}

void resolver__release_pages(struct resolver *r)
{
	for (size_t i = 0; r && i < r->n_mods; i++) {
		Dwfl_Module *mod = r->mods[i].mod;
		const char *debugfile = NULL;
		GElf_Addr bias;
		Dwarf *dw;

		filepages__release_elf(dwfl_module_getelf(mod, &bias));
		/* the debug file only when it is open already: never open one here */
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
		if (debugfile && (dw = dwfl_module_getdwarf(mod, &bias)))
			filepages__release_elf(dwarf_getelf(dw));
	}
}

#define RULE_KNOWN	(1ULL << 63)

uint64_t resolver__cfi_rule(struct resolver *r, uint64_t pc)
{
	Dwfl_Module *dm;
	struct module *m;
	uint64_t rule;

	if (hashmap__get(&r->rules, pc, &rule))
		return rule & ~RULE_KNOWN;
	dm = r->dwfl ? dwfl_addrmodule(r->dwfl, pc) : NULL;
	m = dm ? resolver__module(r, dm) : NULL;
	if (!m)
		return CFI_OTHER;	/* generated code, a file we cannot open: not kept */
	if (!m->cfi_loaded) {
		GElf_Addr bias;
		Elf *elf = dwfl_module_getelf(dm, &bias);

		m->cfi_loaded = true;
		if (!elf || elf_cfi__load(elf, &m->cfi))
			memset(&m->cfi, 0, sizeof(m->cfi));
	}
	rule = m->cfi.hdr ? cfi__rule(&m->cfi, pc - m->bias) : CFI_OTHER;
	hashmap__set(&r->rules, pc, rule | RULE_KNOWN);	/* no memory: asked again */
	return rule;
}

const struct maps *resolver__maps(const struct resolver *r)
{
	return r ? r->maps : NULL;
}

/* The bytes of the executable section holding [vaddr, vaddr + len) in the file, or NULL. */
static const unsigned char *elf_code_bytes(Elf *elf, uint64_t vaddr, uint64_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || vaddr < sh.sh_addr ||
		    vaddr + len > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return NULL;
		return (const unsigned char *)d->d_buf + (vaddr - sh.sh_addr);
	}
	return NULL;
}

int resolver__code(struct resolver *r, uint64_t addr, struct code_range *out)
{
	Dwfl_Module *mod = r->dwfl ? dwfl_addrmodule(r->dwfl, addr) : NULL;
	struct module *m = mod ? resolver__module(r, mod) : NULL;
	uint64_t start, end;
	GElf_Addr bias;
	const char *name;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	if (!m)
		return -ENOENT;
	name = symtab__find_range(module__symtab(m), addr, &start, &end);
	elf = dwfl_module_getelf(mod, &bias);
	if (!name || !elf || end <= start || end - start > (64u << 20))
		return -ENOENT;
	out->bytes = elf_code_bytes(elf, start - bias, end - start);
	if (!out->bytes)
		return -ENOENT;
	out->start = start;
	out->end = end;
	out->name = name;
	out->module = m->path;
	return 0;
}
