/*
 * Address to inline chain through libdw.
 *
 * A code address of an optimised program usually sits inside several
 * inlined functions: in Rust the innermost one is nearly always core's
 * (wrapping_mul, Range::next, slice indexing). The line table gives the
 * innermost file:line; the DW_TAG_inlined_subroutine DIEs that contain the
 * address give, through DW_AT_call_file/DW_AT_call_line, where each inlined
 * function was called in the function around it. We keep the whole chain and
 * pick the first frame outward that is not toolchain source.
 */
#include "util/symbols/dwarf.h"

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "util/array.h"
#include "util/symbols/demangle.h"
#include "util/symbols/srcpath.h"
#include "util/symbols/symbol.h"

/* One address range of one function (DW_TAG_subprogram with code). */
struct fn_range {
	Dwarf_Addr lo, hi;	/* [lo, hi), module (DWARF) addresses */
	Dwarf_Off off;		/* DIE offset in .debug_info */
};

struct cu_index {
	Dwfl_Module *mod;
	Dwarf_Off cu_off;
	struct fn_range *v;
	size_t n, alloc;
};

struct dwarf_index {
	struct cu_index *cus;
	size_t n, alloc;
	size_t last;		/* the unit of the previous lookup, tried first */
	/*
	 * Per module, the address ranges of its units (fn_range.off is the
	 * unit DIE's offset), for DWARF without .debug_aranges: clang does
	 * not write it, and libdwfl 0.188 then finds no unit for an address.
	 */
	struct cu_index *units;
	size_t n_units, alloc_units;
};

struct dwarf_index *dwarf_index__new(void)
{
	return calloc(1, sizeof(struct dwarf_index));
}

void dwarf_index__delete(struct dwarf_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->n; i++)
		free(ix->cus[i].v);
	free(ix->cus);
	for (size_t i = 0; i < ix->n_units; i++)
		free(ix->units[i].v);
	free(ix->units);
	free(ix);
}

static int cu_index__add(struct cu_index *ci, Dwarf_Addr lo, Dwarf_Addr hi, Dwarf_Off off)
{
	if (ALLOC_GROW(ci->v, ci->n + 1, ci->alloc, 64))
		return -ENOMEM;
	ci->v[ci->n++] = (struct fn_range){ lo, hi, off };
	return 0;
}

/*
 * Every function with code in the subtree of die: subprograms with code sit
 * at unit level (C, C++ members: the class holds only the declaration) or
 * in namespaces (Rust puts every function in its module's and impl's
 * namespace). Types and function bodies are not entered.
 */
static int cu_index__scan(struct cu_index *ci, Dwarf_Die *die)
{
	Dwarf_Die child;
	int err, rc;

	if (dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				err = cu_index__add(ci, lo, hi, dwarf_dieoffset(&child));
				if (err)
					return err;
			}
		} else if (tag == DW_TAG_namespace || tag == DW_TAG_module) {
			err = cu_index__scan(ci, &child);
			if (err)
				return err;
		}
	} while ((rc = dwarf_siblingof(&child, &child)) == 0);
	return 0;
}

static int fn_range__cmp(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* the smaller range first, so the search finds the innermost */
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static struct cu_index *dwarf_index__cu(struct dwarf_index *ix, Dwfl_Module *mod,
					Dwarf_Die *cudie)
{
	Dwarf_Off off = dwarf_dieoffset(cudie);
	struct cu_index *ci;

	if (ix->last < ix->n && ix->cus[ix->last].mod == mod && ix->cus[ix->last].cu_off == off)
		return &ix->cus[ix->last];
	for (size_t i = 0; i < ix->n; i++) {
		if (ix->cus[i].mod == mod && ix->cus[i].cu_off == off) {
			ix->last = i;
			return &ix->cus[i];
		}
	}
	if (ALLOC_GROW(ix->cus, ix->n + 1, ix->alloc, 16))
		return NULL;
	ci = &ix->cus[ix->n];
	memset(ci, 0, sizeof(*ci));
	ci->mod = mod;
	ci->cu_off = off;
	if (cu_index__scan(ci, cudie)) {
		free(ci->v);
		return NULL;
	}
	if (ci->n)
		qsort(ci->v, ci->n, sizeof(*ci->v), fn_range__cmp);
	ix->last = ix->n++;
	return ci;
}

/* The DIE offset of the function whose range holds pc, or 0. */
static Dwarf_Off cu_index__find(const struct cu_index *ci, Dwarf_Addr pc)
{
	size_t lo = 0, hi = ci->n;

	/* the last range with lo <= pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ci->v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges of distinct functions do not overlap; look back a little anyway */
	for (size_t i = lo, k = 0; i > 0 && k < 8; i--, k++)
		if (pc >= ci->v[i - 1].lo && pc < ci->v[i - 1].hi)
			return ci->v[i - 1].off;
	return 0;
}

/* The ranges of every unit of mod (only unit DIEs are read). */
static struct cu_index *dwarf_index__units(struct dwarf_index *ix, Dwfl_Module *mod, Dwarf *dbg)
{
	Dwarf_Off off = 0, next;
	struct cu_index *u;
	size_t hsize;

	for (size_t i = 0; i < ix->n_units; i++)
		if (ix->units[i].mod == mod)
			return &ix->units[i];
	if (ALLOC_GROW(ix->units, ix->n_units + 1, ix->alloc_units, 8))
		return NULL;
	u = &ix->units[ix->n_units];
	memset(u, 0, sizeof(*u));
	u->mod = mod;
	while (dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t r = 0;
		Dwarf_Die cudie;

		if (dwarf_offdie(dbg, off + hsize, &cudie)) {
			while ((r = dwarf_ranges(&cudie, r, &base, &lo, &hi)) > 0) {
				if (hi > lo && cu_index__add(u, lo, hi, off + hsize)) {
					free(u->v);
					return NULL;
				}
			}
		}
		off = next;
	}
	if (u->n)
		qsort(u->v, u->n, sizeof(*u->v), fn_range__cmp);
	ix->n_units++;
	return u;
}

/* The unit DIE holding the runtime address addr, in *mem, or NULL. */
static Dwarf_Die *dwarf_index__unit(struct dwarf_index *ix, Dwfl_Module *mod, uint64_t addr,
				    Dwarf_Die *mem, Dwarf_Addr *bias)
{
	Dwarf *dbg = dwfl_module_getdwarf(mod, bias);
	struct cu_index *u;
	Dwarf_Off off;

	if (!dbg || !(u = dwarf_index__units(ix, mod, dbg)))
		return NULL;
	off = cu_index__find(u, addr - *bias);
	return off ? dwarf_offdie(dbg, off, mem) : NULL;
}

#define MAX_DEPTH 64

static bool has_pc_attrs(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/*
 * Descend from a function DIE to the innermost inlined instance holding pc.
 * path[0] is the function; returns the depth reached (>= 1).
 */
static int descend(Dwarf_Die *path, int depth, Dwarf_Addr pc)
{
	while (depth < MAX_DEPTH) {
		Dwarf_Die child;
		bool found = false;

		if (dwarf_child(&path[depth - 1], &child) != 0)
			break;
		do {
			int tag = dwarf_tag(&child);

			if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
			    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
				continue;
			if (dwarf_haspc(&child, pc) > 0) {
				found = true;
			} else if (tag == DW_TAG_lexical_block && !has_pc_attrs(&child) &&
				   dwarf_haschildren(&child)) {
				/* a block without addresses: look inside it */
				int d;

				path[depth] = child;
				d = descend(path, depth + 1, pc);
				if (d > depth + 1)
					return d;
				continue;
			}
			if (found)
				break;
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
		path[depth++] = child;
	}
	return depth;
}

static const char *die_linkage_name(Dwarf_Die *die)
{
	Dwarf_Attribute mem, *a;

	a = dwarf_attr_integrate(die, DW_AT_linkage_name, &mem);
	if (!a)
		a = dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &mem);
	return a ? dwarf_formstring(a) : NULL;
}

/* The demangled linkage name, else DW_AT_name (both through abstract origin). */
static char *die_function_name(Dwarf_Die *die)
{
	Dwarf_Attribute mem, *a;
	const char *link = die_linkage_name(die), *name;
	char *d;

	/* a C linkage name is an asm alias (glibc's __GI_*): DW_AT_name reads better */
	if (link && (d = demangle(link)))
		return d;
	a = dwarf_attr_integrate(die, DW_AT_name, &mem);
	name = a ? dwarf_formstring(a) : NULL;
	if (!name)
		name = link;
	return name ? strdup(name) : NULL;
}

/*
 * DWARF 5 directory entries may be relative to the compilation directory
 * (gcc 12: "tests/unit"), and libdw does not join them with it: we do, so
 * the profile holds full paths and display can shorten them.
 */
static char *full_path(const char *file, const char *comp_dir)
{
	char *p;

	if (!file)
		return NULL;
	if (file[0] == '/' || !comp_dir || comp_dir[0] != '/')
		return strdup(file);
	while (file[0] == '.' && file[1] == '/')
		file += 2;
	if (asprintf(&p, "%s/%s", comp_dir, file) < 0)
		return NULL;
	return p;
}

static int set_frame(struct frame *f, const char *file, const char *comp_dir, int line,
		     Dwarf_Die *fn)
{
	f->file = full_path(file, comp_dir);
	f->line = line;
	f->function = fn ? die_function_name(fn) : NULL;
	if ((file && !f->file))
		return -ENOMEM;
	return 0;
}

static void frames_free(struct frame *frames, int n)
{
	for (int i = 0; i < n; i++) {
		free(frames[i].file);
		free(frames[i].function);
	}
	free(frames);
}

/*
 * The frame rsprof reports: the first one outward in the program's own
 * code. Line 0 is the compiler's "no source line" (LLVM puts it on code it
 * made up, often in Rust): such a frame is passed over when a frame further
 * out is the program's own code with a real line (the call site of the
 * inlined function).
 */
static int symbol__choose(const struct symbol *sym)
{
	int own = -1;

	for (int i = 0; i < sym->n_frames; i++) {
		if (srcpath__is_toolchain(sym->frames[i].file))
			continue;
		if (sym->frames[i].line > 0)
			return i;
		if (own < 0)
			own = i;
	}
	return own < 0 ? 0 : own;
}

int dwarf__resolve(struct dwarf_index *ix, Dwfl_Module *mod, uint64_t addr, struct symbol *sym)
{
	Dwarf_Die path[MAX_DEPTH], *fns[MAX_DEPTH], *cudie, fndie, cu, cumem;
	Dwarf_Addr bias = 0, pc, laddr;
	Dwarf_Files *files = NULL;
	struct cu_index *ci;
	struct frame *frames;
	const char *file = NULL, *outer_link = NULL, *comp_dir = NULL;
	int depth = 0, nfn = 0, lineno = 0, err;
	Dwfl_Line *line;
	Dwarf_Off off;

	line = dwfl_module_getsrc(mod, addr);
	if (line)
		file = dwfl_lineinfo(line, &laddr, &lineno, NULL, NULL, NULL);
	cudie = dwfl_module_addrdie(mod, addr, &bias);
	if (!cudie)
		cudie = dwarf_index__unit(ix, mod, addr, &cumem, &bias);
	/* libdwfl finds lines through .debug_aranges too */
	if (!file && cudie) {
		Dwarf_Line *l = dwarf_getsrc_die(cudie, addr - bias);

		if (l && (file = dwarf_linesrc(l, NULL, NULL)))
			dwarf_lineno(l, &lineno);
	}
	if (!file)
		return -ENOENT;

	if (cudie) {
		Dwarf_Attribute mem;

		comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &mem));
		pc = addr - bias;
		ci = dwarf_index__cu(ix, mod, cudie);
		if (!ci)
			return -ENOMEM;
		off = cu_index__find(ci, pc);
		if (off && dwarf_offdie(dwarf_cu_getdwarf(cudie->cu), off, &fndie)) {
			path[0] = fndie;
			depth = descend(path, 1, pc);
		}
	}
	/* the functions of the chain, innermost first */
	for (int i = depth - 1; i >= 0; i--) {
		int tag = dwarf_tag(&path[i]);

		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram)
			fns[nfn++] = &path[i];
	}
	if (nfn > 1 && dwarf_diecu(fns[0], &cu, NULL, NULL))
		dwarf_getsrcfiles(&cu, &files, NULL);
	/*
	 * Line 0 is the compiler's "no line", and the file of such a row is
	 * whatever came before it (core/src/iter/range.rs:0 on code that the
	 * inline tree puts in the user's own function): the innermost
	 * function's own file is the truth we have.
	 */
	if (lineno == 0 && nfn) {
		const char *decl = dwarf_decl_file(fns[0]);

		if (decl)
			file = decl;
	}

	frames = calloc(nfn ? nfn : 1, sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	err = set_frame(&frames[0], file, comp_dir, lineno, nfn ? fns[0] : NULL);
	for (int i = 1; !err && i < nfn; i++) {
		Dwarf_Attribute mem;
		Dwarf_Word fidx = 0, cline = 0;
		const char *cfile = NULL;

		/* where fns[i - 1] was inlined, in fns[i] */
		if (files && dwarf_formudata(dwarf_attr(fns[i - 1], DW_AT_call_file, &mem),
					     &fidx) == 0)
			cfile = dwarf_filesrc(files, fidx, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(fns[i - 1], DW_AT_call_line, &mem), &cline) != 0)
			cline = 0;
		err = set_frame(&frames[i], cfile, comp_dir, (int)cline, fns[i]);
	}
	if (nfn) {
		outer_link = die_linkage_name(fns[nfn - 1]);
		if (dwarf_decl_line(fns[nfn - 1], &sym->decl_line) != 0)
			sym->decl_line = 0;
	}
	if (!err && outer_link && !(sym->mangled = strdup(outer_link)))
		err = -ENOMEM;
	if (err) {
		frames_free(frames, nfn ? nfn : 1);
		return err;
	}
	sym->frames = frames;
	sym->n_frames = nfn ? nfn : 1;
	sym->chosen = symbol__choose(sym);
	return 0;
}

int dwarf__has_own_lines(Dwfl_Module *mod)
{
	Dwarf_Off off = 0, next;
	Dwarf_Addr bias;
	size_t hsize;
	Dwarf *dbg;

	dbg = dwfl_module_getdwarf(mod, &bias);
	if (!dbg)
		return -ENOENT;
	while (dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cudie;
		const char *name;
		Dwarf_Lines *lines;
		size_t nlines = 0;

		if (dwarf_offdie(dbg, off + hsize, &cudie) &&
		    (name = dwarf_diename(&cudie)) && !srcpath__is_toolchain(name) &&
		    dwarf_getsrclines(&cudie, &lines, &nlines) == 0 && nlines > 0)
			return 0;
		off = next;
	}
	return -ENOENT;
}
