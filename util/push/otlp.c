#include "util/push/otlp.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/db/read/query.h"
#include "util/hashmap.h"
#include "util/output/escape.h"
#include "util/push/proto/otlp-profiles.pb-c.h"
#include "util/record/maps.h"
#include "util/symbols/symbol.h"

/* Everything the messages point to comes from here and goes at once. */
struct chunk {
	struct chunk *next;
	size_t used, cap;
	max_align_t data[];
};

struct arena {
	struct chunk *head;
};

static void *arena_alloc(struct arena *a, size_t n)
{
	struct chunk *c = a->head;
	void *p;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (!c || c->used + n > c->cap) {
		size_t cap = n > 65536 ? n : 65536;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = a->head;
		c->used = 0;
		c->cap = cap;
		a->head = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

static void arena_free(struct arena *a)
{
	while (a->head) {
		struct chunk *c = a->head;

		a->head = c->next;
		free(c);
	}
}

/* A growable array of pointers with an index of keys. */
struct table {
	void **v;
	size_t n, cap;
	struct hashmap index;
};

static int table_push(struct table *t, void *e)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		void **v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = e;
	return 0;
}

static void table_free(struct table *t)
{
	free(t->v);
	hashmap__free(&t->index);
}

#define N_TYPES 4

struct xmap {
	uint64_t start, end, offset;
	const char *path;	/* in the arena */
	const unsigned char *build_id;
	unsigned int build_id_len;
};

struct otlp_profile {
	enum pprof_kind kind;
	uint64_t period_ns;
	int64_t time_ns, duration_ns;
	struct arena a;
	struct table strings;	/* char *; index: intern */
	struct table mappings;	/* Otlp__Mapping *; index: key string id / xmap -> index */
	struct table locations;	/* Otlp__Location *; index: address -> index */
	struct table functions;	/* Otlp__Function *; index: intern of the key string */
	struct table stacks;	/* Otlp__Stack *; index: intern of the location sequence */
	struct table attrs;	/* Otlp__KeyValueAndUnit * */
	struct table samples[N_TYPES];	/* Otlp__Sample * per sample type */
	struct table keys;	/* function keys (char *), by function index - 1 */
	struct xmap *xmaps;
	size_t n_xmaps;
	int32_t *seq;		/* scratch: a stack's location indices */
	size_t cap_seq;
	bool oom;
};

static bool str_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct table *t = ctx;

	return !strcmp(t->v[val], key);
}

/* Index of s in the string table (made valid UTF-8 first), added when new. */
static int32_t str_index(struct otlp_profile *o, const char *s)
{
	size_t len, w = 0;
	char *clean;
	uint64_t h, idx;
	bool fresh;

	if (!s)
		s = "";
	len = strlen(s);
	clean = arena_alloc(&o->a, 3 * len + 1);
	if (!clean) {
		o->oom = true;
		return 0;
	}
	while (*s) {
		int n = escape__utf8_len(s);

		if (n) {
			memcpy(clean + w, s, n);
			w += n;
			s += n;
		} else {
			memcpy(clean + w, "\xef\xbf\xbd", 3);
			w += 3;
			s++;
		}
	}
	clean[w] = '\0';
	h = hashmap__hash_str(clean);
	if (hashmap__lookup(&o->strings.index, h, str_eq, clean, &o->strings, &idx))
		return (int32_t)idx;
	idx = o->strings.n;
	if (table_push(&o->strings, clean) ||
	    hashmap__intern(&o->strings.index, h, str_eq, clean, &o->strings, &idx, &fresh)) {
		o->oom = true;
		return 0;
	}
	return (int32_t)idx;
}

struct otlp_profile *otlp_profile__new(enum pprof_kind kind, uint64_t period_ns, int64_t time_ns,
				       int64_t duration_ns)
{
	struct otlp_profile *o = calloc(1, sizeof(*o));
	Otlp__Mapping *m;
	Otlp__Location *l;
	Otlp__Function *f;
	Otlp__Stack *st;
	Otlp__KeyValueAndUnit *kv;

	if (!o)
		return NULL;
	o->kind = kind;
	o->period_ns = period_ns;
	o->time_ns = time_ns;
	o->duration_ns = duration_ns;
	/* every table's entry 0 is its zero value */
	str_index(o, "");
	m = arena_alloc(&o->a, sizeof(*m));
	l = arena_alloc(&o->a, sizeof(*l));
	f = arena_alloc(&o->a, sizeof(*f));
	st = arena_alloc(&o->a, sizeof(*st));
	kv = arena_alloc(&o->a, sizeof(*kv));
	if (!m || !l || !f || !st || !kv || o->oom) {
		otlp_profile__delete(o);
		return NULL;
	}
	otlp__mapping__init(m);
	otlp__location__init(l);
	otlp__function__init(f);
	otlp__stack__init(st);
	otlp__key_value_and_unit__init(kv);
	if (table_push(&o->mappings, m) || table_push(&o->locations, l) ||
	    table_push(&o->functions, f) || table_push(&o->stacks, st) ||
	    table_push(&o->attrs, kv) || table_push(&o->keys, NULL)) {
		otlp_profile__delete(o);
		return NULL;
	}
	return o;
}

void otlp_profile__delete(struct otlp_profile *o)
{
	if (!o)
		return;
	table_free(&o->strings);
	table_free(&o->mappings);
	table_free(&o->locations);
	table_free(&o->functions);
	table_free(&o->stacks);
	table_free(&o->attrs);
	table_free(&o->keys);
	for (int i = 0; i < N_TYPES; i++)
		table_free(&o->samples[i]);
	free(o->xmaps);
	free(o->seq);
	arena_free(&o->a);
	free(o);
}

int otlp_profile__add_maps(struct otlp_profile *o, const struct maps *m)
{
	size_t n = 0;

	if (!m)
		return 0;
	o->xmaps = calloc(m->n ? m->n : 1, sizeof(*o->xmaps));
	if (!o->xmaps)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		const struct map *e = &m->v[i];
		struct xmap *x = &o->xmaps[n];
		char *p;

		if (!e->path || e->path[0] != '/' || e->perms[2] != 'x')
			continue;	/* locations are in executable, file-backed mappings */
		p = arena_alloc(&o->a, strlen(e->path) + 1);
		if (!p)
			return -ENOMEM;
		strcpy(p, e->path);
		*x = (struct xmap){ .start = e->start, .end = e->end, .offset = e->pgoff, .path = p };
		if (e->build_id_len) {
			unsigned char *b = arena_alloc(&o->a, e->build_id_len);

			if (!b)
				return -ENOMEM;
			memcpy(b, e->build_id, e->build_id_len);
			x->build_id = b;
			x->build_id_len = e->build_id_len;
		}
		n++;
	}
	o->n_xmaps = n;
	return 0;
}

static const struct xmap *xmap_find(const struct otlp_profile *o, const char *module,
				    uint64_t addr)
{
	for (size_t i = 0; i < o->n_xmaps; i++)
		if (addr >= o->xmaps[i].start && addr < o->xmaps[i].end &&
		    !strcmp(o->xmaps[i].path, module))
			return &o->xmaps[i];
	return NULL;
}

/* An attribute (string value) in the dictionary: its index. */
static int32_t attr_index(struct otlp_profile *o, const char *key, const char *value)
{
	Otlp__KeyValueAndUnit *kv = arena_alloc(&o->a, sizeof(*kv));
	Otlp__AnyValue *v = arena_alloc(&o->a, sizeof(*v));
	char *s = arena_alloc(&o->a, strlen(value) + 1);

	if (!kv || !v || !s) {
		o->oom = true;
		return 0;
	}
	otlp__key_value_and_unit__init(kv);
	otlp__any_value__init(v);
	strcpy(s, value);
	v->value_case = OTLP__ANY_VALUE__VALUE_STRING_VALUE;
	v->string_value = s;
	kv->key_strindex = str_index(o, key);
	kv->value = v;
	if (table_push(&o->attrs, kv)) {
		o->oom = true;
		return 0;
	}
	return (int32_t)(o->attrs.n - 1);
}

/* The mapping of addr in module (0: none), made when new. */
static int32_t mapping_index(struct otlp_profile *o, const char *module, uint64_t addr)
{
	const struct xmap *x;
	uint64_t key, idx;
	Otlp__Mapping *m;

	if (!module)
		return 0;
	x = xmap_find(o, module, addr);
	/* an xmap by its place; a module without one by its name (string index) */
	key = x ? (uint64_t)(x - o->xmaps) << 32 | 1 : (uint64_t)str_index(o, module) << 32;
	if (hashmap__get(&o->mappings.index, key, &idx))
		return (int32_t)idx;
	m = arena_alloc(&o->a, sizeof(*m));
	if (!m) {
		o->oom = true;
		return 0;
	}
	otlp__mapping__init(m);
	m->filename_strindex = str_index(o, module);
	if (x) {
		m->memory_start = x->start;
		m->memory_limit = x->end;
		m->file_offset = x->offset;
		if (x->build_id_len) {
			char hex[2 * 20 + 1];

			for (unsigned int i = 0; i < x->build_id_len; i++)
				snprintf(hex + 2 * i, 3, "%02x", x->build_id[i]);
			m->attribute_indices = arena_alloc(&o->a, sizeof(int32_t));
			if (!m->attribute_indices) {
				o->oom = true;
				return 0;
			}
			/* the semantic conventions' name for a GNU build-id */
			m->attribute_indices[0] = attr_index(o, "process.executable.build_id.gnu", hex);
			m->n_attribute_indices = 1;
		}
	}
	idx = o->mappings.n;
	if (table_push(&o->mappings, m) || hashmap__set(&o->mappings.index, key, idx)) {
		o->oom = true;
		return 0;
	}
	return (int32_t)idx;
}

static bool key_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct table *t = ctx;

	return !strcmp(t->v[val], key);
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/* The function of a frame line (sys: the linkage name of the real function), made when new. */
static int32_t function_index(struct otlp_profile *o, const struct frame *l, const char *module,
			      const char *sys)
{
	char name[512], *key;
	uint64_t h, idx;
	bool fresh;
	Otlp__Function *f;
	int n;

	if (l->function)
		snprintf(name, sizeof(name), "%s", l->function);
	else if (module)
		snprintf(name, sizeof(name), "[%s]", base_name(module));
	else
		snprintf(name, sizeof(name), "[unknown]");
	n = snprintf(NULL, 0, "%s\x1f%s\x1f%s", name, l->file ? l->file : "", sys ? sys : "");
	key = arena_alloc(&o->a, (size_t)n + 1);
	if (!key) {
		o->oom = true;
		return 0;
	}
	snprintf(key, (size_t)n + 1, "%s\x1f%s\x1f%s", name, l->file ? l->file : "",
		 sys ? sys : "");
	h = hashmap__hash_str(key);
	if (hashmap__lookup(&o->functions.index, h, key_eq, key, &o->keys, &idx))
		return (int32_t)idx;
	f = arena_alloc(&o->a, sizeof(*f));
	if (!f) {
		o->oom = true;
		return 0;
	}
	otlp__function__init(f);
	f->name_strindex = str_index(o, name);
	f->system_name_strindex = sys ? str_index(o, sys) : 0;
	f->filename_strindex = str_index(o, l->file);
	idx = o->functions.n;
	if (table_push(&o->functions, f) || table_push(&o->keys, key) ||
	    hashmap__intern(&o->functions.index, h, key_eq, key, &o->keys, &idx, &fresh)) {
		o->oom = true;
		return 0;
	}
	return (int32_t)idx;
}

static int32_t location_index(struct otlp_profile *o, const struct prof_frame *fr)
{
	Otlp__Location *l;
	uint64_t idx;

	if (hashmap__get(&o->locations.index, fr->addr, &idx))
		return (int32_t)idx;
	l = arena_alloc(&o->a, sizeof(*l));
	if (!l) {
		o->oom = true;
		return 0;
	}
	otlp__location__init(l);
	l->mapping_index = mapping_index(o, fr->module, fr->addr);
	l->address = fr->addr;
	l->lines = arena_alloc(&o->a, (size_t)fr->n_lines * sizeof(*l->lines));
	if (!l->lines) {
		o->oom = true;
		return 0;
	}
	/* innermost (inlined) first, the real function last, as pprof */
	for (int k = 0; k < fr->n_lines; k++) {
		const char *sys = k == fr->n_lines - 1 && fr->outermost ? fr->mangled : NULL;
		Otlp__Line *ln = arena_alloc(&o->a, sizeof(*ln));

		if (!ln) {
			o->oom = true;
			return 0;
		}
		otlp__line__init(ln);
		ln->function_index = function_index(o, &fr->lines[k], fr->module, sys);
		ln->line = fr->lines[k].line > 0 ? fr->lines[k].line : 0;
		l->lines[k] = ln;
	}
	l->n_lines = (size_t)fr->n_lines;
	idx = o->locations.n;
	if (table_push(&o->locations, l) || hashmap__set(&o->locations.index, fr->addr, idx)) {
		o->oom = true;
		return 0;
	}
	return (int32_t)idx;
}

struct seq_key {
	const int32_t *v;
	size_t n;
};

static bool stack_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct table *t = ctx;
	const Otlp__Stack *s = t->v[val];
	const struct seq_key *k = key;

	return s->n_location_indices == k->n &&
	       !memcmp(s->location_indices, k->v, k->n * sizeof(*k->v));
}

static int32_t stack_index(struct otlp_profile *o, const struct prof_stack *s)
{
	struct seq_key k;
	uint64_t h = 1469598103934665603ULL, idx;
	Otlp__Stack *st;
	bool fresh;

	if ((size_t)s->depth > o->cap_seq) {
		int32_t *v = realloc(o->seq, (size_t)s->depth * sizeof(*v));

		if (!v) {
			o->oom = true;
			return 0;
		}
		o->seq = v;
		o->cap_seq = (size_t)s->depth;
	}
	for (int i = 0; i < s->depth; i++) {
		o->seq[i] = location_index(o, &s->frames[i]);	/* leaf first */
		h = hashmap__hash_u64(h ^ (uint64_t)o->seq[i]);
	}
	if (o->oom)
		return 0;
	k.v = o->seq;
	k.n = (size_t)s->depth;
	h = h ? h : 1;
	if (hashmap__lookup(&o->stacks.index, h, stack_eq, &k, &o->stacks, &idx))
		return (int32_t)idx;
	st = arena_alloc(&o->a, sizeof(*st));
	if (!st) {
		o->oom = true;
		return 0;
	}
	otlp__stack__init(st);
	if (s->depth) {
		st->location_indices = arena_alloc(&o->a, (size_t)s->depth * sizeof(int32_t));
		if (!st->location_indices) {
			o->oom = true;
			return 0;
		}
		memcpy(st->location_indices, o->seq, (size_t)s->depth * sizeof(int32_t));
	}
	st->n_location_indices = (size_t)s->depth;
	idx = o->stacks.n;
	if (table_push(&o->stacks, st) ||
	    hashmap__intern(&o->stacks.index, h, stack_eq, &k, &o->stacks, &idx, &fresh)) {
		o->oom = true;
		return 0;
	}
	return (int32_t)idx;
}

static void add_sample(struct otlp_profile *o, int type, int32_t stack, int64_t v)
{
	Otlp__Sample *s;

	if (!v)
		return;		/* nothing of this type at the stack */
	s = arena_alloc(&o->a, sizeof(*s));
	if (!s) {
		o->oom = true;
		return;
	}
	otlp__sample__init(s);
	s->values = arena_alloc(&o->a, sizeof(int64_t));
	if (!s->values) {
		o->oom = true;
		return;
	}
	s->values[0] = v;
	s->n_values = 1;
	s->stack_index = stack;
	if (table_push(&o->samples[type], s))
		o->oom = true;
}

int otlp_profile__add(struct otlp_profile *o, const struct prof_stack *s)
{
	int32_t st = stack_index(o, s);

	if (o->oom)
		return -ENOMEM;
	if (o->kind == PPROF_CPU) {
		add_sample(o, 0, st, s->count);
	} else {
		/* alloc_objects, alloc_space, inuse_objects, inuse_space */
		add_sample(o, 0, st, s->alloc_count);
		add_sample(o, 1, st, s->alloc_value);
		add_sample(o, 2, st, s->count);
		add_sample(o, 3, st, s->value);
	}
	return o->oom ? -ENOMEM : 0;
}

static const struct {
	const char *type, *unit;
} cpu_types[] = { { "samples", "count" } }, heap_types[] = {
	{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
	{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
};

int otlp_profile__encode(struct otlp_profile *o, const struct otlp_attr *attrs, size_t n_attrs,
			 void **buf, size_t *len)
{
	Otlp__ExportProfilesServiceRequest req = OTLP__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	Otlp__ProfilesDictionary dict = OTLP__PROFILES_DICTIONARY__INIT;
	Otlp__ResourceProfiles rp = OTLP__RESOURCE_PROFILES__INIT, *rpp = &rp;
	Otlp__Resource res = OTLP__RESOURCE__INIT;
	Otlp__ScopeProfiles sp = OTLP__SCOPE_PROFILES__INIT, *spp = &sp;
	Otlp__InstrumentationScope scope = OTLP__INSTRUMENTATION_SCOPE__INIT;
	Otlp__Link link0 = OTLP__LINK__INIT, *linkp = &link0;
	Otlp__Profile prof[N_TYPES], *profp[N_TYPES];
	Otlp__ValueType vt[N_TYPES], period = OTLP__VALUE_TYPE__INIT;
	Otlp__KeyValue **kvs = NULL;
	int n_types = o->kind == PPROF_CPU ? 1 : 4;
	int err = 0;

	*buf = NULL;
	/* every string in the table before the table is handed over */
	for (int i = 0; i < n_types; i++) {
		otlp__value_type__init(&vt[i]);
		vt[i].type_strindex = str_index(o, o->kind == PPROF_CPU ? cpu_types[i].type :
						heap_types[i].type);
		vt[i].unit_strindex = str_index(o, o->kind == PPROF_CPU ? cpu_types[i].unit :
						heap_types[i].unit);
	}
	period.type_strindex = str_index(o, o->kind == PPROF_CPU ? "cpu" : "space");
	period.unit_strindex = str_index(o, o->kind == PPROF_CPU ? "nanoseconds" : "bytes");
	kvs = calloc(n_attrs ? n_attrs : 1, sizeof(*kvs));
	if (!kvs || o->oom) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n_attrs; i++) {
		Otlp__KeyValue *kv = arena_alloc(&o->a, sizeof(*kv));
		Otlp__AnyValue *v = arena_alloc(&o->a, sizeof(*v));

		if (!kv || !v) {
			err = -ENOMEM;
			goto out;
		}
		otlp__key_value__init(kv);
		otlp__any_value__init(v);
		kv->key = (char *)attrs[i].key;
		if (attrs[i].is_int) {
			v->value_case = OTLP__ANY_VALUE__VALUE_INT_VALUE;
			v->int_value = attrs[i].num;
		} else {
			v->value_case = OTLP__ANY_VALUE__VALUE_STRING_VALUE;
			v->string_value = (char *)(attrs[i].str ? attrs[i].str : "");
		}
		kv->value = v;
		kvs[i] = kv;
	}
	for (int i = 0; i < n_types; i++) {
		otlp__profile__init(&prof[i]);
		prof[i].sample_type = &vt[i];
		prof[i].samples = (Otlp__Sample **)o->samples[i].v;
		prof[i].n_samples = o->samples[i].n;
		prof[i].time_unix_nano = (uint64_t)o->time_ns;
		prof[i].duration_nano = (uint64_t)o->duration_ns;
		prof[i].period_type = &period;
		prof[i].period = o->kind == PPROF_CPU ? (int64_t)o->period_ns : 1;
		profp[i] = &prof[i];
	}
	dict.mapping_table = (Otlp__Mapping **)o->mappings.v;
	dict.n_mapping_table = o->mappings.n;
	dict.location_table = (Otlp__Location **)o->locations.v;
	dict.n_location_table = o->locations.n;
	dict.function_table = (Otlp__Function **)o->functions.v;
	dict.n_function_table = o->functions.n;
	dict.link_table = &linkp;
	dict.n_link_table = 1;
	dict.string_table = (char **)o->strings.v;
	dict.n_string_table = o->strings.n;
	dict.attribute_table = (Otlp__KeyValueAndUnit **)o->attrs.v;
	dict.n_attribute_table = o->attrs.n;
	dict.stack_table = (Otlp__Stack **)o->stacks.v;
	dict.n_stack_table = o->stacks.n;
	res.attributes = kvs;
	res.n_attributes = n_attrs;
	scope.name = "rsprof";
	scope.version = RSPROF_VERSION;
	sp.scope = &scope;
	sp.profiles = profp;
	sp.n_profiles = (size_t)n_types;
	rp.resource = &res;
	rp.scope_profiles = &spp;
	rp.n_scope_profiles = 1;
	req.resource_profiles = &rpp;
	req.n_resource_profiles = 1;
	req.dictionary = &dict;
	*len = otlp__export_profiles_service_request__get_packed_size(&req);
	*buf = malloc(*len ? *len : 1);
	if (!*buf) {
		err = -ENOMEM;
		goto out;
	}
	otlp__export_profiles_service_request__pack(&req, *buf);
out:
	free(kvs);
	return err;
}
