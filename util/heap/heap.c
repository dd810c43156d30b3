/*
 * Heap tracking (SPEC §6, issue 3): loads bpf/heap.bpf.c, attaches it to the
 * target's allocator (util/heap/alloc-syms.c), and once per checkpoint turns the
 * kernel's running per-stack counters into deltas attributed to the user's
 * line (util/heap/attrib.c).
 *
 * Loader order as libbpf-tools do it: open, set rodata and map sizes, load,
 * attach each probe for the target's pid only (the program checks the tgid
 * too), read maps; destroy at the end.
 */
#include "util/heap/heap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "heap.skel.h"
#include "bpf/heap.h"
#include "util/heap/alloc-syms.h"
#include "util/db/db.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/heap/attrib.h"
#include "util/record/maps.h"
#include "util/symbols/resolver.h"
#include "util/symbols/symbol.h"

/* enum bpf_attach_type in kernels since 6.13; not in Debian 12's headers */
#define RSPROF_BPF_TRACE_UPROBE_MULTI	48
#define RSPROF_BPF_TRACE_UPROBE_SESSION 57

/* Live allocations tracked at once; beyond that they are counted as dropped. */
#define HEAP_LIVE_MAX	(1u << 20)

/* What user space remembers of one kernel stack key. */
struct stack_state {
	uint64_t key;
	struct heap_site last;		/* counters at the previous collect */
	uint64_t site;			/* attributed site address */
	int64_t stack_id;		/* -1: stack not captured */
};

struct heap {
	struct heap_bpf *skel;
	struct bpf_link **links;
	size_t n_links;
	int *multi_fds;			/* uprobe_multi links */
	size_t n_multi_fds;
	bool multi;			/* session + uprobe_multi programs, not pairs */
	struct alloc_syms *syms;
	enum heap_attribution attr;
	const struct alloc_fns *fns;
	unsigned int sample;
	pid_t pid;
	int code_fd;			/* the executable, to check call instructions */
	char *code_path;

	struct stack_state *states;	/* every kernel stack key seen */
	size_t n_states, cap_states;
	struct hashmap by_key;		/* stack key -> index in states */
	struct hashmap seen;		/* addresses already handed out as new */

	/* this checkpoint's output, owned until the next collect */
	struct heap_count *rows;
	size_t n_rows, cap_rows;
	struct stack_rec *stacks;
	size_t n_stacks, cap_stacks;

	uint64_t allocs, frees;		/* scaled totals */
	int64_t live, peak;
	uint64_t stats[HEAP_STAT_MAX];	/* kernel counters, summed over CPUs */
	uint64_t dropped_reported;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (verbose < 2 && level != LIBBPF_WARN)
		return 0;
	if (verbose < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* --- the stack table ---------------------------------------------------- */

static struct stack_state *tab_find(struct heap *h, uint64_t key)
{
	uint64_t i;

	return hashmap__get(&h->by_key, key, &i) ? &h->states[i] : NULL;
}

static struct stack_state *tab_add(struct heap *h, uint64_t key)
{
	struct stack_state *st;

	if (h->n_states == h->cap_states) {
		size_t cap = h->cap_states ? h->cap_states * 2 : 256;
		struct stack_state *v = realloc(h->states, cap * sizeof(*v));

		if (!v)
			return NULL;
		h->states = v;
		h->cap_states = cap;
	}
	if (hashmap__set(&h->by_key, key, h->n_states))
		return NULL;
	st = &h->states[h->n_states++];
	memset(st, 0, sizeof(*st));
	st->key = key;
	st->stack_id = -1;
	return st;
}

static int add_new_addr(struct heap *h, uint64_t addr, uint64_t **na, size_t *n, size_t *cap)
{
	bool added;
	int err;

	if (!addr)
		return 0;
	err = hashmap__add(&h->seen, addr, 1, &added);
	if (err || !added)
		return err;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		uint64_t *v = realloc(*na, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		*na = v;
		*cap = c;
	}
	(*na)[(*n)++] = addr;
	return 0;
}

/* --- loading and attaching ---------------------------------------------- */

static int attach_one(struct heap *h, struct bpf_program *prog, const struct alloc_probe *p,
		      bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .bpf_cookie = p->kind, .retprobe = ret);
	struct bpf_link *l, **v;
	int err;

	v = realloc(h->links, (h->n_links + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	h->links = v;
	l = bpf_program__attach_uprobe_opts(prog, h->pid, p->path, p->offset, &uo);
	if (!l) {
		err = -errno;
		if (p->optional)
			pr_debug(1, "heap: cannot attach a uprobe to %s in %s: %s", p->name,
				 p->path, strerror(-err));
		else
			pr_err("cannot attach a uprobe to %s in %s: %s", p->name, p->path,
			       strerror(-err));
		return err;
	}
	h->links[h->n_links++] = l;
	return 0;
}

/*
 * Open the object and load it: multi (the allocation functions as one
 * session program, the frees as one uprobe_multi program, kernel 6.13+)
 * or classic (uprobe + uretprobe per function, one perf event each).
 */
static int load(struct heap *h, const struct heap_opts *o)
{
	struct heap_bpf *sk = heap_bpf__open();
	int err;

	if (!sk)
		return -errno;
	h->skel = sk;
	sk->rodata->target_tgid = o->pid;
	sk->rodata->sample_every = h->sample;
	bpf_map__set_max_entries(sk->maps.live, HEAP_LIVE_MAX);
	bpf_program__set_autoload(sk->progs.heap_alloc_session, h->multi);
	bpf_program__set_autoload(sk->progs.heap_alloc_enter, !h->multi);
	bpf_program__set_autoload(sk->progs.heap_alloc_return, !h->multi);
	if (h->multi) {
		bpf_program__set_expected_attach_type(sk->progs.heap_alloc_session,
						      RSPROF_BPF_TRACE_UPROBE_SESSION);
		bpf_program__set_expected_attach_type(sk->progs.heap_free_enter,
						      RSPROF_BPF_TRACE_UPROBE_MULTI);
	}
	err = heap_bpf__load(sk);
	return err < 0 ? err : (err ? -errno : 0);
}

/*
 * BPF_LINK_CREATE of a uprobe_multi link (kernel 6.6+; sessions 6.13+):
 * the union bpf_attr of Debian 12's headers and libbpf 1.1 predate it, so
 * the layout is spelled out here, as the kernel defines it.
 */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t uflags;
	uint32_t pid;
};

/*
 * One link per file for every probe of one side (allocations or frees):
 * a few file descriptors instead of one perf event per probe, which also
 * makes the detach at the end fast (each perf event waits for an RCU
 * grace period when it goes).
 */
static int attach_multi(struct heap *h, struct bpf_program *prog, uint32_t type, bool frees)
{
	size_t n = h->syms->n;
	uint64_t *offs = calloc(n, sizeof(*offs)), *cookies = calloc(n, sizeof(*cookies));
	int err = 0;

	if (!offs || !cookies) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && !err; i++) {
		const struct alloc_probe *p = &h->syms->v[i];
		union {
			struct link_create_uprobe_multi lc;
			char bytes[256];	/* the kernel wants the rest zero */
		} attr;
		uint32_t cnt = 0;
		bool first = true;
		int fd, *v;

		if (p->is_free != frees)
			continue;
		for (size_t j = 0; j < i; j++)
			if (h->syms->v[j].is_free == frees && !strcmp(h->syms->v[j].path, p->path))
				first = false;
		if (!first)
			continue;
		for (size_t j = i; j < n; j++) {
			if (h->syms->v[j].is_free != frees || strcmp(h->syms->v[j].path, p->path))
				continue;
			offs[cnt] = h->syms->v[j].offset;
			cookies[cnt++] = h->syms->v[j].kind;
		}
		memset(&attr, 0, sizeof(attr));
		attr.lc.prog_fd = bpf_program__fd(prog);
		attr.lc.attach_type = type;
		attr.lc.path = (uint64_t)(uintptr_t)p->path;
		attr.lc.offsets = (uint64_t)(uintptr_t)offs;
		attr.lc.cookies = (uint64_t)(uintptr_t)cookies;
		attr.lc.cnt = cnt;
		attr.lc.pid = h->pid;
		fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
		if (fd < 0) {
			err = -errno;
			pr_debug(1, "heap: cannot attach uprobe_multi to %s: %s", p->path,
				 strerror(errno));
			break;
		}
		v = realloc(h->multi_fds, (h->n_multi_fds + 1) * sizeof(*v));
		if (!v) {
			close(fd);
			err = -ENOMEM;
			break;
		}
		h->multi_fds = v;
		h->multi_fds[h->n_multi_fds++] = fd;
	}
out:
	free(offs);
	free(cookies);
	return err;
}

static void detach_multi(struct heap *h)
{
	for (size_t i = 0; i < h->n_multi_fds; i++)
		close(h->multi_fds[i]);
	h->n_multi_fds = 0;
}

/* The classic way: a perf event per probe; optional probes may fail. */
static int attach_classic(struct heap *h)
{
	int err = 0;

	for (size_t i = 0; !err && i < h->syms->n; i++) {
		const struct alloc_probe *p = &h->syms->v[i];
		size_t n_links = h->n_links;

		if (p->is_free) {
			err = attach_one(h, h->skel->progs.heap_free_enter, p, false);
		} else {
			/* the entry and the return probe share one breakpoint */
			err = attach_one(h, h->skel->progs.heap_alloc_enter, p, false);
			if (!err)
				err = attach_one(h, h->skel->progs.heap_alloc_return, p, true);
		}
		if (err && p->optional) {
			/* e.g. another tool's probe on the same instruction */
			pr_warn("heap: %s not tracked", p->name);
			while (h->n_links > n_links)
				bpf_link__destroy(h->links[--h->n_links]);
			err = 0;
		}
	}
	return err;
}

int heap__new(const struct heap_opts *o, struct heap **out)
{
	struct heap *h;
	int err;

	*out = NULL;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		pr_err("heap tracking needs kernel BTF: /sys/kernel/btf/vmlinux is missing");
		pr_hint("use a kernel built with CONFIG_DEBUG_INFO_BTF=y, or record with --no-heap");
		return -ENOTSUP;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->pid = o->pid;
	h->attr = o->attribution;
	h->fns = o->alloc_fns;
	h->sample = o->sample ? o->sample : 1;
	h->code_fd = -1;

	err = alloc_syms__find(o->exe, o->pid, o->before_exec, o->probes, &h->syms);
	if (err)
		goto fail;

	libbpf_set_print(libbpf_print);
	/*
	 * Session probes where the kernel has them, else uprobe + uretprobe
	 * (RSPROF_HEAP_CLASSIC=1 forces the latter: for tests of the fallback).
	 */
	h->multi = !getenv("RSPROF_HEAP_CLASSIC");
	err = h->multi ? load(h, o) : -ENOTSUP;
	if (!err)
		err = attach_multi(h, h->skel->progs.heap_alloc_session,
				   RSPROF_BPF_TRACE_UPROBE_SESSION, false);
	if (!err)
		err = attach_multi(h, h->skel->progs.heap_free_enter,
				   RSPROF_BPF_TRACE_UPROBE_MULTI, true);
	if (err) {
		if (h->multi)
			pr_debug(1, "heap: no session uprobes here (%s): uprobe + uretprobe",
				 strerror(-err));
		detach_multi(h);
		heap_bpf__destroy(h->skel);
		h->skel = NULL;
		h->multi = false;
		err = load(h, o);
		if (err) {
			if (err == -EPERM || err == -EACCES) {
				pr_err("no permission to load BPF programs");
				pr_hint("run as root or grant CAP_BPF and CAP_PERFMON, or record with --no-heap");
			} else {
				pr_err("cannot load the heap BPF programs: %s", strerror(-err));
				pr_hint("run with -vv to see the verifier's log, or record with --no-heap");
			}
			goto fail;
		}
		err = attach_classic(h);
	}
	if (err) {
		if (err == -EPERM || err == -EACCES)
			pr_hint("uprobes need CAP_PERFMON and CAP_SYS_ADMIN or root");
		else if (err == -EINVAL)
			pr_hint("another tracer may hold a different probe on the same instruction "
				"(bcc's memleak does); stop it, or record with --no-heap");
		goto fail;
	}
	pr_debug(1, "heap: %zu %s allocator probes attached to pid %d (sample 1/%u, %s)",
		 h->syms->n, h->syms->family, (int)o->pid, h->sample,
		 h->multi ? "session probes" : "uprobe + uretprobe");
	*out = h;
	return 0;
fail:
	heap__delete(h);
	return err;
}

/* --- reading ------------------------------------------------------------ */

static void read_stats(struct heap *h)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;

	if (ncpu <= 0)
		return;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return;
	for (uint32_t k = 0; k < HEAP_STAT_MAX; k++) {
		uint64_t sum = 0;

		if (bpf_map__lookup_elem(h->skel->maps.stats, &k, sizeof(k), v,
					 ncpu * sizeof(*v), 0))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
		h->stats[k] = sum;
	}
	free(v);
}

static uint64_t dropped_total(const struct heap *h)
{
	return h->stats[HEAP_STAT_DROP_LIVE] + h->stats[HEAP_STAT_DROP_STACK] +
	       h->stats[HEAP_STAT_DROP_SITE] + h->stats[HEAP_STAT_DROP_ENTRY];
}

/*
 * A stack seen for the first time: read its frames, resolve them, pick the
 * site by the attribution rule, and queue the stack for the file.
 */
/*
 * Whether the instruction before ret is a call (x86-64: call rel32, and
 * the usual forms of an indirect call), read from the mapped file.
 */
static bool follows_call(struct heap *h, struct resolver *r, uint64_t ret)
{
	const struct maps *m = resolver__maps(r);
	const struct map *mp = m ? maps__find(m, ret) : NULL;
	uint8_t b[8];
	uint64_t off;

	if (!mp || !mp->path || mp->path[0] != '/' || ret - mp->start + mp->pgoff < 8)
		return false;
	if (!h->code_path || strcmp(h->code_path, mp->path)) {
		char rooted[PATH_MAX + 32];

		if (h->code_fd > 0)
			close(h->code_fd);
		free(h->code_path);
		h->code_path = strdup(mp->path);
		/* the target's view of its files first (containers) */
		snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", (int)h->pid, mp->path);
		h->code_fd = open(rooted, O_RDONLY | O_CLOEXEC);
		if (h->code_fd < 0)
			h->code_fd = open(mp->path, O_RDONLY | O_CLOEXEC);
		if (!h->code_path || h->code_fd < 0) {
			h->code_fd = -1;
			return false;
		}
	}
	off = ret - mp->start + mp->pgoff;
	if (h->code_fd < 0 || pread(h->code_fd, b, sizeof(b), off - 8) != sizeof(b))
		return false;
	return b[3] == 0xe8 ||						/* call rel32 */
	       (b[2] == 0xff && (b[3] == 0x15 || (b[3] & 0xf8) == 0x90)) ||	/* disp32 */
	       (b[1] == 0x41 && b[2] == 0xff && (b[3] & 0xf8) == 0x90) ||
	       (b[5] == 0xff && (b[6] & 0xf8) == 0x50) ||			/* disp8 */
	       (b[4] == 0x41 && b[5] == 0xff && (b[6] & 0xf8) == 0x50) ||
	       (b[4] == 0xff && b[5] == 0x54 && b[6] == 0x24) ||		/* disp8(%rsp) */
	       (b[6] == 0xff && ((b[7] & 0xf8) == 0xd0 || (b[7] & 0xf8) == 0x10)) ||
	       (b[5] == 0x41 && b[6] == 0xff && ((b[7] & 0xf8) == 0xd0 || (b[7] & 0xf8) == 0x10));
}

/*
 * A stack seen for the first time: read its frames, resolve them, pick the
 * site by the attribution rule, and queue the stack for the file.
 *
 * When the kernel kept candidates from the stack (a short frame-pointer
 * chain: words pointing into the executable's text, see bpf/heap.bpf.c),
 * those that follow a call instruction are return addresses the chain
 * missed: they are added after the chain, in stack order, before the rule
 * is applied. They are used when the chain holds at most one frame of the
 * program's own code (by its source, wrappers included): with none, they
 * are the site; with one, it may be a wrapper, and its caller must be in
 * the stored stack for the rule to pass over it, now or when a wrapper is
 * named later (report --alloc-fn). A longer chain is a real one (frame
 * pointers): the scan's words would only add stale frames after it.
 */
static int new_stack(struct heap *h, struct resolver *r, struct stack_state *st,
		     uint64_t **na, size_t *nn, size_t *cn)
{
	struct heap_stack ks;
	const struct symbol *syms[HEAP_MAX_DEPTH];
	uint64_t *addrs;
	int depth = 0, chain, site, own = 0, err;
	bool refreshed = false;

	memset(&ks, 0, sizeof(ks));
	if (bpf_map__lookup_elem(h->skel->maps.stacks, &st->key, sizeof(st->key), &ks,
				 sizeof(ks), 0))
		return 0;	/* not stored (map full, counted): site stays 0 */
	addrs = calloc(HEAP_MAX_DEPTH, sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	/* return addresses: - 1 is inside the call instruction, i.e. the call's line */
	while (depth < HEAP_MAX_DEPTH && ks.ips[depth]) {
		addrs[depth] = ks.ips[depth] - 1;
		depth++;
	}
	for (int i = 0; i < depth; i++) {
		syms[i] = r ? resolver__resolve(r, addrs[i]) : NULL;
		if (r && syms[i] && !syms[i]->module && !refreshed && i < 4) {
			/* an address in no known mapping: a library loaded since */
			refreshed = true;
			resolver__refresh_maps(r);
		}
		own += heap_attrib__is_user(syms[i], NULL);
	}
	chain = depth;
	for (int i = 0; r && own < 2 && i < HEAP_MAX_CAND && ks.cand[i]; i++) {
		bool dup = false;

		for (int j = 0; j < depth && !dup; j++)
			dup = addrs[j] == ks.cand[i] - 1;
		if (dup || depth >= HEAP_MAX_DEPTH || !follows_call(h, r, ks.cand[i]))
			continue;
		addrs[depth] = ks.cand[i] - 1;
		syms[depth] = resolver__resolve(r, addrs[depth]);
		depth++;
	}
	if (depth > chain)
		pr_debug(2, "heap: stack %#llx: %d frames from the scan",
			 (unsigned long long)st->key, depth - chain);
	site = heap_attrib__site(syms, depth, h->attr, h->fns, NULL);
	st->site = depth ? addrs[site] : 0;
	for (int i = 0; i < depth; i++) {
		err = add_new_addr(h, addrs[i], na, nn, cn);
		if (err)
			goto fail;
	}
	if (!depth) {
		free(addrs);
		return 0;
	}
	if (h->n_stacks == h->cap_stacks) {
		size_t c = h->cap_stacks ? h->cap_stacks * 2 : 64;
		struct stack_rec *v = realloc(h->stacks, c * sizeof(*v));

		if (!v) {
			err = -ENOMEM;
			goto fail;
		}
		h->stacks = v;
		h->cap_stacks = c;
	}
	/* the kernel's 64-bit key is the id: stable, and the same stack
	 * gets the same id in an appended recording */
	st->stack_id = (int64_t)(st->key >> 1);
	h->stacks[h->n_stacks++] = (struct stack_rec){
		.id = st->stack_id, .hash = st->key, .addrs = addrs, .depth = depth,
	};
	return 0;
fail:
	free(addrs);
	return err;
}

static void free_output(struct heap *h)
{
	for (size_t i = 0; i < h->n_stacks; i++)
		free((void *)h->stacks[i].addrs);
	h->n_stacks = 0;
	h->n_rows = 0;
}

int heap__collect(struct heap *h, struct resolver *r, struct checkpoint *cp,
		  uint64_t **new_addrs, size_t *n_new_addrs, size_t *cap_new_addrs)
{
	struct bpf_map *sites;
	uint64_t key, next, *prev = NULL;
	uint64_t dropped;
	int err = 0;

	if (!h)
		return 0;
	free_output(h);
	sites = h->skel->maps.sites;
	/* sites are never deleted, so walking the keys is stable */
	while (!bpf_map__get_next_key(sites, prev, &next, sizeof(next))) {
		struct heap_site cur, d;
		struct stack_state *st;
		struct heap_count *row;

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(sites, &key, sizeof(key), &cur, sizeof(cur), 0))
			continue;
		st = tab_find(h, key);
		if (!st) {
			st = tab_add(h, key);
			if (!st)
				return -ENOMEM;
			err = new_stack(h, r, st, new_addrs, n_new_addrs, cap_new_addrs);
			if (err)
				return err;
		}
		d.alloc_bytes = cur.alloc_bytes - st->last.alloc_bytes;
		d.alloc_count = cur.alloc_count - st->last.alloc_count;
		d.free_bytes = cur.free_bytes - st->last.free_bytes;
		d.free_count = cur.free_count - st->last.free_count;
		st->last = cur;
		if (!d.alloc_count && !d.free_count && !d.alloc_bytes && !d.free_bytes)
			continue;
		if (!st->site)
			continue;	/* stack lost: its bytes are in the dropped count */
		if (h->n_rows == h->cap_rows) {
			size_t c = h->cap_rows ? h->cap_rows * 2 : 256;
			struct heap_count *v = realloc(h->rows, c * sizeof(*v));

			if (!v)
				return -ENOMEM;
			h->rows = v;
			h->cap_rows = c;
		}
		row = &h->rows[h->n_rows++];
		row->addr = st->site;
		row->stack_id = st->stack_id;
		row->alloc_bytes = (int64_t)d.alloc_bytes;
		row->free_bytes = (int64_t)d.free_bytes;
		row->alloc_count = (int64_t)d.alloc_count;
		row->free_count = (int64_t)d.free_count;
		h->allocs += row->alloc_count;
		h->frees += row->free_count;
	}
	read_stats(h);
	/* the kernel's figures are already weighted by the sampling */
	h->live = h->skel->bss->live_bytes;
	if (h->skel->bss->peak_bytes > h->peak)
		h->peak = h->skel->bss->peak_bytes;
	dropped = dropped_total(h);

	cp->heap = h->rows;
	cp->n_heap = h->n_rows;
	cp->stacks = h->stacks;
	cp->n_stacks = h->n_stacks;
	cp->heap_live_bytes = h->live;
	cp->heap_dropped = dropped - h->dropped_reported;
	h->dropped_reported = dropped;
	return 0;
}

void heap__stats(const struct heap *h, struct heap_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!h)
		return;
	st->live_bytes = h->live;
	st->peak_bytes = h->peak;
	st->allocs = h->allocs;
	st->frees = h->frees;
	st->unknown_frees = h->stats[HEAP_STAT_UNKNOWN_FREES];
	st->unknown_free_bytes = h->stats[HEAP_STAT_UNKNOWN_FREE_BYTES];
	st->dropped = dropped_total(h);
	st->probes = h->syms ? h->syms->family : NULL;
	st->sample = h->sample;
}

void heap__delete(struct heap *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n_links; i++)
		bpf_link__destroy(h->links[i]);
	free(h->links);
	detach_multi(h);
	free(h->multi_fds);
	if (h->code_fd >= 0)
		close(h->code_fd);
	free(h->code_path);
	heap_bpf__destroy(h->skel);
	alloc_syms__delete(h->syms);
	free_output(h);
	free(h->rows);
	free(h->stacks);
	free(h->states);
	hashmap__free(&h->by_key);
	hashmap__free(&h->seen);
	free(h);
}
