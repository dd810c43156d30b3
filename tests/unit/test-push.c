/*
 * util/push: the store's URL and protocol, a request's encoding, the
 * spool's bound and lock, and the OTLP export's dictionary rules.
 */
#include "util/push/dest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/db/read/query.h"
#include "util/push/item.h"
#include "util/push/otlp.h"
#include "util/push/proto/otlp-profiles.pb-c.h"
#include "util/push/spool.h"
#include "util/symbols/symbol.h"

#include "tap.h"

static void dest(const char *url, const char *format, int want_err, enum push_format want_f,
		 const char *want_url)
{
	struct push_dest d;
	int err = push_dest__parse(url, format, &d);

	is_int(err, want_err, "%s (%s): %s", url, format ? format : "by path",
	       want_err ? "refused" : "parsed");
	if (!err && !want_err) {
		is_int(d.format, want_f, "%s: %s", url, push_format__name(want_f));
		is_str(d.url, want_url, "%s: the URL posted to", url);
		is_str(d.key, want_url, "%s: the store's name", url);
		push_dest__free(&d);
	}
}

static void test_dest(void)
{
	struct push_dest d;

	dest("http://localhost:4040", NULL, 0, PUSH_PYROSCOPE, "http://localhost:4040/ingest");
	dest("http://localhost:4040/", NULL, 0, PUSH_PYROSCOPE, "http://localhost:4040/ingest");
	dest("http://h:4040/ingest", NULL, 0, PUSH_PYROSCOPE, "http://h:4040/ingest");
	dest("http://h:4040/push.v1.PusherService/Push", NULL, 0, PUSH_PYROSCOPE_CONNECT,
	     "http://h:4040/push.v1.PusherService/Push");
	dest("http://h:4040", "pyroscope-connect", 0, PUSH_PYROSCOPE_CONNECT,
	     "http://h:4040/push.v1.PusherService/Push");
	dest("http://h:7070/api/profiles/writeraw", NULL, 0, PUSH_PARCA,
	     "http://h:7070/api/profiles/writeraw");
	dest("http://h:7070/profiles/writeraw", NULL, 0, PUSH_PARCA,
	     "http://h:7070/profiles/writeraw");
	dest("http://h:7070", "parca", 0, PUSH_PARCA, "http://h:7070/api/profiles/writeraw");
	dest("https://h:4318/v1development/profiles", NULL, 0, PUSH_OTLP,
	     "https://h:4318/v1development/profiles");
	dest("http://h/prefix/", "otlp", 0, PUSH_OTLP, "http://h/prefix/v1development/profiles");
	/* refused: what a store cannot be */
	dest("ftp://h/", NULL, -EINVAL, 0, NULL);
	dest("not a url", NULL, -EINVAL, 0, NULL);
	dest("http://h/ingest?x=1", NULL, -EINVAL, 0, NULL);
	dest("http://h/ingest", "otlp", -EINVAL, 0, NULL);
	dest("http://h", "zipkin", -EINVAL, 0, NULL);
	/* credentials in the URL: taken out, never in the name */
	if (ok(!push_dest__parse("https://alice:s%3Acret@h:4040", NULL, &d), "credentials")) {
		is_str(d.user, "alice", "the user from the URL");
		is_str(d.password, "s:cret", "the password, decoded");
		is_str(d.key, "https://h:4040/ingest", "no credentials in the store's name");
		push_dest__free(&d);
	}
}

static void *dup_bytes(const char *s)
{
	return strdup(s);
}

static void item_fill(struct push_item *it, const char *profile, uint64_t from, const char *part)
{
	memset(it, 0, sizeof(*it));
	it->profile = strdup(profile);
	it->dest = strdup("http://h/ingest");
	it->part = strdup(part);
	it->from_ms = from;
	it->to_ms = from + 1000;
	it->interval_ms = 1000;
	it->query = strdup("?name=x%7B%7D");
	push_item__add(it, "profile", "profile.pprof", "application/octet-stream",
		       dup_bytes("0123456789abcdef0123456789abcdef"), 32);
	push_item__add(it, "sample_type_config", NULL, "application/json", dup_bytes("{}"), 2);
}

static void test_item(void)
{
	struct push_item it, back;
	void *buf;
	size_t len;

	item_fill(&it, "/p.db", 5000, "cpu/42");
	ok(!push_item__encode(&it, &buf, &len), "an item encodes");
	if (ok(!push_item__decode(buf, len, &back), "and decodes")) {
		is_str(back.profile, "/p.db", "profile");
		is_str(back.part, "cpu/42", "part");
		is_int(back.from_ms, 5000, "from_ms");
		is_int(back.to_ms, 6000, "to_ms");
		is_int(back.interval_ms, 1000, "interval_ms");
		is_str(back.query, "?name=x%7B%7D", "query");
		ok(!back.content_type, "multipart: no content type");
		is_int(back.n_parts, 2, "two parts");
		is_str(back.parts[1].name, "sample_type_config", "the second part's name");
		ok(!back.parts[1].filename, "no filename where none was");
		ok(back.parts[0].len == 32 && !memcmp(back.parts[0].data, it.parts[0].data, 32),
		   "the data, byte for byte");
		push_item__free(&back);
	}
	/* every shorter prefix is refused, never read past */
	for (size_t n = 0; n < len; n += 7)
		if (!push_item__decode(buf, n, &back)) {
			ok(0, "a truncated item (%zu of %zu bytes) is refused", n, len);
			push_item__free(&back);
			break;
		}
	ok(1, "truncated items refused");
	((unsigned char *)buf)[0] ^= 1;
	ok(push_item__decode(buf, len, &back) == -EINVAL, "another file's bytes: -EINVAL");
	free(buf);
	push_item__free(&it);
}

static int dropped;

static void on_drop(void *ctx, const struct spool_entry *e)
{
	dropped++;
	ok(e->from_ms == 0, "the oldest request is dropped first (from %llu)",
	   (unsigned long long)e->from_ms);
}

static void test_spool(void)
{
	char dir[] = "/tmp/rsprof-test-spool.XXXXXX";
	char sub[64], tmp[128];
	struct spool *s, *s2;
	struct push_item it;
	const struct spool_entry *e;
	struct spool_stats st;
	void *buf;
	size_t len;
	int fd;

	if (!ok(mkdtemp(dir), "a scratch directory"))
		return;
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	item_fill(&it, "/p.db", 0, "cpu/1");
	push_item__encode(&it, &buf, &len);
	free(buf);
	/* room for two items, not three */
	if (!ok(!spool__open(sub, 2 * len + len / 2, &s), "open makes the directories"))
		return;
	ok(spool__open(sub, 1 << 20, &s2) == -EBUSY, "a second rsprof is refused (-EBUSY)");
	ok(!spool__add(s, &it, on_drop, NULL), "add 1");
	push_item__free(&it);
	item_fill(&it, "/p.db", 1000, "cpu/1");
	ok(!spool__add(s, &it, on_drop, NULL), "add 2");
	push_item__free(&it);
	item_fill(&it, "/q.db", 2000, "heap/2");
	ok(!spool__add(s, &it, on_drop, NULL), "add 3: past the bound");
	push_item__free(&it);
	is_int(dropped, 1, "one request dropped");
	spool__stats(s, &st);
	is_int(st.items, 2, "two left");
	is_int(st.dropped, 1, "the drop counted");
	is_int(spool__count(s, "http://h/ingest"), 2, "both for the store");
	e = spool__oldest(s, "http://h/ingest", "/q.db");
	ok(e && e->from_ms == 2000, "the oldest of a profile");
	ok(spool__has(s, "http://h/ingest", "/p.db", 1000, 2000, "cpu/1"), "has: yes");
	ok(!spool__has(s, "http://h/ingest", "/p.db", 0, 1000, "cpu/1"), "has: the dropped one, no");
	spool__close(s);
	/* a write cut short leaves a .tmp: the next open removes it */
	snprintf(tmp, sizeof(tmp), "%s/00000000000000ff.tmp", sub);
	fd = open(tmp, O_WRONLY | O_CREAT, 0600);
	close(fd);
	if (ok(!spool__open(sub, 1 << 20, &s), "open again")) {
		spool__stats(s, &st);
		is_int(st.items, 2, "the items are still there");
		ok(access(tmp, F_OK), "the .tmp is gone");
		e = spool__oldest(s, "http://h/ingest", NULL);
		if (ok(e && e->from_ms == 1000, "in their order")) {
			struct push_item back;

			ok(!spool__read(s, e->id, &back), "read");
			is_str(back.profile, "/p.db", "what was written");
			push_item__free(&back);
			ok(!spool__remove(s, e->id), "remove");
		}
		is_int(spool__count(s, "http://h/ingest"), 1, "one left");
		ok(spool__next_id(s) > 3, "new items come after the old ones");
		spool__close(s);
	}
	chmod(sub, 0755);
	ok(spool__open(sub, 1 << 20, &s) == -EPERM, "a spool open to others is refused");
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		ok(!system(cmd), "clean up");
	}
}

static void test_otlp(void)
{
	struct frame lines[2] = { { "src/a.c", 10, "inner" }, { "src/a.c", 20, "outer" } };
	struct prof_frame frames[2] = {
		{ .addr = 0x1000, .module = "/bin/prog", .lines = lines, .n_lines = 2,
		  .mangled = "outer_sym", .outermost = true },
		{ .addr = 0x2000, .module = "/bin/prog", .lines = &lines[1], .n_lines = 1,
		  .outermost = true },
	};
	struct prof_stack st = { .frames = frames, .depth = 2, .value = 100, .count = 3,
				 .alloc_value = 400, .alloc_count = 7 };
	struct otlp_attr attr = { .key = "service.name", .str = "prog" };
	struct otlp_profile *o = otlp_profile__new(PPROF_HEAP, 1, 1000, 2000);
	Otlp__ExportProfilesServiceRequest *req;
	Otlp__ProfilesDictionary *d;
	void *buf;
	size_t len;

	if (!ok(o, "an OTLP profile"))
		return;
	ok(!otlp_profile__add(o, &st), "a stack");
	ok(!otlp_profile__add(o, &st), "the same stack again");
	ok(!otlp_profile__encode(o, &attr, 1, &buf, &len), "encoded");
	req = otlp__export_profiles_service_request__unpack(NULL, len, buf);
	if (!ok(req && req->dictionary && req->n_resource_profiles == 1, "unpacks"))
		goto out;
	d = req->dictionary;
	ok(d->n_string_table && !strcmp(d->string_table[0], ""), "string_table[0] is \"\"");
	ok(d->n_mapping_table && !d->mapping_table[0]->filename_strindex &&
	   !d->mapping_table[0]->memory_limit, "mapping_table[0] is the zero value");
	ok(d->n_location_table && !d->location_table[0]->n_lines, "location_table[0] is zero");
	ok(d->n_function_table && !d->function_table[0]->name_strindex, "function_table[0] zero");
	ok(d->n_stack_table == 2 && !d->stack_table[0]->n_location_indices,
	   "stack_table[0] zero, one stack besides (deduplicated)");
	ok(d->n_link_table == 1 && d->n_attribute_table >= 1, "link and attribute tables present");
	is_int(d->n_location_table, 3, "two locations (and the zero one)");
	is_int(d->location_table[1]->n_lines, 2, "the inline chain as two lines");
	is_str(d->string_table[d->function_table[d->location_table[1]->lines[0]->function_index]
				->name_strindex], "inner", "innermost first");
	{
		Otlp__ScopeProfiles *sp = req->resource_profiles[0]->scope_profiles[0];
		static const char *const types[] = { "alloc_objects", "alloc_space",
						     "inuse_objects", "inuse_space" };
		static const int64_t want[] = { 14, 800, 6, 200 };

		is_int(sp->n_profiles, 4, "four heap profiles");
		for (size_t i = 0; i < sp->n_profiles && i < 4; i++) {
			int64_t sum = 0;

			for (size_t k = 0; k < sp->profiles[i]->n_samples; k++)
				sum += sp->profiles[i]->samples[k]->values[0];
			is_str(d->string_table[sp->profiles[i]->sample_type->type_strindex], types[i],
			       "profile %zu's type", i);
			is_int(sum, want[i], "%s adds up", types[i]);
		}
		is_str(req->resource_profiles[0]->resource->attributes[0]->value->string_value,
		       "prog", "the resource's service.name");
	}
out:
	otlp__export_profiles_service_request__free_unpacked(req, NULL);
	free(buf);
	otlp_profile__delete(o);
}

int main(void)
{
	test_dest();
	test_item();
	test_spool();
	test_otlp();
	return done_testing();
}
