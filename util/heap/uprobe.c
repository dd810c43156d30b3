/*
 * The uprobe backend of heap tracking: loads
 * bpf/heap.bpf.c, attaches it to the target's allocator
 * (util/heap/alloc-syms.c); util/heap/heap.c reads the kernel's running
 * per-stack counters through it once per checkpoint. Any running process:
 * attach (-p, -P), and launched programs the in-process tracker cannot
 * serve (util/heap/preload.c).
 *
 * Loader order as libbpf-tools do it: open, set rodata and map sizes, load,
 * attach each probe for the target's pid only (the program checks the tgid
 * too), read maps; destroy at the end.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "heap.skel.h"
#include "bpf/heap.h"
#include "util/heap/alloc-syms.h"
#include "util/heap/backend.h"
#include "util/error.h"

/* enum bpf_attach_type in kernels since 6.13; not in Debian 12's headers */
#define RSPROF_BPF_TRACE_UPROBE_MULTI	48
#define RSPROF_BPF_TRACE_UPROBE_SESSION 57

/* Live allocations tracked at once; beyond that they are counted as dropped. */
#define HEAP_LIVE_MAX	(1u << 20)

struct heap_be {
	struct heap_bpf *skel;
	struct bpf_link **links;
	size_t n_links;
	int *multi_fds;			/* uprobe_multi links */
	size_t n_multi_fds;
	bool multi;			/* session + uprobe_multi programs, not pairs */
	struct alloc_syms *syms;
	unsigned int sample;
	pid_t pid;
	uint64_t stats[HEAP_STAT_MAX];	/* kernel counters, summed over CPUs */
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (verbose < 2 && level != LIBBPF_WARN)
		return 0;
	if (verbose < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void uprobe_delete(struct heap_be *h);

/* --- loading and attaching ---------------------------------------------- */

static int attach_one(struct heap_be *h, struct bpf_program *prog, const struct alloc_probe *p,
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
static int load(struct heap_be *h, const struct heap_opts *o)
{
	struct heap_bpf *sk = heap_bpf__open();
	int err;

	if (!sk)
		return -errno;
	h->skel = sk;
	sk->rodata->target_tgid = o->pid;
	sk->rodata->sample_every = h->sample;
	sk->rodata->glibc_chunks = h->syms && h->syms->glibc_free;
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
static int attach_multi(struct heap_be *h, struct bpf_program *prog, uint32_t type, bool frees)
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

static void detach_multi(struct heap_be *h)
{
	for (size_t i = 0; i < h->n_multi_fds; i++)
		close(h->multi_fds[i]);
	h->n_multi_fds = 0;
}

/* The classic way: a perf event per probe; optional probes may fail. */
static int attach_classic(struct heap_be *h)
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

int heap_uprobe__new(const struct heap_opts *o, struct heap_be **out)
{
	struct heap_be *h;
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
	h->sample = o->sample ? o->sample : 1;

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
	/* said up front: a single-stepped probe is ten times dearer */
	for (size_t i = 0; i < h->syms->n; i++)
		if (h->syms->v[i].single_step)
			pr_warn("heap: the probe on %s in %s is single-stepped by the kernel (no "
				"instruction it emulates before the arguments change): about 11 us "
				"per call instead of 1", h->syms->v[i].name, h->syms->v[i].path);
	pr_debug(1, "heap: %zu %s allocator probes attached to pid %d (sample 1/%u, %s)",
		 h->syms->n, h->syms->family, (int)o->pid, h->sample,
		 h->multi ? "session probes" : "uprobe + uretprobe");
	*out = h;
	return 0;
fail:
	uprobe_delete(h);
	return err;
}

/* --- reading ------------------------------------------------------------ */

static void read_stats(struct heap_be *h)
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

static uint64_t dropped_total(const struct heap_be *h)
{
	return h->stats[HEAP_STAT_DROP_LIVE] + h->stats[HEAP_STAT_DROP_STACK] +
	       h->stats[HEAP_STAT_DROP_SITE] + h->stats[HEAP_STAT_DROP_ENTRY];
}

/* sites are never deleted, so walking the keys is stable */
static int uprobe_sites(struct heap_be *h, const struct heap_visit *v)
{
	struct bpf_map *sites = h->skel->maps.sites;
	uint64_t key, next, *prev = NULL;
	int err;

	while (!bpf_map__get_next_key(sites, prev, &next, sizeof(next))) {
		struct heap_site cur;

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(sites, &key, sizeof(key), &cur, sizeof(cur), 0))
			continue;
		err = v->site(v->ctx, key, 0, 0, &cur, 0);
		if (err)
			return err;
	}
	return 0;
}

static bool uprobe_stack(struct heap_be *h, uint64_t key, struct heap_stack *out)
{
	return !bpf_map__lookup_elem(h->skel->maps.stacks, &key, sizeof(key), out, sizeof(*out), 0);
}

static void uprobe_totals(struct heap_be *h, struct heap_totals *t)
{
	read_stats(h);
	memset(t, 0, sizeof(*t));
	/* the kernel's figures are already weighted by the sampling */
	t->live = h->skel->bss->live_bytes;
	t->peak = h->skel->bss->peak_bytes;
	t->unknown_frees = h->stats[HEAP_STAT_UNKNOWN_FREES];
	t->unknown_free_bytes = h->stats[HEAP_STAT_UNKNOWN_FREE_BYTES];
	/* free(p) of another allocator: no size to read (Rust's dealloc has one) */
	t->free_sizes_unknown = h->syms && !h->syms->glibc_free &&
				strcmp(h->syms->family, "rust");
	t->dropped = dropped_total(h);
	t->probes = h->syms ? h->syms->family : NULL;
	t->started = true;
}

static void uprobe_delete(struct heap_be *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n_links; i++)
		bpf_link__destroy(h->links[i]);
	free(h->links);
	detach_multi(h);
	free(h->multi_fds);
	heap_bpf__destroy(h->skel);
	alloc_syms__delete(h->syms);
	free(h);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static bool uprobe_probe_at(struct heap_be *b, const char *path, uint64_t off)
{
	/* by base name: /lib and /usr/lib are one directory on Debian */
	for (size_t i = 0; b->syms && i < b->syms->n; i++) {
		const struct alloc_probe *p = &b->syms->v[i];

		if (p->offset == off && !strcmp(base_name(p->path), base_name(path)))
			return true;
	}
	return false;
}

const struct heap_backend_ops heap_uprobe_ops = {
	.name = "uprobe",
	.sites = uprobe_sites,
	.stack = uprobe_stack,
	.totals = uprobe_totals,
	.probe_at = uprobe_probe_at,
	.delete = uprobe_delete,
};
