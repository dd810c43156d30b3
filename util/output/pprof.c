/*
 * pprof profile.proto writer: a few protobuf encoders (varints and
 * length-delimited fields), string/function/location tables, zlib's gzip.
 *
 *   Profile   1 sample_type (ValueType)  2 sample  3 mapping  4 location  5 function
 *             6 string_table  9 time_nanos  10 duration_nanos
 *             11 period_type  12 period
 *   ValueType 1 type  2 unit (string indices)
 *   Sample    1 location_id (packed, leaf first)  2 value (packed)
 *             14 default_sample_type
 *   Mapping   1 id  2 memory_start  3 memory_limit  4 file_offset  5 filename
 *             6 build_id  7-10 has_functions, _filenames, _line_numbers,
 *             _inline_frames (all true: the profile is symbolized, pprof must not
 *             try again; with start, limit and offset it can still read the
 *             file for -disasm)
 *
 * Addresses in a mapping whose file is still the one that ran are written
 * as the file's link-time addresses (the mapping's start and limit too, so
 * that start - offset still leads to them): `go tool pprof` reads binaries
 * with Go's own object reader, which does not relocate, and finds nothing
 * to disassemble in a PIE at its runtime addresses. Upstream pprof computes
 * a load base of 0 from such a mapping and reads the same addresses.
 *   Location  1 id  2 mapping_id  3 address  4 line
 *   Line      1 function_id  2 line
 *   Function  1 id  2 name  3 system_name  4 filename (string indices)
 *
 * name is the demangled name, system_name the linkage name (only the real
 * function has one; inlined frames leave it out). pprof demangles again,
 * and runs its C++ clean-up, only where the two are equal: with the
 * demangled name in both, `<u64 as Trait>::fmt` came out as `::fmt`.
 */
#include "util/output/pprof.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/array.h"
#include "util/db/read/query.h"
#include "util/hashmap.h"
#include "util/output/escape.h"
#include "util/record/maps.h"
#include "util/saturate.h"
#include "util/symbols/objfile.h"
#include "util/symbols/symbol.h"

struct pb {
	uint8_t *b;
	size_t n, cap;
	bool oom;
};

static void pb_reserve(struct pb *p, size_t more)
{
	size_t cap;
	uint8_t *b;

	if (p->oom || p->n + more <= p->cap)
		return;
	cap = p->cap ? p->cap : 256;
	while (cap < p->n + more)
		cap *= 2;
	b = realloc(p->b, cap);
	if (!b) {
		p->oom = true;
		return;
	}
	p->b = b;
	p->cap = cap;
}

static void pb_raw(struct pb *p, const void *d, size_t len)
{
	if (!len)
		return;		/* d may be NULL (an empty string from the file) */
	pb_reserve(p, len);
	if (p->oom)
		return;
	memcpy(p->b + p->n, d, len);
	p->n += len;
}

static void pb_varint(struct pb *p, uint64_t v)
{
	uint8_t buf[10];
	int n = 0;

	do {
		buf[n] = v & 0x7f;
		v >>= 7;
		if (v)
			buf[n] |= 0x80;
		n++;
	} while (v);
	pb_raw(p, buf, n);
}

/* Field with a varint value (wire type 0); proto3 leaves out zeros. */
static void pb_uint(struct pb *p, int field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(p, (uint64_t)field << 3);
	pb_varint(p, v);
}

/* Length-delimited field (wire type 2). */
static void pb_bytes(struct pb *p, int field, const void *d, size_t len)
{
	pb_varint(p, (uint64_t)field << 3 | 2);
	pb_varint(p, len);
	pb_raw(p, d, len);
}

static void pb_msg(struct pb *p, int field, struct pb *sub)
{
	if (sub->oom)
		p->oom = true;
	pb_bytes(p, field, sub->b ? sub->b : (uint8_t *)"", sub->n);
	sub->n = 0;
}

/* ---- interning ---------------------------------------------------------- */

/* A key (string, or number) to a dense index, in the order keys come. */
struct intern {
	char **keys;		/* by index, for string keys */
	int n, cap;
	struct hashmap map;	/* string hash -> index; number -> index */
};

static void intern_free(struct intern *t)
{
	for (int i = 0; t->keys && i < t->n; i++)
		free(t->keys[i]);
	free(t->keys);
	hashmap__free(&t->map);
}

static bool intern_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct intern *t = ctx;

	return !strcmp(t->keys[val], key);
}

/* Index of s, added when new (*added set). -ENOMEM. */
static int intern_str(struct intern *t, const char *s, bool *added)
{
	uint64_t hash = hashmap__hash_str(s), idx;

	*added = false;
	if (hashmap__lookup(&t->map, hash, intern_eq, s, t, &idx))
		return (int)idx;
	if (ALLOC_GROW(t->keys, t->n + 1, t->cap, 256))
		return -ENOMEM;
	t->keys[t->n] = strdup(s);
	idx = (uint64_t)t->n;
	if (!t->keys[t->n] || hashmap__intern(&t->map, hash, intern_eq, s, t, &idx, added)) {
		free(t->keys[t->n]);
		return -ENOMEM;
	}
	return t->n++;
}

static int intern_num(struct intern *t, uint64_t v, bool *added)
{
	uint64_t idx;

	*added = false;
	if (hashmap__get(&t->map, v, &idx))
		return (int)idx;
	if (hashmap__set(&t->map, v, (uint64_t)t->n))
		return -ENOMEM;
	*added = true;
	return t->n++;
}

/* ---- the profile -------------------------------------------------------- */

struct pprof {
	enum pprof_kind kind;
	uint64_t period_ns;
	int64_t time_ns, duration_ns;
	struct intern strings;		/* index = string_table index */
	struct intern functions;	/* key "name\x1ffile" -> function id - 1 */
	struct intern locations;	/* key address -> location id - 1 */
	struct intern mappings;		/* key module path, or "#index" in xmaps -> id - 1 */
	struct pb samples, maps, locs, funcs, tmp, tmp2;
	struct xmap {			/* the executable mappings of the target */
		uint64_t start, end, offset;
		char *path;
		struct objfile_ident id;
		bool have_id;		/* id read: the file is the one that ran */
	} *xmaps;
	size_t n_xmaps, cap_xmaps;
	bool oom;
};

/*
 * A protobuf string must be UTF-8 (go tool pprof refuses the file
 * otherwise): bytes from the profile that are not become U+FFFD. malloc'd.
 */
static char *utf8_clean(const char *s)
{
	size_t len = strlen(s), o = 0;
	char *d = malloc(3 * len + 1);

	if (!d)
		return NULL;
	while (*s) {
		int n = escape__utf8_len(s);

		if (n) {
			memcpy(d + o, s, n);
			o += n;
			s += n;
		} else {
			memcpy(d + o, "\xef\xbf\xbd", 3);
			o += 3;
			s++;
		}
	}
	d[o] = '\0';
	return d;
}

static int64_t str_index(struct pprof *p, const char *s)
{
	char *clean = utf8_clean(s ? s : "");
	bool added;
	int i = clean ? intern_str(&p->strings, clean, &added) : -1;

	free(clean);
	if (i < 0)
		p->oom = true;
	return i < 0 ? 0 : i;
}

struct pprof *pprof__new(enum pprof_kind kind, uint64_t period_ns, int64_t time_ns,
			 int64_t duration_ns)
{
	struct pprof *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->kind = kind;
	p->period_ns = period_ns;
	p->time_ns = time_ns;
	p->duration_ns = duration_ns;
	str_index(p, "");	/* string_table[0] must be "" */
	if (p->oom) {
		pprof__delete(p);
		return NULL;
	}
	return p;
}

void pprof__delete(struct pprof *p)
{
	if (!p)
		return;
	intern_free(&p->strings);
	intern_free(&p->functions);
	intern_free(&p->locations);
	intern_free(&p->mappings);
	for (size_t i = 0; i < p->n_xmaps; i++)
		free(p->xmaps[i].path);
	free(p->xmaps);
	free(p->samples.b);
	free(p->maps.b);
	free(p->locs.b);
	free(p->funcs.b);
	free(p->tmp.b);
	free(p->tmp2.b);
	free(p);
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/*
 * Function id (1-based) of a frame line, written to funcs when new. sys: the
 * linkage name, for the real (not inlined) function only.
 */
static uint64_t function_id(struct pprof *p, const struct frame *l, const char *module,
			    const char *sys)
{
	char name[512], *key;
	bool added;
	int i;

	if (l->function)
		snprintf(name, sizeof(name), "%s", l->function);
	else if (module)
		snprintf(name, sizeof(name), "[%s]", base_name(module));
	else
		snprintf(name, sizeof(name), "[unknown]");
	if (asprintf(&key, "%s\x1f%s\x1f%s", name, l->file ? l->file : "", sys ? sys : "") < 0) {
		p->oom = true;
		return 0;
	}
	i = intern_str(&p->functions, key, &added);
	free(key);
	if (i < 0) {
		p->oom = true;
		return 0;
	}
	if (added) {
		pb_uint(&p->tmp2, 1, i + 1);
		pb_uint(&p->tmp2, 2, str_index(p, name));
		pb_uint(&p->tmp2, 3, sys ? str_index(p, sys) : 0);
		pb_uint(&p->tmp2, 4, str_index(p, l->file));
		pb_msg(&p->funcs, 5, &p->tmp2);
	}
	return i + 1;
}

static int add_map(struct pprof *p, const struct map *m)
{
	struct xmap *x;

	if (!m->path || m->path[0] != '/' || m->perms[2] != 'x')
		return 0;	/* locations are in executable, file-backed mappings */
	if (p->n_xmaps == p->cap_xmaps) {
		size_t cap = p->cap_xmaps ? 2 * p->cap_xmaps : 16;

		x = realloc(p->xmaps, cap * sizeof(*x));
		if (!x)
			return -ENOMEM;
		p->xmaps = x;
		p->cap_xmaps = cap;
	}
	x = &p->xmaps[p->n_xmaps];
	*x = (struct xmap){ .start = m->start, .end = m->end, .offset = m->pgoff };
	x->path = strdup(m->path);
	if (!x->path)
		return -ENOMEM;
	/* not when the file changed since the recording started: not the one that ran */
	x->have_id = !objfile__ident(x->path, (time_t)(p->time_ns / 1000000000), x->offset,
				     &x->id);
	p->n_xmaps++;
	return 0;
}

int pprof__add_maps(struct pprof *p, const struct maps *m)
{
	int err = 0;

	for (size_t i = 0; m && i < m->n && !err; i++)
		err = add_map(p, &m->v[i]);
	return err;
}

/* addr of x as the file's link-time address (see the top of this file). */
static uint64_t xmap_addr(const struct xmap *x, uint64_t addr)
{
	if (!x || !x->have_id || !x->id.has_segment)
		return addr;
	return addr - x->start + x->offset - x->id.seg_offset + x->id.seg_vaddr;
}

/* The executable mapping of module holding addr, or NULL. */
static const struct xmap *xmap_find(const struct pprof *p, const char *module, uint64_t addr)
{
	for (size_t i = 0; i < p->n_xmaps; i++)
		if (addr >= p->xmaps[i].start && addr < p->xmaps[i].end &&
		    !strcmp(p->xmaps[i].path, module))
			return &p->xmaps[i];
	return NULL;
}

/*
 * Mapping id (1-based) of the mapping holding addr in module, written to
 * maps when new; 0 for none. Where the profile has the target's mappings,
 * start, limit, offset and the file's build-id come with it (pprof needs
 * them to read the binary: -disasm); else the module's path alone.
 */
static uint64_t mapping_id(struct pprof *p, const char *module, uint64_t addr)
{
	const struct xmap *x;
	struct pb m = { 0 };
	char key[32];
	bool added;
	int i;

	if (!module)
		return 0;
	x = xmap_find(p, module, addr);
	if (x)
		snprintf(key, sizeof(key), "#%zu", (size_t)(x - p->xmaps));
	i = intern_str(&p->mappings, x ? key : module, &added);
	if (i < 0) {
		p->oom = true;
		return 0;
	}
	if (added) {
		pb_uint(&m, 1, i + 1);
		if (x) {
			pb_uint(&m, 2, xmap_addr(x, x->start));
			pb_uint(&m, 3, xmap_addr(x, x->end));
			pb_uint(&m, 4, x->offset);
		}
		pb_uint(&m, 5, str_index(p, module));
		if (x && x->have_id && x->id.build_id[0])
			pb_uint(&m, 6, str_index(p, x->id.build_id));
		for (int f = 7; f <= 10; f++)
			pb_uint(&m, f, 1);
		pb_msg(&p->maps, 3, &m);
		free(m.b);
	}
	return i + 1;
}

int pprof__main(struct pprof *p, const char *exe)
{
	for (size_t i = 0; exe && i < p->n_xmaps; i++)
		if (!strcmp(p->xmaps[i].path, exe)) {
			mapping_id(p, exe, p->xmaps[i].start);
			break;
		}
	return p->oom ? -ENOMEM : 0;
}

/* Location id (1-based) of a frame, written to locs when new. */
static uint64_t location_id(struct pprof *p, const struct prof_frame *f)
{
	struct pb line = { 0 };
	bool added;
	int i = intern_num(&p->locations, f->addr, &added);

	if (i < 0) {
		p->oom = true;
		return 0;
	}
	if (added) {
		struct pb loc = { 0 };

		pb_uint(&loc, 1, i + 1);
		pb_uint(&loc, 2, mapping_id(p, f->module, f->addr));
		pb_uint(&loc, 3, xmap_addr(f->module ? xmap_find(p, f->module, f->addr) : NULL,
					   f->addr));
		for (int k = 0; k < f->n_lines; k++) {
			const char *sys = k == f->n_lines - 1 && f->outermost ? f->mangled : NULL;

			pb_uint(&line, 1, function_id(p, &f->lines[k], f->module, sys));
			pb_uint(&line, 2, f->lines[k].line > 0 ? f->lines[k].line : 0);
			pb_msg(&loc, 4, &line);
		}
		pb_msg(&p->locs, 4, &loc);
		free(loc.b);
		free(line.b);
	}
	return i + 1;
}

int pprof__add(struct pprof *p, const struct prof_stack *s)
{
	struct pb *ids = &p->tmp;
	struct pb vals = { 0 }, sample = { 0 };
	int64_t v[4];
	int nv = 2;

	ids->n = 0;
	for (int i = 0; i < s->depth; i++)
		pb_varint(ids, location_id(p, &s->frames[i]));
	if (p->kind == PPROF_CPU) {
		v[0] = s->count;
		v[1] = sat__mul(s->count, (int64_t)p->period_ns);
	} else {
		/* alloc_objects, alloc_space, inuse_objects, inuse_space */
		v[0] = s->alloc_count;
		v[1] = s->alloc_value;
		v[2] = s->count;
		v[3] = s->value;
		nv = 4;
	}
	for (int i = 0; i < nv; i++)
		pb_varint(&vals, (uint64_t)v[i]);
	pb_bytes(&sample, 1, ids->b ? ids->b : (uint8_t *)"", ids->n);	/* packed */
	pb_bytes(&sample, 2, vals.b, vals.n);
	if (vals.oom || ids->oom)
		sample.oom = true;
	pb_msg(&p->samples, 2, &sample);
	free(vals.b);
	free(sample.b);
	return p->oom || p->samples.oom || p->maps.oom || p->locs.oom || p->funcs.oom ?
	       -ENOMEM : 0;
}

static void value_type(struct pprof *p, struct pb *out, int field, const char *type,
		       const char *unit)
{
	struct pb vt = { 0 };

	pb_uint(&vt, 1, str_index(p, type));
	pb_uint(&vt, 2, str_index(p, unit));
	pb_msg(out, field, &vt);
	free(vt.b);
}

static int gzip_to(const uint8_t *d, size_t n, FILE *f)
{
	z_stream zs;
	uint8_t out[65536];
	int rc;

	memset(&zs, 0, sizeof(zs));
	/* 15 + 16: a gzip header, which pprof expects */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	zs.next_in = (uint8_t *)d;
	zs.avail_in = n;
	do {
		zs.next_out = out;
		zs.avail_out = sizeof(out);
		rc = deflate(&zs, Z_FINISH);
		if (rc == Z_STREAM_ERROR)
			break;
		if (fwrite(out, 1, sizeof(out) - zs.avail_out, f) != sizeof(out) - zs.avail_out) {
			rc = Z_ERRNO;
			break;
		}
	} while (rc != Z_STREAM_END);
	deflateEnd(&zs);
	return rc == Z_STREAM_END && !ferror(f) ? 0 : -EIO;
}

int pprof__write(struct pprof *p, FILE *f)
{
	struct pb prof = { 0 };
	int64_t dflt;
	int err;

	if (p->kind == PPROF_CPU) {
		value_type(p, &prof, 1, "samples", "count");
		value_type(p, &prof, 1, "cpu", "nanoseconds");
	} else {
		value_type(p, &prof, 1, "alloc_objects", "count");
		value_type(p, &prof, 1, "alloc_space", "bytes");
		value_type(p, &prof, 1, "inuse_objects", "count");
		value_type(p, &prof, 1, "inuse_space", "bytes");
	}
	pb_raw(&prof, p->samples.b, p->samples.n);
	pb_raw(&prof, p->maps.b, p->maps.n);
	pb_raw(&prof, p->locs.b, p->locs.n);
	pb_raw(&prof, p->funcs.b, p->funcs.n);
	if (p->kind == PPROF_CPU)
		value_type(p, &prof, 11, "cpu", "nanoseconds");
	else
		value_type(p, &prof, 11, "space", "bytes");
	/* what pprof shows unless told (-sample_index) */
	dflt = p->kind == PPROF_HEAP ? str_index(p, "inuse_space") : 0;
	/* the string table last: every index above is in it by now */
	for (int i = 0; i < p->strings.n; i++)
		pb_bytes(&prof, 6, p->strings.keys[i], strlen(p->strings.keys[i]));
	pb_uint(&prof, 9, (uint64_t)p->time_ns);
	pb_uint(&prof, 10, (uint64_t)p->duration_ns);
	pb_uint(&prof, 12, p->kind == PPROF_CPU ? p->period_ns : 1);
	pb_uint(&prof, 14, dflt);
	if (prof.oom || p->oom) {
		free(prof.b);
		return -ENOMEM;
	}
	err = gzip_to(prof.b, prof.n, f);
	free(prof.b);
	return err;
}
