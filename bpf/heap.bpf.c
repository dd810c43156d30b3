// SPDX-License-Identifier: GPL-2.0
/*
 * Heap tracking: uprobes on the target's allocator.
 *
 * Entry (uprobe, cookie = enum heap_kind): take the size and capture the
 * user stack at the allocator's entry, where the frame-pointer chain is
 * still the caller's; keep both in a map keyed by thread id (a thread may
 * be preempted and migrate between entry and return: no per-CPU slot).
 * Return (uretprobe, same breakpoint as the entry, so one trap): the
 * pointer; record ptr -> {size, stack} in the live map and add to the
 * stack's counters. Free: look the pointer up, add to its stack's free
 * counters, delete it; a pointer we never saw was allocated before attach
 * and is counted apart, never against a site.
 *
 * Sites are keyed by a hash of the whole captured stack (not the single
 * return address, which puts every Vec growth into one finish_grow site);
 * the first-user-frame rule is applied in user space (util/heap/attrib.c).
 * Nothing is sent per allocation: user space reads the counters.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "heap.h"

#define EEXIST 17

const volatile __u32 target_tgid = 0;
const volatile __u32 sample_every = 1;
/* the probed free is glibc's: a block's size is in its chunk header */
const volatile bool glibc_chunks = false;

/* Nesting deeper than this means an entry whose return we never saw. */
#define HEAP_MAX_NEST 8

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct heap_entry);
} entries SEC(".maps");

/*
 * Not preallocated: a million live allocations would hold ~100 MB of
 * kernel memory from the start for a program that has a few thousand.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 20);	/* set by user space */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct heap_live);
} live SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 16);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct heap_site);
} sites SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 16);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct heap_stack);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HEAP_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Live bytes of tracked allocations now, and their highest value. */
__s64 live_bytes;
__s64 peak_bytes;

/* Words of the stack looked at when the frame-pointer chain is short.
 * The buffer is per CPU and only lives for a few instructions; were the
 * program preempted in between, the candidates would be wrong and fail
 * user space's call-instruction check, nothing worse. */
#define HEAP_SCAN_WORDS 128
#define HEAP_SCAN_WORDS_OLD 32

struct heap_scan {
	__u64 w[HEAP_SCAN_WORDS];
	struct heap_stack st;		/* the stack being captured (too big for the BPF stack) */
};

/* bpf_loop()'s state while the scan looks at the words one by one. */
struct scan_ctx {
	struct heap_scan *sb;
	__u64 lo, hi;
	__u32 k;
};

static long scan_word(__u32 i, struct scan_ctx *c)
{
	__u64 v;

	if (i >= HEAP_SCAN_WORDS)
		return 1;
	v = c->sb->w[i];
	if (v < c->lo || v >= c->hi)
		return 0;
	c->sb->st.cand[c->k & (HEAP_MAX_CAND - 1)] = v;
	return ++c->k >= HEAP_MAX_CAND;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct heap_scan);
} scan_buf SEC(".maps");

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n;
}

static __always_inline bool is_target(void)
{
	return (bpf_get_current_pid_tgid() >> 32) == target_tgid;
}

/*
 * The stack at the allocator's entry: bpf_get_stack() gives the probed ip
 * (inside the allocator) and then the frame-pointer chain starting at the
 * caller's %rbp, which skips the caller itself; the caller's return address
 * is at the top of the stack, so it replaces ips[0]. Kernels since about
 * 6.12 add that return address themselves when the probed instruction is a
 * function's `push %rbp` (the Rust shims): then ips[1] is it already, and
 * the frames move down by one.
 */
__noinline __u64 capture_stack(struct pt_regs *ctx)
{
	__u32 zero = 0;
	struct heap_scan *sb = bpf_map_lookup_elem(&scan_buf, &zero);
	struct heap_stack *st;
	__u64 h = 14695981039346656037ULL, ret;
	long n;

	if (!sb)
		return 0;
	st = &sb->st;
	__builtin_memset(st, 0, sizeof(*st));
	n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), BPF_F_USER_STACK);
	if (n <= 0 || bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP(ctx))) {
		stat_add(HEAP_STAT_DROP_STACK, 1);
		return 0;
	}
	n /= sizeof(__u64);
	if (st->ips[1] == ret) {
		for (int i = 0; i < HEAP_MAX_DEPTH - 1; i++)
			st->ips[i] = st->ips[i + 1];
		st->ips[HEAP_MAX_DEPTH - 1] = 0;
		n--;
	} else {
		st->ips[0] = ret;
	}
	/*
	 * A chain this short usually means code without frame pointers above
	 * the allocator (a Rust crate built without force-frame-pointers): keep
	 * the stack words that point into the executable's text (the mm's
	 * start_code..end_code).
	 * Some are the return addresses the chain missed; user space checks
	 * each follows a call before it uses one (util/heap/heap.c).
	 */
	if (n < HEAP_SCAN_MIN_CHAIN) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		struct scan_ctx c = {
			.sb = sb,
			.lo = BPF_CORE_READ(task, mm, start_code),
			.hi = BPF_CORE_READ(task, mm, end_code),
		};
		bool cut = false;

		/*
		 * Without frame pointers %rbp is a plain register: the "chain"
		 * after ips[0] is whatever it pointed at (key bytes, heap
		 * pointers), different at every call, and each would be a stack
		 * of its own (measured on Redis -O2 -fomit-frame-pointer: 65,536
		 * stacks, the map full, where 44 are real). Such a chain is
		 * cut at its first word outside the executable's text; the scan
		 * below finds the callers.
		 */
		for (int i = 1; i < HEAP_SCAN_MIN_CHAIN; i++) {
			if (!cut && st->ips[i] && (st->ips[i] < c.lo || st->ips[i] >= c.hi))
				cut = true;
			if (cut)
				st->ips[i] = 0;
		}
		/*
		 * One word at a time through bpf_loop (kernel 5.17+): an
		 * unrolled loop over this many words is more than the verifier
		 * takes. Older kernels look at the first HEAP_SCAN_WORDS_OLD
		 * words, up to 8 candidates, unrolled.
		 */
		if (c.hi > c.lo &&
		    !bpf_probe_read_user(sb->w, sizeof(sb->w), (void *)(PT_REGS_SP(ctx) + 8))) {
			if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_loop)) {
				bpf_loop(HEAP_SCAN_WORDS, scan_word, &c, 0);
			} else {
				for (int i = 0; i < HEAP_SCAN_WORDS_OLD; i++) {
					__u64 v = sb->w[i];

					if (v < c.lo || v >= c.hi)
						continue;
					st->cand[c.k & 7] = v;
					if (++c.k >= 8)
						break;
				}
			}
		}
	}
	for (int i = 0; i < HEAP_MAX_DEPTH; i++) {
		h ^= st->ips[i];
		h *= 1099511628211ULL;
		h ^= h >> 29;
	}
	for (int i = 0; i < HEAP_MAX_CAND; i++) {
		h ^= st->cand[i];
		h *= 1099511628211ULL;
		h ^= h >> 29;
	}
	if (!h)
		h = 1;
	if (!bpf_map_lookup_elem(&stacks, &h)) {
		long err = bpf_map_update_elem(&stacks, &h, st, BPF_NOEXIST);

		if (err && err != -EEXIST) {
			stat_add(HEAP_STAT_DROP_STACK, 1);
			return 0;
		}
	}
	return h;
}

/* A pointer goes away: free, or the old block of a realloc. */
static __always_inline void release(__u64 ptr, bool count_unknown, __u64 size_hint, __u32 kind)
{
	struct heap_live *l = bpf_map_lookup_elem(&live, &ptr);
	struct heap_site *s;
	__u64 size, stack, w;

	if (!l) {
		/* With sampling an untracked pointer is the normal case. */
		if (!count_unknown || sample_every > 1)
			return;
		if (!size_hint && kind == HEAP_KIND_FREE && glibc_chunks) {
			/* glibc's chunk header: size | flags, 8 bytes before ptr
			 * (another allocator's bytes there are anything: 49 TiB
			 * of "unknown frees" with jemalloc) */
			__u64 hdr = 0;

			bpf_probe_read_user(&hdr, sizeof(hdr), (void *)(ptr - 8));
			hdr &= ~7ULL;
			if (hdr > 16 && hdr < (1ULL << 40))
				size_hint = hdr - ((hdr & 2) ? 16 : 8);
		}
		stat_add(HEAP_STAT_UNKNOWN_FREES, 1);
		stat_add(HEAP_STAT_UNKNOWN_FREE_BYTES, size_hint);
		return;
	}
	size = l->size * l->weight;
	stack = l->stack;
	w = l->weight;
	if (bpf_map_delete_elem(&live, &ptr))
		return;		/* another thread freed it first */
	s = bpf_map_lookup_elem(&sites, &stack);
	if (s) {
		__sync_fetch_and_add(&s->free_bytes, size);
		__sync_fetch_and_add(&s->free_count, w);
	}
	__sync_fetch_and_add(&live_bytes, -(__s64)size);
}

/* w: how many allocations this one stands for (sampling) */
static __always_inline void track(__u64 ptr, __u64 size, __u64 stack, __u64 w)
{
	struct heap_live l = { .size = size, .stack = stack, .weight = w };
	struct heap_site *s;
	__s64 now;

	/* Still live: its free went through a path we do not probe. */
	if (bpf_map_lookup_elem(&live, &ptr))
		release(ptr, false, 0, 0);
	s = bpf_map_lookup_elem(&sites, &stack);
	if (!s) {
		struct heap_site zero = {};

		bpf_map_update_elem(&sites, &stack, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&sites, &stack);
		if (!s) {
			stat_add(HEAP_STAT_DROP_SITE, 1);
			return;
		}
	}
	if (bpf_map_update_elem(&live, &ptr, &l, BPF_ANY)) {
		stat_add(HEAP_STAT_DROP_LIVE, 1);
		return;
	}
	size *= w;
	__sync_fetch_and_add(&s->alloc_bytes, size);
	__sync_fetch_and_add(&s->alloc_count, w);
	now = __sync_fetch_and_add(&live_bytes, size) + size;
	if (now > peak_bytes)
		peak_bytes = now;	/* racy between CPUs: off by one allocation at most */
}

/*
 * The allocator's entry. Returns 1 when the return needs no look (an
 * untracked call with nothing to release): a session probe then skips the
 * return, and its trap, altogether.
 */
static __always_inline int on_entry(struct pt_regs *ctx, __u64 a1, __u64 a2, __u64 a3, __u64 a4)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct heap_entry n = {}, *e;

	e = bpf_map_lookup_elem(&entries, &tid);
	if (e && e->depth < HEAP_MAX_NEST) {
		/* e.g. realloc(NULL, n) calling malloc: count the outer call only */
		e->depth++;
		stat_add(HEAP_STAT_NESTED, 1);
		return 0;
	}
	n.kind = bpf_get_attach_cookie(ctx);
	switch (n.kind) {
	case HEAP_KIND_MALLOC:
		n.size = a1;
		break;
	case HEAP_KIND_CALLOC:
		n.size = a1 * a2;
		break;
	case HEAP_KIND_REALLOC:
		n.old_ptr = a1;
		n.size = a2;
		break;
	case HEAP_KIND_ALIGNED:
		n.size = a2;
		break;
	case HEAP_KIND_POSIX_MEMALIGN:
		n.memptr = a1;
		n.size = a3;
		break;
	case HEAP_KIND_RUST_REALLOC:
		n.old_ptr = a1;
		n.old_size = a2;
		n.size = a4;
		break;
	default:
		return 1;
	}
	/*
	 * Sampling: one small allocation in N, chosen at random per call, is
	 * tracked and stands for N; big ones are always tracked, once.
	 */
	if (sample_every <= 1 || n.size >= HEAP_SAMPLE_ALWAYS)
		n.weight = 1;
	else if (bpf_get_prandom_u32() % sample_every == 0)
		n.weight = sample_every;
	if (n.weight)
		n.stack = capture_stack(ctx);
	/* untracked: only a realloc of a tracked block needs its return */
	if (!n.stack && !(n.old_ptr && bpf_map_lookup_elem(&live, &n.old_ptr)))
		return 1;
	if (bpf_map_update_elem(&entries, &tid, &n, BPF_ANY)) {
		stat_add(HEAP_STAT_DROP_ENTRY, 1);
		return 1;
	}
	return 0;
}

static __always_inline void on_return(struct pt_regs *ctx, __u64 rc)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct heap_entry *e, n;
	__u64 ptr = rc;

	e = bpf_map_lookup_elem(&entries, &tid);
	if (!e)
		return;
	if (e->depth) {
		e->depth--;
		return;
	}
	n = *e;
	bpf_map_delete_elem(&entries, &tid);

	if (n.kind == HEAP_KIND_POSIX_MEMALIGN) {
		if ((int)rc != 0 || bpf_probe_read_user(&ptr, sizeof(ptr), (void *)n.memptr))
			ptr = 0;
	}
	if (n.kind == HEAP_KIND_REALLOC || n.kind == HEAP_KIND_RUST_REALLOC) {
		if (!ptr) {
			/* glibc realloc(p, 0) frees p (through free, seen there) */
			if (n.size && n.old_ptr)
				stat_add(HEAP_STAT_NULL_RETURNS, 1);
			else if (n.old_ptr)
				release(n.old_ptr, false, 0, n.kind);
			return;
		}
		/* moved or in place, the old block goes and the new one comes */
		if (n.old_ptr)
			release(n.old_ptr, true, n.old_size, n.kind);
	} else if (!ptr) {
		stat_add(HEAP_STAT_NULL_RETURNS, 1);
		return;
	}
	if (n.stack)
		track(ptr, n.size, n.stack, n.weight);
}

SEC("uprobe")
int BPF_KPROBE(heap_alloc_enter, __u64 a1, __u64 a2, __u64 a3, __u64 a4)
{
	if (is_target())
		on_entry(ctx, a1, a2, a3, a4);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(heap_alloc_return, __u64 rc)
{
	if (is_target())
		on_return(ctx, rc);
	return 0;
}

/*
 * The same as a session probe (kernel 6.13+, BPF_TRACE_UPROBE_SESSION; user
 * space sets the attach type, libbpf 1.1 has no section name for it): one
 * program at entry and return, and an entry that returns 1 has no return
 * probe, so an untracked call under --heap-sample costs one trap, not two.
 */
extern bool bpf_session_is_return(void) __ksym __weak;

SEC("uprobe")
int BPF_KPROBE(heap_alloc_session, __u64 a1, __u64 a2, __u64 a3, __u64 a4)
{
	if (!is_target())
		return 1;
	if (bpf_session_is_return()) {
		on_return(ctx, PT_REGS_RC(ctx));
		return 0;
	}
	return on_entry(ctx, a1, a2, a3, a4);
}

SEC("uprobe")
int BPF_KPROBE(heap_free_enter, __u64 ptr, __u64 size)
{
	__u32 kind;

	if (!is_target() || !ptr)
		return 0;
	kind = bpf_get_attach_cookie(ctx);
	release(ptr, true, kind == HEAP_KIND_RUST_DEALLOC ? size : 0, kind);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
