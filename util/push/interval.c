#include "util/push/interval.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/db/read/addrs.h"
#include "util/db/db.h"
#include "util/db/read/processes.h"
#include "util/db/read/query.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/output/format.h"
#include "util/output/pprof.h"
#include "util/push/item.h"
#include "util/push/otlp.h"
#include "util/push/proto/pyroscope-push.pb-c.h"
#include "util/record/maps.h"
#include "util/saturate.h"

struct proc {
	int pid;
	char *comm, *exe;
	char *cgroup;		/* its last image's cgroup v2 path; NULL: not known */
	char container_id[65];	/* from the cgroup's name; "": none */
	int64_t end_ms;		/* its last image's; -1: running */
};

struct push_source {
	struct db *db;
	char *path;
	int64_t start_ns;	/* Unix time of the recording's time 0 */
	unsigned int freq;	/* CPU sampling frequency */
	int main_pid;		/* meta.pid */
	bool cpu, heap;
	char *hostname;
	struct proc *procs;	/* by pid */
	size_t n_procs, cap_procs;
};

const char *push_source__path(const struct push_source *s)
{
	return s->path;
}

static void procs_free(struct push_source *s)
{
	for (size_t i = 0; i < s->n_procs; i++) {
		free(s->procs[i].comm);
		free(s->procs[i].exe);
		free(s->procs[i].cgroup);
	}
	s->n_procs = 0;
}

void push_source__close(struct push_source *s)
{
	if (!s)
		return;
	db__close(s->db);
	procs_free(s);
	free(s->procs);
	free(s->path);
	free(s->hostname);
	free(s);
}

/* Unix nanoseconds of the recorder's ISO 8601 UTC time, 0 if unknown. */
static int64_t iso_ns(const char *v)
{
	struct tm tm = { 0 };
	const char *end = v ? strptime(v, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;

	return end ? (int64_t)timegm(&tm) * 1000000000LL : 0;
}

/*
 * The container ID in the name of a cgroup, as the container runtimes name
 * the cgroups of their containers: the last component of the path is
 * 64 hex digits, or ends in "-" and them, with or without ".scope"
 * (/docker/ID, /system.slice/docker-ID.scope, .../cri-containerd-ID.scope,
 * crio-ID.scope, libpod-ID.scope, /kubepods/.../podUID/ID). "" when not.
 */
static void container_id(const char *cgroup, char id[65])
{
	const char *last = strrchr(cgroup, '/'), *dash;
	size_t n;

	id[0] = '\0';
	last = last ? last + 1 : cgroup;
	n = strlen(last);
	if (n > 6 && !strcmp(last + n - 6, ".scope"))
		n -= 6;
	dash = memrchr(last, '-', n);
	if (dash) {
		n -= (size_t)(dash + 1 - last);
		last = dash + 1;
	}
	if (n != 64 || strspn(last, "0123456789abcdef") < 64)
		return;
	memcpy(id, last, 64);
	id[64] = '\0';
}

/* The processes table: one entry per pid, its last image (comm, exe, cgroup, end). */
static int proc_cb(void *ctx, const struct process_info *p)
{
	struct push_source *s = ctx;
	struct proc *e = s->n_procs ? &s->procs[s->n_procs - 1] : NULL;

	if (!e || e->pid != p->pid) {
		if (s->n_procs == s->cap_procs) {
			size_t cap = s->cap_procs ? 2 * s->cap_procs : 16;
			struct proc *v = realloc(s->procs, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			s->procs = v;
			s->cap_procs = cap;
		}
		e = &s->procs[s->n_procs++];
		memset(e, 0, sizeof(*e));
		e->pid = p->pid;
	}
	/* a later image (exec) names the pid */
	if (p->comm) {
		free(e->comm);
		e->comm = strdup(p->comm);
		if (!e->comm)
			return -ENOMEM;
	}
	if (p->exe) {
		free(e->exe);
		e->exe = strdup(p->exe);
		if (!e->exe)
			return -ENOMEM;
	}
	if (p->cgroup) {
		free(e->cgroup);
		e->cgroup = strdup(p->cgroup);
		if (!e->cgroup)
			return -ENOMEM;
		container_id(e->cgroup, e->container_id);
	}
	e->end_ms = p->end_ms;
	return 0;
}

static const struct proc *proc_find(const struct push_source *s, int pid)
{
	size_t lo = 0, hi = s->n_procs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->procs[mid].pid == pid)
			return &s->procs[mid];
		if (s->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static char *meta(struct push_source *s, const char *key, int *err)
{
	char *v = NULL;

	if (!*err)
		*err = db__meta_get(s->db, key, &v);
	return v;
}

int push_source__open(const char *path, struct push_source **out)
{
	struct push_source *s = calloc(1, sizeof(*s));
	char abs[PATH_MAX], host[256];
	char *start, *freq, *cpu, *heap, *pid, *hostname;
	int err = 0;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	if (!realpath(path, abs)) {
		err = -errno;
		pr_err("cannot open '%s': %s", path, strerror(errno));
		free(s);
		return err;
	}
	s->path = strdup(abs);
	if (!s->path) {
		free(s);
		return -ENOMEM;
	}
	err = db__open(abs, &s->db);
	if (err) {
		push_source__close(s);
		return err;
	}
	start = meta(s, "start_time", &err);
	freq = meta(s, "cpu_freq_hz", &err);
	cpu = meta(s, "cpu", &err);
	heap = meta(s, "heap", &err);
	pid = meta(s, "pid", &err);
	hostname = meta(s, "hostname", &err);
	if (!err) {
		s->start_ns = iso_ns(start);
		s->freq = freq && atoi(freq) > 0 ? (unsigned int)atoi(freq) : 0;
		s->cpu = cpu ? !strcmp(cpu, "on") : s->freq > 0;
		s->heap = heap && !strcmp(heap, "on");
		s->main_pid = pid ? atoi(pid) : 0;
		/* where it was recorded; a file of before meta.hostname: here */
		if (!hostname && !gethostname(host, sizeof(host))) {
			host[sizeof(host) - 1] = '\0';
			hostname = strdup(host);
		}
		s->hostname = hostname ? hostname : strdup("unknown");
		hostname = NULL;
		if (!s->hostname)
			err = -ENOMEM;
	}
	free(start);
	free(freq);
	free(cpu);
	free(heap);
	free(pid);
	free(hostname);
	if (err) {
		push_source__close(s);
		return err;
	}
	*out = s;
	return 0;
}

int push_source__refresh(struct push_source *s, uint64_t *last_ms, bool *finished)
{
	struct prof_summary sum;
	int err = db_query_summary(s->db, &sum);

	if (err)
		return err;
	*last_ms = sum.checkpoints ? sum.duration_ms : 0;
	*finished = sum.finished;
	return 0;
}

/* ---- labels -------------------------------------------------------------- */

#define MAX_LABELS 64

struct labels {
	struct push_label v[MAX_LABELS];
	size_t n;
	char pid[16];
};

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

static const char *user_label(const struct push_spec *spec, const char *name)
{
	for (size_t i = 0; i < spec->n_labels; i++)
		if (!strcmp(spec->labels[i].name, name))
			return spec->labels[i].value;
	return NULL;
}

static void label_add(struct labels *l, const char *name, const char *value)
{
	if (l->n < MAX_LABELS)
		l->v[l->n++] = (struct push_label){ (char *)name, (char *)value };
}

static int label_cmp(const void *a, const void *b)
{
	return strcmp(((const struct push_label *)a)->name, ((const struct push_label *)b)->name);
}

/*
 * service_name, hostname, pid, cgroup_name and container_id when known
 * (each replaced by the user's when given), then the user's other labels;
 * sorted by name.
 */
static void labels_of(const struct push_source *s, const struct push_spec *spec, int pid,
		      struct labels *l)
{
	const struct proc *p = proc_find(s, pid);
	const char *svc = user_label(spec, "service_name");

	l->n = 0;
	snprintf(l->pid, sizeof(l->pid), "%d", pid);
	if (!svc && p && p->exe)
		svc = base_name(p->exe);
	if (!svc && p && p->comm)
		svc = p->comm;
	label_add(l, "service_name", svc && *svc ? svc : "unknown");
	label_add(l, "hostname", user_label(spec, "hostname") ? : s->hostname);
	label_add(l, "pid", user_label(spec, "pid") ? : l->pid);
	if (p && p->cgroup && !user_label(spec, "cgroup_name"))
		label_add(l, "cgroup_name", p->cgroup);
	if (p && p->container_id[0] && !user_label(spec, "container_id"))
		label_add(l, "container_id", p->container_id);
	for (size_t i = 0; i < spec->n_labels; i++) {
		const char *n = spec->labels[i].name;

		if (strcmp(n, "service_name") && strcmp(n, "hostname") && strcmp(n, "pid"))
			label_add(l, n, spec->labels[i].value);
	}
	qsort(l->v, l->n, sizeof(l->v[0]), label_cmp);
}

static const char *label_get(const struct labels *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return l->v[i].value;
	return NULL;
}

/* ---- the requests of each protocol ---------------------------------------- */

struct build {
	struct push_source *s;
	const struct push_spec *spec;
	uint64_t from_ms, to_ms;
	uint64_t interval_ms;
	bool heap;
	bool (*skip)(void *ctx, const char *part);
	int (*emit)(void *ctx, struct push_item *it);
	void *ctx;
	bool active, skipping;
	int pid;
	const struct proc *proc;
	char part[32];
	struct pprof *pp;
	struct otlp_profile *op;
	size_t n_stacks;
};

static int64_t interval_ns(const struct build *b)
{
	return b->s->start_ns + (int64_t)b->from_ms * 1000000;
}

static int64_t duration_ns(const struct build *b)
{
	return (int64_t)(b->to_ms - b->from_ms) * 1000000;
}

/* The value of a Pyroscope ingest name: no character that ends a key or value there. */
static void name_value(char *d, size_t len, const char *v)
{
	size_t i = 0;

	for (; *v && i + 1 < len; v++)
		d[i++] = strchr("{},=\"", *v) || (unsigned char)*v < 0x20 ? '_' : *v;
	d[i] = '\0';
}

/* Pyroscope /ingest: ?name=SERVICE{k=v,...}&from&until&spyName&sampleRate, multipart. */
static int pyroscope_item(struct build *b, const struct labels *l, void *pprof, size_t len,
			  struct push_item *it)
{
	char name[2048], val[512], *q = NULL, *esc;
	size_t n;
	FILE *f;
	struct json j;
	char *cfg = NULL;
	size_t cfg_len = 0;
	int64_t from_s = interval_ns(b) / 1000000000, until_s;
	int err;

	until_s = (interval_ns(b) + duration_ns(b) + 999999999) / 1000000000;
	name_value(val, sizeof(val), label_get(l, "service_name"));
	n = (size_t)snprintf(name, sizeof(name), "%s{", val);
	for (size_t i = 0; i < l->n && n < sizeof(name); i++) {
		if (!strcmp(l->v[i].name, "service_name"))
			continue;
		name_value(val, sizeof(val), l->v[i].value);
		n += (size_t)snprintf(name + n, sizeof(name) - n, "%s%s=%s",
				      name[n - 1] == '{' ? "" : ",", l->v[i].name, val);
	}
	if (n + 2 > sizeof(name)) {
		free(pprof);
		return -E2BIG;
	}
	strcat(name, "}");
	esc = curl_easy_escape(NULL, name, 0);
	if (!esc || asprintf(&q, "?name=%s&from=%lld&until=%lld&spyName=rsprof&sampleRate=%u",
			     esc, (long long)from_s, (long long)until_s,
			     b->s->freq ? b->s->freq : 100) < 0)
		q = NULL;
	curl_free(esc);
	if (!q) {
		free(pprof);
		return -ENOMEM;
	}
	it->query = q;
	/*
	 * How the store is to read the sample types: Go's defaults but for
	 * alloc_*, which are the interval's (not cumulative since the start,
	 * as Go's own heap profiles are)
	 */
	f = open_memstream(&cfg, &cfg_len);
	if (!f) {
		free(pprof);
		return -ENOMEM;
	}
	json__init(&j, f);
	json__begin_object(&j, NULL);
	if (!b->heap) {
		json__begin_object(&j, "samples");
		json__string(&j, "units", "samples");
		json__string(&j, "display-name", "cpu");
		json__bool(&j, "sampled", true);
		json__end_object(&j);
	} else {
		static const char *const types[] = { "alloc_objects", "alloc_space",
						     "inuse_objects", "inuse_space" };

		for (int i = 0; i < 4; i++) {
			json__begin_object(&j, types[i]);
			json__string(&j, "units", i & 1 ? "bytes" : "objects");
			json__string(&j, "aggregation", i < 2 ? "sum" : "average");
			json__bool(&j, "cumulative", false);
			json__end_object(&j);
		}
	}
	json__end_object(&j);
	err = json__finish(&j);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(cfg);
		free(pprof);
		return err;
	}
	err = push_item__add(it, "profile", "profile.pprof", "application/octet-stream", pprof,
			     len);
	if (!err)
		err = push_item__add(it, "sample_type_config", "sample_type_config.json",
				     "application/json", cfg, cfg_len);
	else
		free(cfg);
	return err;
}

/* A UUID for the request, the same each time the request is built. */
static void request_uuid(const struct build *b, char out[37])
{
	char key[PATH_MAX + 256];
	uint64_t h1, h2;
	unsigned char u[16];

	snprintf(key, sizeof(key), "%s\x1f%s\x1f%llu\x1f%llu\x1f%s", b->s->path,
		 b->spec->dest.key, (unsigned long long)b->from_ms, (unsigned long long)b->to_ms,
		 b->part);
	h1 = hashmap__hash_str(key);
	h2 = hashmap__hash_u64(h1 ^ 0x9e3779b97f4a7c15ULL);
	for (int i = 0; i < 8; i++) {
		u[i] = (h1 >> (8 * i)) & 0xff;
		u[8 + i] = (h2 >> (8 * i)) & 0xff;
	}
	u[6] = (u[6] & 0x0f) | 0x40;	/* version 4's layout */
	u[8] = (u[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
}

/* Pyroscope Connect: a PushRequest of one series. */
static int connect_item(struct build *b, const struct labels *l, void *pprof, size_t len,
			struct push_item *it)
{
	Push__V1__PushRequest req = PUSH__V1__PUSH_REQUEST__INIT;
	Push__V1__RawProfileSeries series = PUSH__V1__RAW_PROFILE_SERIES__INIT, *sp = &series;
	Push__V1__RawSample sample = PUSH__V1__RAW_SAMPLE__INIT, *smp = &sample;
	Push__V1__LabelPair pairs[MAX_LABELS + 2], *pp[MAX_LABELS + 2];
	char id[37];
	size_t n = 0, size;
	void *body;

	push__v1__label_pair__init(&pairs[n]);
	pairs[n].name = "__name__";
	pairs[n++].value = b->heap ? "memory" : "process_cpu";
	/* the alloc_* values are the interval's already: no delta to compute */
	push__v1__label_pair__init(&pairs[n]);
	pairs[n].name = "__delta__";
	pairs[n++].value = "false";
	for (size_t i = 0; i < l->n; i++) {
		push__v1__label_pair__init(&pairs[n]);
		pairs[n].name = l->v[i].name;
		pairs[n++].value = l->v[i].value;
	}
	for (size_t i = 0; i < n; i++)
		pp[i] = &pairs[i];
	request_uuid(b, id);
	sample.raw_profile.data = pprof;
	sample.raw_profile.len = len;
	sample.id = id;
	series.labels = pp;
	series.n_labels = n;
	series.samples = &smp;
	series.n_samples = 1;
	req.series = &sp;
	req.n_series = 1;
	size = push__v1__push_request__get_packed_size(&req);
	body = malloc(size ? size : 1);
	if (!body) {
		free(pprof);
		return -ENOMEM;
	}
	push__v1__push_request__pack(&req, body);
	free(pprof);
	it->content_type = strdup("application/proto");
	if (!it->content_type) {
		free(body);
		return -ENOMEM;
	}
	return push_item__add(it, NULL, NULL, NULL, body, size);
}

static char *base64(const unsigned char *d, size_t len)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc(4 * ((len + 2) / 3) + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < len ? (uint32_t)d[i + 1] << 8 : 0) |
			     (i + 2 < len ? d[i + 2] : 0);

		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < len ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < len ? tab[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

/* Parca: WriteRawRequest as its HTTP gateway takes it (JSON, bytes in base64). */
static int parca_item(struct build *b, const struct labels *l, void *pprof, size_t len,
		      struct push_item *it)
{
	char *raw = base64(pprof, len), *body = NULL;
	size_t size = 0;
	struct json j;
	FILE *f;
	int err;

	free(pprof);
	if (!raw)
		return -ENOMEM;
	f = open_memstream(&body, &size);
	if (!f) {
		free(raw);
		return -ENOMEM;
	}
	json__init(&j, f);
	json__begin_object(&j, NULL);
	json__begin_array(&j, "series");
	json__begin_object(&j, NULL);
	json__begin_object(&j, "labels");
	json__begin_array(&j, "labels");
	json__begin_object(&j, NULL);
	json__string(&j, "name", "__name__");
	json__string(&j, "value", b->heap ? "memory" : "process_cpu");
	json__end_object(&j);
	for (size_t i = 0; i < l->n; i++) {
		json__begin_object(&j, NULL);
		json__string(&j, "name", l->v[i].name);
		json__string(&j, "value", l->v[i].value);
		json__end_object(&j);
	}
	json__end_array(&j);
	json__end_object(&j);
	json__begin_array(&j, "samples");
	json__begin_object(&j, NULL);
	json__string(&j, "rawProfile", raw);
	json__end_object(&j);
	json__end_array(&j);
	json__end_object(&j);
	json__end_array(&j);
	/* the addresses are the files' own where the file is the one that ran (pprof.h) */
	json__bool(&j, "normalized", true);
	json__end_object(&j);
	err = json__finish(&j);
	free(raw);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(body);
		return err;
	}
	it->content_type = strdup("application/json");
	if (!it->content_type) {
		free(body);
		return -ENOMEM;
	}
	return push_item__add(it, NULL, NULL, NULL, body, size);
}

/* OTLP: the resource's attributes, by the semantic conventions' names. */
static int otlp_item(struct build *b, const struct labels *l, struct push_item *it)
{
	struct otlp_attr a[MAX_LABELS + 4];
	size_t n = 0, len;
	void *body;
	int err;

	a[n++] = (struct otlp_attr){ .key = "service.name", .str = label_get(l, "service_name") };
	a[n++] = (struct otlp_attr){ .key = "host.name", .str = label_get(l, "hostname") };
	a[n++] = (struct otlp_attr){ .key = "process.pid", .num = b->pid, .is_int = 1 };
	if (b->proc && b->proc->exe) {
		a[n++] = (struct otlp_attr){ .key = "process.executable.name",
					     .str = base_name(b->proc->exe) };
		a[n++] = (struct otlp_attr){ .key = "process.executable.path",
					     .str = b->proc->exe };
	}
	/* container_id is the semantic conventions' container.id */
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, "service_name") && strcmp(l->v[i].name, "hostname") &&
		    strcmp(l->v[i].name, "pid"))
			a[n++] = (struct otlp_attr){
				.key = strcmp(l->v[i].name, "container_id") ? l->v[i].name :
									      "container.id",
				.str = l->v[i].value };
	err = otlp_profile__encode(b->op, a, n, &body, &len);
	if (err)
		return err;
	it->content_type = strdup("application/x-protobuf");
	if (!it->content_type) {
		free(body);
		return -ENOMEM;
	}
	return push_item__add(it, NULL, NULL, NULL, body, len);
}

/* ---- the interval --------------------------------------------------------- */

static int pprof_bytes(struct pprof *pp, void **buf, size_t *len)
{
	char *mem = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&mem, &size);
	int err;

	if (!f)
		return -ENOMEM;
	err = pprof__write(pp, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(mem);
		return err;
	}
	*buf = mem;
	*len = size;
	return 0;
}

/* The request of the process being read, when it had data. */
static int flush(struct build *b)
{
	struct push_item it = { 0 };
	struct labels l;
	void *payload = NULL;
	size_t len = 0;
	int err = 0;

	if (!b->active || b->skipping || !b->n_stacks)
		goto out;
	labels_of(b->s, b->spec, b->pid, &l);
	it.profile = strdup(b->s->path);
	it.dest = strdup(b->spec->dest.key);
	it.part = strdup(b->part);
	it.from_ms = b->from_ms;
	it.to_ms = b->to_ms;
	it.interval_ms = b->interval_ms;
	if (!it.profile || !it.dest || !it.part) {
		err = -ENOMEM;
		goto out;
	}
	if (b->spec->dest.format != PUSH_OTLP) {
		err = pprof_bytes(b->pp, &payload, &len);
		if (err)
			goto out;
	}
	switch (b->spec->dest.format) {
	case PUSH_PYROSCOPE:
		err = pyroscope_item(b, &l, payload, len, &it);
		break;
	case PUSH_PYROSCOPE_CONNECT:
		err = connect_item(b, &l, payload, len, &it);
		break;
	case PUSH_PARCA:
		err = parca_item(b, &l, payload, len, &it);
		break;
	case PUSH_OTLP:
		err = otlp_item(b, &l, &it);
		break;
	}
	if (!err) {
		err = b->emit(b->ctx, &it);
		memset(&it, 0, sizeof(it));	/* the callee's now */
	}
out:
	push_item__free(&it);
	pprof__delete(b->pp);
	otlp_profile__delete(b->op);
	b->pp = NULL;
	b->op = NULL;
	b->active = false;
	return err;
}

/* A new process's request: its encoder, with its mappings. */
static int start(struct build *b, int pid)
{
	uint64_t period = 1000000000ULL / (b->s->freq ? b->s->freq : 99);
	struct maps *m = NULL;
	int err;

	b->active = true;
	b->pid = pid;
	b->proc = proc_find(b->s, pid);
	b->n_stacks = 0;
	snprintf(b->part, sizeof(b->part), "%s/%d", b->heap ? "heap" : "cpu", pid);
	b->skipping = b->skip && b->skip(b->ctx, b->part);
	if (b->skipping)
		return 0;
	err = maps__from_profile_pid(b->s->db, pid, &m);
	/* a child forked without exec: its parent's mappings, the target's */
	if (!err && !m)
		err = maps__from_profile(b->s->db, &m);
	if (err)
		return err;
	if (b->spec->dest.format == PUSH_OTLP) {
		b->op = otlp_profile__new(b->heap ? PPROF_HEAP : PPROF_CPU, period, interval_ns(b),
					  duration_ns(b));
		err = b->op ? otlp_profile__add_maps(b->op, m) : -ENOMEM;
	} else {
		b->pp = pprof__new(b->heap ? PPROF_HEAP : PPROF_CPU, period, interval_ns(b),
				   duration_ns(b));
		err = b->pp ? pprof__add_maps(b->pp, m) : -ENOMEM;
	}
	maps__delete(m);
	return err;
}

static int stack_cb(const struct prof_stack *st, void *ctx)
{
	struct build *b = ctx;
	int err;

	if (!b->active || st->pid != b->pid) {
		err = flush(b);
		if (!err)
			err = start(b, st->pid);
		if (err)
			return err;
	}
	if (b->skipping)
		return 0;
	/*
	 * What a process that ended before the interval left live is not
	 * the interval's: only what it allocated in it (nothing) would be
	 */
	if (b->heap && b->proc && b->proc->end_ms >= 0 &&
	    (uint64_t)b->proc->end_ms <= b->from_ms && !st->alloc_count)
		return 0;
	b->n_stacks++;
	return b->op ? otlp_profile__add(b->op, st) : pprof__add(b->pp, st);
}

int push_source__build(struct push_source *s, const struct push_spec *spec, uint64_t from_ms,
		       uint64_t to_ms, uint64_t interval_ms, bool (*skip)(void *ctx, const char *part),
		       int (*emit)(void *ctx, struct push_item *it), void *ctx)
{
	struct build b = {
		.s = s, .spec = spec, .from_ms = from_ms, .to_ms = to_ms, .interval_ms = interval_ms,
		.skip = skip, .emit = emit, .ctx = ctx,
	};
	struct query_filter f;
	int err;

	err = db__snapshot_begin(s->db);
	if (err)
		return err;
	procs_free(s);
	err = db_query_processes(s->db, proc_cb, s);
	query_filter__init(&f);
	f.win.from_ms = from_ms + 1;	/* (from_ms, to_ms] */
	f.win.to_ms = to_ms;
	for (int k = 0; k < 2 && !err; k++) {
		b.heap = k == 1;
		if (b.heap ? !s->heap : !s->cpu)
			continue;
		b.active = false;
		err = db_query_stacks_by_pid(s->db, &f, b.heap, stack_cb, &b);
		if (!err)
			err = flush(&b);
		pprof__delete(b.pp);
		otlp_profile__delete(b.op);
		b.pp = NULL;
		b.op = NULL;
	}
	db__snapshot_end(s->db);
	return err;
}
