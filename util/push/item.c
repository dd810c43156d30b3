#include "util/push/item.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC		"rsprof push item 1\n"

enum {
	T_PROFILE = 1, T_DEST, T_FROM, T_TO, T_PART, T_QUERY, T_CTYPE,
	T_PNAME, T_PFILE, T_PTYPE, T_PDATA, T_INTERVAL,
};

void push_item__free(struct push_item *it)
{
	free(it->profile);
	free(it->dest);
	free(it->part);
	free(it->query);
	free(it->content_type);
	for (size_t i = 0; i < it->n_parts; i++) {
		free(it->parts[i].name);
		free(it->parts[i].filename);
		free(it->parts[i].type);
		free(it->parts[i].data);
	}
	free(it->parts);
	memset(it, 0, sizeof(*it));
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*oom = true;
	return d;
}

int push_item__add(struct push_item *it, const char *name, const char *filename,
		   const char *type, void *data, size_t len)
{
	struct push_blob *v = realloc(it->parts, (it->n_parts + 1) * sizeof(*v));
	bool oom = false;

	if (!v) {
		free(data);
		return -ENOMEM;
	}
	it->parts = v;
	v = &it->parts[it->n_parts++];
	memset(v, 0, sizeof(*v));
	v->data = data;
	v->len = len;
	v->name = dup_or_null(name, &oom);
	v->filename = dup_or_null(filename, &oom);
	v->type = dup_or_null(type, &oom);
	return oom ? -ENOMEM : 0;
}

struct wbuf {
	unsigned char *b;
	size_t n, cap;
	bool oom;
};

static void put(struct wbuf *w, const void *d, size_t len)
{
	if (w->oom)
		return;
	if (w->n + len > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		unsigned char *b;

		while (cap < w->n + len)
			cap *= 2;
		b = realloc(w->b, cap);
		if (!b) {
			w->oom = true;
			return;
		}
		w->b = b;
		w->cap = cap;
	}
	if (len)
		memcpy(w->b + w->n, d, len);
	w->n += len;
}

static void field(struct wbuf *w, int tag, const void *d, size_t len)
{
	unsigned char h[5] = { (unsigned char)tag, len & 0xff, (len >> 8) & 0xff,
			       (len >> 16) & 0xff, (len >> 24) & 0xff };

	if (len > UINT32_MAX) {
		w->oom = true;
		return;
	}
	put(w, h, sizeof(h));
	put(w, d, len);
}

static void field_str(struct wbuf *w, int tag, const char *s)
{
	if (s)
		field(w, tag, s, strlen(s));
}

static void field_u64(struct wbuf *w, int tag, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (v >> (8 * i)) & 0xff;
	field(w, tag, b, sizeof(b));
}

int push_item__encode(const struct push_item *it, void **buf, size_t *len)
{
	struct wbuf w = { 0 };

	put(&w, MAGIC, strlen(MAGIC));
	field_str(&w, T_PROFILE, it->profile);
	field_str(&w, T_DEST, it->dest);
	field_u64(&w, T_FROM, it->from_ms);
	field_u64(&w, T_TO, it->to_ms);
	field_u64(&w, T_INTERVAL, it->interval_ms);
	field_str(&w, T_PART, it->part);
	field_str(&w, T_QUERY, it->query);
	field_str(&w, T_CTYPE, it->content_type);
	for (size_t i = 0; i < it->n_parts; i++) {
		const struct push_blob *p = &it->parts[i];

		field_str(&w, T_PNAME, p->name ? p->name : "");
		field_str(&w, T_PFILE, p->filename);
		field_str(&w, T_PTYPE, p->type);
		field(&w, T_PDATA, p->data, p->len);
	}
	if (w.oom) {
		free(w.b);
		return -ENOMEM;
	}
	*buf = w.b;
	*len = w.n;
	return 0;
}

static char *take_str(const unsigned char *d, size_t len, bool *oom)
{
	char *s;

	if (memchr(d, '\0', len))
		return NULL;	/* not a string of ours */
	s = malloc(len + 1);
	if (!s) {
		*oom = true;
		return NULL;
	}
	memcpy(s, d, len);
	s[len] = '\0';
	return s;
}

int push_item__decode(const void *buf, size_t len, struct push_item *it)
{
	const unsigned char *p = buf, *end = p + len;
	struct push_blob *cur = NULL;
	size_t ml = strlen(MAGIC);
	bool oom = false, bad = false;

	memset(it, 0, sizeof(*it));
	if (len < ml || memcmp(p, MAGIC, ml))
		return -EINVAL;
	p += ml;
	while (p < end && !oom && !bad) {
		uint32_t n;
		int tag;
		char **slot = NULL;

		if (end - p < 5) {
			bad = true;
			break;
		}
		tag = p[0];
		n = (uint32_t)p[1] | (uint32_t)p[2] << 8 | (uint32_t)p[3] << 16 |
		    (uint32_t)p[4] << 24;
		p += 5;
		if ((size_t)(end - p) < n) {
			bad = true;
			break;
		}
		switch (tag) {
		case T_PROFILE: slot = &it->profile; break;
		case T_DEST: slot = &it->dest; break;
		case T_PART: slot = &it->part; break;
		case T_QUERY: slot = &it->query; break;
		case T_CTYPE: slot = &it->content_type; break;
		case T_FROM:
		case T_TO:
		case T_INTERVAL: {
			uint64_t v = 0;

			if (n != 8) {
				bad = true;
				break;
			}
			for (int i = 0; i < 8; i++)
				v |= (uint64_t)p[i] << (8 * i);
			if (tag == T_FROM)
				it->from_ms = v;
			else if (tag == T_TO)
				it->to_ms = v;
			else
				it->interval_ms = v;
			break;
		}
		case T_PNAME:
			if (push_item__add(it, NULL, NULL, NULL, NULL, 0)) {
				oom = true;
				break;
			}
			cur = &it->parts[it->n_parts - 1];
			slot = &cur->name;
			break;
		case T_PFILE:
		case T_PTYPE:
			if (!cur) {
				bad = true;
				break;
			}
			slot = tag == T_PFILE ? &cur->filename : &cur->type;
			break;
		case T_PDATA:
			if (!cur || cur->data) {
				bad = true;
				break;
			}
			cur->data = malloc(n ? n : 1);
			if (!cur->data) {
				oom = true;
				break;
			}
			memcpy(cur->data, p, n);
			cur->len = n;
			break;
		default:
			bad = true;
			break;
		}
		if (slot) {
			if (*slot) {
				bad = true;
			} else {
				*slot = take_str(p, n, &oom);
				bad = !*slot && !oom;
			}
		}
		p += n;
	}
	if (!oom && !bad && (!it->profile || !it->dest || !it->part || !it->n_parts))
		bad = true;
	for (size_t i = 0; !bad && i < it->n_parts; i++)
		bad = !it->parts[i].data;
	if (oom || bad) {
		push_item__free(it);
		return oom ? -ENOMEM : -EINVAL;
	}
	return 0;
}
