/*
 * The preload backend of heap tracking: the in-process tracker's regions
 * (preload/heap-region.h) in the directory of a launch (util/heap/launch.c).
 * rsprof makes the region the launched program claims before it execs
 * (and, following a tree, the template with which every process that loads
 * the tracker makes its own), finds the regions there and reads their
 * counters at each checkpoint; a region goes once its process image has
 * ended and its last figures were read.
 */
#include "util/heap/preload.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "preload/heap-region.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/heap/alloc-syms.h"
#include "util/heap/backend.h"
#include "util/heap/history.h"
#include "util/heap/inject.h"
#include "util/heap/watchdog.h"

/* The geometry of a region: sparse, only what is used takes memory. */
#define SITE_CAP	(1u << 18)
#define INDEX_CAP	(1u << 19)
#define FRAME_CAP	((uint64_t)SITE_CAP * 16)
#define BLOCK_CAP	1024		/* threads counting at once */
#define COUNT_CAP	4096		/* sites per thread block */

/* One process image's region. */
struct region {
	struct heap_region *r;
	size_t size;
	pid_t pid;
	uint32_t gen;		/* its generation: execs of pid before it */
	int pidfd;		/* the process, to see it end; -1: gone already */
	bool retired;		/* the image exec'd: its heap went with it */
	bool exited;		/* the process is gone: its last figures are read */
	bool last_read;		/* read after its end: dropped at the next checkpoint */
	bool fresh;		/* not yet told to the caller (heap_visit.process) */
	bool told_exit;
	uint64_t salt;		/* mixed into its keys: images do not share stacks */
	/* its layout, copied and checked once: the region is the target's to
	 * write, read as hostile input (a target rsprof attached to may be
	 * anyone's), never its geometry read again from there */
	struct heap_region geo;
	struct heap_watchdog watch;	/* its threads in the tracker's calls out */
};

struct heap_be {
	struct heap_launch *launch;	/* a launched program's; NULL: */
	struct heap_inject *inject;	/* a running process's, the tracker injected */
	pid_t pid;			/* the launched (or attached) process */
	struct region *regions;		/* the images being read */
	size_t n;
	struct hashmap known;		/* region_id() of each in regions; of each
					 * limited.PID seen, region_id(PID, UINT32_MAX) */
	uint64_t limited;		/* the limited.PID files seen */
	struct heap_totals gone;	/* the totals of the images dropped */
	struct timespec t0;
	/* the record whose key the generic code may ask the stack of */
	const struct region *cur;
	const struct heap_region_site *cur_rec;
	uint64_t cur_key;
	struct heap_site *sum;		/* a region's totals per site, while read */
	uint64_t cap_sum;
	struct heap_history *hist;	/* record --alloc-history: the rings' drain */
};

static size_t align_page(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

/* A region's header with the geometry every region of the recording has. */
void heap_region__header(struct heap_region *r, unsigned int sample, uint64_t sample_bytes)
{
	size_t off_index = align_page(sizeof(*r));
	size_t off_sites = align_page(off_index + INDEX_CAP * sizeof(struct heap_region_slot));
	size_t off_frames = align_page(off_sites + SITE_CAP * sizeof(struct heap_region_site));
	size_t off_blocks = align_page(off_frames + FRAME_CAP * sizeof(uint64_t));
	size_t block_size = align_page(sizeof(struct heap_region_block) +
				       COUNT_CAP * sizeof(struct heap_region_count));

	memset(r, 0, sizeof(*r));
	r->magic = HEAP_REGION_MAGIC;
	r->version = HEAP_REGION_VERSION;
	r->header_size = sizeof(*r);
	r->size = off_blocks + BLOCK_CAP * block_size;
	r->sample_every = sample_bytes ? 1 : sample;
	r->sample_bytes = sample_bytes;
	r->site_cap = SITE_CAP;
	r->index_cap = INDEX_CAP;
	r->frame_cap = FRAME_CAP;
	r->off_index = off_index;
	r->off_sites = off_sites;
	r->off_frames = off_frames;
	r->block_cap = BLOCK_CAP;
	r->count_cap = COUNT_CAP;
	r->off_blocks = off_blocks;
	r->block_size = block_size;
	r->state = HEAP_REGION_OFFERED;
}

/*
 * The tree's template (preload/heap-region.h): with it, every process that
 * loads the tracker from this directory makes its own region.
 */
static int tree_offer(struct heap_be *b)
{
	struct heap_region t;
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	heap_region__header(&t, b->launch->sample, b->launch->sample_bytes);
	snprintf(path, sizeof(path), "%s/" HEAP_REGION_TREE, b->launch->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
	if (fd < 0)
		goto fail;
	n = write(fd, &t, sizeof(t));
	if (n != (ssize_t)sizeof(t)) {
		if (n >= 0)
			errno = EIO;
		close(fd);
		goto fail;
	}
	if (close(fd))
		goto fail;
	return 0;
fail:
	pr_err("cannot write %s: %s", path, strerror(errno));
	return -errno;
}

static uint64_t region_id(pid_t pid, uint32_t gen)
{
	return ((uint64_t)(uint32_t)pid << 32 | gen) + 1;	/* never 0 */
}

static bool region_fits(const struct heap_region *r);

/* Add a mapped region of pid, generation gen, to b (-EINVAL: its layout does not fit). */
static int region_add(struct heap_be *b, struct heap_region *r, size_t size, pid_t pid,
		      uint32_t gen)
{
	struct region *v = realloc(b->regions, (b->n + 1) * sizeof(*v));
	struct region *reg;
	int err;

	if (!v)
		return -ENOMEM;
	b->regions = v;
	err = hashmap__set(&b->known, region_id(pid, gen), 1);
	if (err)
		return err;
	reg = &b->regions[b->n];
	memset(reg, 0, sizeof(*reg));
	memcpy(&reg->geo, r, sizeof(reg->geo));
	reg->geo.size = size;
	if (!region_fits(&reg->geo)) {
		hashmap__remove(&b->known, region_id(pid, gen));
		return -EINVAL;
	}
	b->n++;
	reg->r = r;
	reg->size = size;
	reg->pid = pid;
	reg->gen = gen;
	/* the launched image keeps today's keys: stable across --append */
	reg->salt = pid == b->pid ? (uint64_t)gen * 0x9e3779b97f4a7c15ULL :
		    hashmap__hash_u64(region_id(pid, gen)) | 1;
	reg->fresh = pid != b->pid || gen;
	reg->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (reg->pidfd < 0)
		reg->exited = true;	/* gone already: this read is its last */
	/* the history's rings: the launched process's images (the tree's others have none) */
	return b->hist && pid == b->pid ? heap_history__add_region(b->hist, r, &reg->geo, reg->salt)
					: 0;
}

/* The region the launched process will claim, made before it execs. */
static int region_offer(struct heap_be *b)
{
	struct heap_launch *l = b->launch;
	struct heap_region *r, t;
	char path[PATH_MAX];
	void *p;
	int fd, err;

	heap_region__header(&t, l->sample, l->sample_bytes);
	if (b->hist)
		t.size += heap_history__layout(&t, t.size);	/* the event rings last */
	snprintf(path, sizeof(path), "%s/" HEAP_REGION_FILE, l->dir, (int)b->pid);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail;
	if (ftruncate(fd, (off_t)t.size)) {
		close(fd);
		goto fail;
	}
	p = mmap(NULL, t.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		goto fail;
	r = p;
	t.state = 0;
	t.pid = (uint32_t)b->pid;
	memcpy(r, &t, sizeof(t));
	__atomic_store_n(&r->state, HEAP_REGION_OFFERED, __ATOMIC_RELEASE);
	err = region_add(b, r, t.size, b->pid, 0);
	if (err) {
		munmap(p, t.size);
		return err;
	}
	b->regions[0].fresh = false;
	return 0;
fail:
	err = -errno;
	pr_err("cannot make the heap tracker's region %s: %s", path, strerror(errno));
	if (err == -ENOMEM)
		pr_hint("it maps %llu MiB of address space: raise the limit (ulimit -v), or use --no-heap",
			(unsigned long long)(t.size >> 20));
	return err;
}

/* The layout of r lies within it (a region made by the tracker). */
static bool region_fits(const struct heap_region *r)
{
	uint64_t rings = (uint64_t)r->ring_count * r->ring_size;

	if (r->ring_count && (!r->ring_cap || (r->ring_cap & (r->ring_cap - 1)) ||
			      r->ring_size < sizeof(struct heap_region_ring) +
					     (uint64_t)r->ring_cap * sizeof(struct heap_region_event) ||
			      r->off_rings > r->size || rings > r->size - r->off_rings))
		return false;
	return r->off_frames + r->frame_cap * sizeof(uint64_t) <= r->size &&
	       r->off_sites + (uint64_t)r->site_cap * sizeof(struct heap_region_site) <= r->size &&
	       r->block_size >= sizeof(struct heap_region_block) +
				(uint64_t)r->count_cap * sizeof(struct heap_region_count) &&
	       r->off_blocks + (uint64_t)r->block_cap * r->block_size <= r->size;
}

/*
 * The region file name of pid, generation gen: "heap.PID" or
 * "heap.PID.GEN". false: another file.
 */
static bool region_name(const char *name, pid_t *pid, uint32_t *gen)
{
	unsigned long p, g = 0;
	char *end;

	if (strncmp(name, "heap.", 5) || !isdigit((unsigned char)name[5]))
		return false;
	p = strtoul(name + 5, &end, 10);
	if (*end == '.' && isdigit((unsigned char)end[1]))
		g = strtoul(end + 1, &end, 10);
	if (*end || !p || p > INT32_MAX || g > UINT32_MAX)
		return false;
	*pid = (pid_t)p;
	*gen = (uint32_t)g;
	return true;
}

/* "limited.PID" (HEAP_REGION_LIMITED): a process of the tree the tracker stayed out of. */
static bool limited_name(const char *name, pid_t *pid)
{
	unsigned long p;
	char *end;

	if (strncmp(name, "limited.", 8) || !isdigit((unsigned char)name[8]))
		return false;
	p = strtoul(name + 8, &end, 10);
	if (*end || !p || p > INT32_MAX)
		return false;
	*pid = (pid_t)p;
	return true;
}

/* A region a tracker made (a child, a program of the tree, an exec): mapped, if complete. */
static int region_find(struct heap_be *b, int dfd, const char *name, pid_t pid, uint32_t gen)
{
	struct heap_region *r;
	struct stat st;
	void *p;
	int fd, err;

	fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(*r) ||
	    (p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		close(fd);
		return 0;	/* being made: the next checkpoint */
	}
	close(fd);
	r = p;
	if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != HEAP_REGION_CLAIMED ||
	    r->magic != HEAP_REGION_MAGIC || r->version != HEAP_REGION_VERSION ||
	    r->header_size != sizeof(*r) || r->size != (uint64_t)st.st_size ||
	    !region_fits(r) || r->pid != (uint32_t)pid || r->generation != gen) {
		munmap(p, st.st_size);
		return 0;
	}
	err = region_add(b, r, st.st_size, pid, gen);
	if (err) {
		munmap(p, st.st_size);
		return err;
	}
	pr_debug(1, "heap: process %d%s: region generation %u (parent %u)", (int)pid,
		 r->flags & HEAP_REGION_FORKED ? " (forked)" : "", gen, r->ppid);
	return 0;
}

/* The regions made since the last checkpoint. */
static int regions_scan(struct heap_be *b)
{
	struct dirent *e;
	DIR *d = b->launch ? opendir(b->launch->dir) : NULL;
	int err = 0;

	if (!d)
		return 0;	/* none, or an attached process's region only */
	while (!err && (e = readdir(d))) {
		uint32_t gen;
		pid_t pid;

		if (limited_name(e->d_name, &pid)) {
			bool fresh = false;

			err = hashmap__add(&b->known, region_id(pid, UINT32_MAX), 1, &fresh);
			b->limited += fresh;
			continue;
		}
		if (!region_name(e->d_name, &pid, &gen) ||
		    hashmap__get(&b->known, region_id(pid, gen), NULL))
			continue;
		err = region_find(b, dirfd(d), e->d_name, pid, gen);
	}
	closedir(d);
	return err;
}

/*
 * Which images ended: one whose process made a later generation exec'd
 * (what it held went with it); one whose process is gone exited (what it
 * held at the end stays live: its leaks, as the launched program's).
 */
static void regions_ends(struct heap_be *b)
{
	for (size_t i = 0; i < b->n; i++) {
		struct region *reg = &b->regions[i];

		for (size_t j = 0; j < b->n && !reg->retired; j++)
			if (b->regions[j].pid == reg->pid && b->regions[j].gen > reg->gen)
				reg->retired = true;
		if (!reg->exited && reg->pidfd >= 0) {
			struct pollfd pf = { .fd = reg->pidfd, .events = POLLIN };

			if (poll(&pf, 1, 0) > 0)
				reg->exited = true;
		}
		/* an attached process that exec'd: the tracker went with its image */
		if (b->inject && !reg->exited && !reg->retired && !heap_inject__alive(b->inject))
			reg->retired = true;
	}
}

/* --- reading ------------------------------------------------------------ */

static const struct heap_region_block *block_at(const struct region *reg, uint64_t i)
{
	return (const void *)((const char *)reg->r + reg->geo.off_blocks + i * reg->geo.block_size);
}

/*
 * Add the thread blocks' counters of sites below n to sum[]: the frees
 * (frees true) or the allocations. Read in two passes, frees first, so
 * that no free is seen without its allocation.
 */
static void add_blocks(const struct region *reg, uint64_t n, struct heap_site *sum, bool frees)
{
	uint64_t nb = __atomic_load_n(&reg->r->n_blocks, __ATOMIC_ACQUIRE);

	if (nb > reg->geo.block_cap)
		nb = reg->geo.block_cap;
	for (uint64_t j = 0; j < nb; j++) {
		const struct heap_region_block *bl = block_at(reg, j);
		uint32_t used = __atomic_load_n(&bl->n_used, __ATOMIC_ACQUIRE);

		if (used > reg->geo.count_cap)
			used = reg->geo.count_cap;
		for (uint32_t k = 0; k < used; k++) {
			const struct heap_region_count *c = &bl->counts[k];
			uint32_t site = __atomic_load_n(&c->site_plus1, __ATOMIC_ACQUIRE);

			if (!site || site > n)
				continue;
			if (frees) {
				sum[site - 1].free_bytes += __atomic_load_n(&c->free_bytes, __ATOMIC_ACQUIRE);
				sum[site - 1].free_count += __atomic_load_n(&c->free_count, __ATOMIC_ACQUIRE);
				sum[site - 1].temp_count += __atomic_load_n(&c->temp_count, __ATOMIC_ACQUIRE);
			} else {
				sum[site - 1].alloc_bytes += __atomic_load_n(&c->alloc_bytes, __ATOMIC_ACQUIRE);
				sum[site - 1].alloc_count += __atomic_load_n(&c->alloc_count, __ATOMIC_ACQUIRE);
			}
		}
	}
}

/*
 * Whose address space a region's addresses are in: its process's, but a
 * fork child that exec'd since ran its parent's code (the tree still knows
 * the parent's mappings, not the child's old ones).
 */
static pid_t region_code_pid(const struct region *reg)
{
	if (reg->retired && !reg->gen && (reg->r->flags & HEAP_REGION_FORKED) && reg->r->ppid)
		return (pid_t)reg->r->ppid;
	return 0;
}

static uint64_t region_key(const struct region *reg, uint64_t key)
{
	return (key ^ reg->salt) ? key ^ reg->salt : 1;
}

/*
 * One region's sites: each record's counters plus its thread blocks'.
 * forget: the region's last read was the previous one: its keys go.
 */
static int region_sites(struct heap_be *b, struct region *reg, const struct heap_visit *v,
			bool forget)
{
	const struct heap_region *r = reg->r;
	const struct heap_region_site *recs = (const void *)((const char *)r + reg->geo.off_sites);
	uint64_t n = __atomic_load_n(&r->n_sites, __ATOMIC_ACQUIRE);
	struct heap_site *sum;

	if (n > reg->geo.site_cap)
		n = reg->geo.site_cap;
	if (!n)
		return 0;	/* nothing allocated yet */
	if (forget) {
		for (uint64_t i = 0; i < n; i++) {
			uint64_t key = __atomic_load_n(&recs[i].key, __ATOMIC_ACQUIRE);
			int err = key ? v->site(v->ctx, region_key(reg, key), reg->pid, 0, NULL, 0) : 0;

			if (err)
				return err;
		}
		return 0;
	}
	if (n > b->cap_sum) {
		sum = realloc(b->sum, n * sizeof(*sum));
		if (!sum)
			return -ENOMEM;
		b->sum = sum;
		b->cap_sum = n;
	}
	sum = b->sum;
	memset(sum, 0, n * sizeof(*sum));
	for (uint64_t i = 0; i < n; i++) {
		sum[i].free_bytes = __atomic_load_n(&recs[i].free_bytes, __ATOMIC_ACQUIRE);
		sum[i].free_count = __atomic_load_n(&recs[i].free_count, __ATOMIC_ACQUIRE);
		sum[i].temp_count = __atomic_load_n(&recs[i].temp_count, __ATOMIC_ACQUIRE);
	}
	add_blocks(reg, n, sum, true);
	for (uint64_t i = 0; i < n; i++) {
		sum[i].alloc_bytes = __atomic_load_n(&recs[i].alloc_bytes, __ATOMIC_ACQUIRE);
		sum[i].alloc_count = __atomic_load_n(&recs[i].alloc_count, __ATOMIC_ACQUIRE);
	}
	add_blocks(reg, n, sum, false);
	for (uint64_t i = 0; i < n; i++) {
		const struct heap_region_site *s = &recs[i];
		uint64_t key = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		int err;

		if (!key)
			continue;	/* being made */
		if (reg->retired) {
			sum[i].free_bytes = sum[i].alloc_bytes;
			sum[i].free_count = sum[i].alloc_count;
		}
		b->cur = reg;
		b->cur_rec = s;
		b->cur_key = region_key(reg, key);
		err = v->site(v->ctx, b->cur_key, reg->pid == b->pid ? 0 : reg->pid,
			      region_code_pid(reg), &sum[i],
			      __atomic_load_n(&s->kind, __ATOMIC_RELAXED));
		if (err)
			return err;
	}
	return 0;
}

static void totals_add(struct heap_totals *t, const struct heap_region *r)
{
	const uint64_t *s = r->stats;

	if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == HEAP_REGION_CLAIMED)
		t->started = true;
	if (r->peak_bytes > t->peak)
		t->peak = r->peak_bytes;
	t->unknown_frees += s[HEAP_RSTAT_UNKNOWN_FREES];
	t->unknown_free_bytes += s[HEAP_RSTAT_UNKNOWN_FREE_BYTES];
	t->dropped += s[HEAP_RSTAT_DROP_SITE] + s[HEAP_RSTAT_DROP_FRAMES] + s[HEAP_RSTAT_DROP_LIVE];
	if (r->flags & HEAP_REGION_NO_HEADERS)
		t->no_headers = true;
}

static void region_debug(const struct region *reg)
{
	const uint64_t *s = reg->r->stats;

	pr_debug(1, "heap: process %d generation %u: %llu threads (%llu blocks, %llu without), "
		 "%llu forks, %llu calls before the start, %llu calls re-entered, %llu stale, "
		 "%llu NULL returns, %llu unknown frees, CFI unwinding %s, %llu allocator entry "
		 "points rewritten (%llu refused)", (int)reg->pid, reg->gen,
		 (unsigned long long)s[HEAP_RSTAT_THREADS],
		 (unsigned long long)reg->r->n_blocks,
		 (unsigned long long)s[HEAP_RSTAT_NO_BLOCK],
		 (unsigned long long)s[HEAP_RSTAT_FORKS],
		 (unsigned long long)s[HEAP_RSTAT_EARLY],
		 (unsigned long long)s[HEAP_RSTAT_REENTERED],
		 (unsigned long long)s[HEAP_RSTAT_STALE],
		 (unsigned long long)s[HEAP_RSTAT_NULL_RETURNS],
		 (unsigned long long)s[HEAP_RSTAT_UNKNOWN_FREES],
		 s[HEAP_RSTAT_CFI] ? "on (libunwind)" : "off (no libunwind.so.8)",
		 (unsigned long long)s[HEAP_RSTAT_HOOKED],
		 (unsigned long long)s[HEAP_RSTAT_HOOK_REFUSED]);
}

/*
 * An image read for the last time goes: its totals kept, its file removed
 * (the tracker's memory with it), its keys forgotten by util/heap/heap.c.
 */
static int region_drop(struct heap_be *b, size_t i, const struct heap_visit *v)
{
	struct region *reg = &b->regions[i];
	char path[PATH_MAX];
	int err = region_sites(b, reg, v, true);

	if (err)
		return err;
	region_debug(reg);
	totals_add(&b->gone, reg->r);
	if (b->launch && reg->gen)
		snprintf(path, sizeof(path), "%s/" HEAP_REGION_FILE_GEN, b->launch->dir,
			 (int)reg->pid, reg->gen);
	else if (b->launch)
		snprintf(path, sizeof(path), "%s/" HEAP_REGION_FILE, b->launch->dir, (int)reg->pid);
	if (b->launch)
		unlink(path);
	if (heap_history__remove_region(b->hist, reg->r))
		pr_warn("allocation history: no memory to drain the tracker's events");
	munmap(reg->r, reg->size);
	if (reg->pidfd >= 0)
		close(reg->pidfd);
	hashmap__remove(&b->known, region_id(reg->pid, reg->gen));
	b->regions[i] = b->regions[--b->n];
	return 0;
}

static int preload_sites(struct heap_be *b, const struct heap_visit *v)
{
	struct timespec now;
	uint64_t ms;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (uint64_t)(now.tv_sec - b->t0.tv_sec) * 1000 +
	     (uint64_t)((now.tv_nsec - b->t0.tv_nsec) / 1000000);
	/* the images read for the last time at the previous checkpoint go */
	for (size_t i = 0; i < b->n;) {
		if (b->regions[i].last_read) {
			err = region_drop(b, i, v);
			if (err)
				return err;
			continue;
		}
		i++;
	}
	err = regions_scan(b);
	if (err)
		return err;
	regions_ends(b);
	for (size_t i = 0; i < b->n; i++) {
		struct region *reg = &b->regions[i];

		reg->r->clock_ms = ms;
		heap_watchdog__check(&reg->watch, reg->r, reg->pid, ms);
		if (reg->fresh) {
			struct heap_proc_event ev = {
				.pid = reg->pid, .ppid = (pid_t)reg->r->ppid,
				.forked = !reg->gen && (reg->r->flags & HEAP_REGION_FORKED),
				.exec = reg->gen > 0,
			};

			reg->fresh = false;
			err = v->process ? v->process(v->ctx, &ev) : 0;
			if (err)
				return err;
		}
		err = region_sites(b, reg, v, false);
		if (err)
			return err;
		if (reg->exited || reg->retired)
			reg->last_read = true;	/* dropped at the next checkpoint */
		if (reg->exited && !reg->told_exit && v->process) {
			struct heap_proc_event ev = { .pid = reg->pid, .exited = true };

			reg->told_exit = true;
			err = v->process(v->ctx, &ev);
			if (err)
				return err;
		}
	}
	b->cur_rec = NULL;
	return 0;
}

static bool preload_stack(struct heap_be *b, uint64_t key, struct heap_stack *out)
{
	const struct heap_region_site *s = b->cur_rec;
	const uint64_t *frames;
	unsigned int depth, n_cand, d, c;
	uint32_t f;

	/* an image gone before its stacks were read: its mappings are gone too
	 * (but a fork child's were its parent's) */
	if (!s || key != b->cur_key || (b->cur->retired && !region_code_pid(b->cur)))
		return false;
	/* read once: the target may change them meanwhile */
	f = __atomic_load_n(&s->frames, __ATOMIC_ACQUIRE);
	d = __atomic_load_n(&s->depth, __ATOMIC_ACQUIRE);
	c = __atomic_load_n(&s->n_cand, __ATOMIC_ACQUIRE);
	if (!d || (uint64_t)f + d + c > b->cur->geo.frame_cap)
		return false;
	frames = (const uint64_t *)((const char *)b->cur->r + b->cur->geo.off_frames);
	depth = d < HEAP_MAX_DEPTH ? d : HEAP_MAX_DEPTH;
	n_cand = c < HEAP_MAX_CAND ? c : HEAP_MAX_CAND;
	memset(out, 0, sizeof(*out));
	memcpy(out->ips, frames + f, depth * sizeof(uint64_t));
	memcpy(out->cand, frames + f + d, n_cand * sizeof(uint64_t));
	return true;
}

static void preload_totals(struct heap_be *b, struct heap_totals *t)
{
	*t = b->gone;
	t->live = INT64_MIN;	/* the sum of the sites: exact, not stepped */
	t->probes = "libc";
	t->temporaries = true;
	t->limited = b->limited;
	for (size_t g = 0; g < b->n; g++)
		totals_add(t, b->regions[g].r);
}

static struct heap_history *preload_history(struct heap_be *b)
{
	return b->hist;
}

static void preload_delete(struct heap_be *b)
{
	if (!b)
		return;
	heap_history__delete(b->hist);	/* before the regions go */
	for (size_t g = 0; g < b->n; g++) {
		region_debug(&b->regions[g]);
		munmap(b->regions[g].r, b->regions[g].size);
		if (b->regions[g].pidfd >= 0)
			close(b->regions[g].pidfd);
	}
	free(b->regions);
	free(b->sum);
	hashmap__free(&b->known);
	heap_launch__delete(b->launch);
	heap_inject__delete(b->inject);
	free(b);
}

int heap_preload__new(const struct heap_opts *o, struct heap_be **out)
{
	struct heap_be *b = calloc(1, sizeof(*b));
	int err;

	*out = NULL;
	if (!b) {
		heap_launch__delete(o->launch);
		heap_inject__delete(o->inject);
		return -ENOMEM;
	}
	b->launch = o->launch;
	b->inject = o->inject;
	b->pid = o->pid;
	clock_gettime(CLOCK_MONOTONIC, &b->t0);
	err = o->alloc_history ? heap_history__new(&b->hist) : 0;
	if (!err && b->inject) {
		/* the process's region, made at the injection */
		size_t size;
		struct heap_region *r = heap_inject__region(b->inject, &size);

		err = region_add(b, r, size, b->pid, 0);
		if (!err)
			b->regions[0].fresh = false;
		else
			munmap(r, size);
	} else if (!err) {
		err = region_offer(b);
		if (!err && b->launch->inherit)
			err = tree_offer(b);
	}
	if (err) {
		preload_delete(b);
		return err;
	}
	if (b->launch)
		pr_debug(1, "heap: in-process tracker for pid %d%s (sample 1/%u, bytes %llu)",
			 (int)o->pid, b->launch->inherit ? " and its tree" : "", b->launch->sample,
			 (unsigned long long)b->launch->sample_bytes);
	else
		pr_debug(1, "heap: in-process tracker injected into pid %d", (int)o->pid);
	*out = b;
	return 0;
}

const struct heap_backend_ops heap_preload_ops = {
	.name = "preload",
	.sites = preload_sites,
	.stack = preload_stack,
	.totals = preload_totals,
	.history = preload_history,
	.delete = preload_delete,
};

/* The same tracker, injected into a running process (util/heap/inject.c). */
const struct heap_backend_ops heap_inject_ops = {
	.name = "inject",
	.sites = preload_sites,
	.stack = preload_stack,
	.totals = preload_totals,
	.history = preload_history,
	.delete = preload_delete,
};
