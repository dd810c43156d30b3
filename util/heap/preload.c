/*
 * The preload backend of heap tracking (issue 8): for a program rsprof
 * launches, the in-process tracker (preload/, embedded in rsprof) is
 * written into a private 0700 directory and handed to the program through
 * LD_PRELOAD; rsprof makes the program's region there before it execs
 * (preload/heap-region.h) and reads its counters at each checkpoint. The
 * directory goes at the end.
 *
 * Where preloading cannot work, auto falls back to uprobes and says why:
 * a static executable, setuid/setgid (the loader ignores LD_PRELOAD), an
 * executable that defines malloc itself (it wins over the preload: rustc
 * with its jemalloc), a Rust #[global_allocator] that is jemalloc or
 * mimalloc (its allocations never reach malloc), an allocator library
 * among its DT_NEEDED or in LD_PRELOAD (the tracker would replace it with
 * glibc's).
 */
#include "util/heap/preload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "preload/heap-region.h"
#include "util/error.h"
#include "util/heap/alloc-syms.h"
#include "util/heap/backend.h"

extern char **environ;

/* The geometry of a region: sparse, only what is used takes memory. */
#define SITE_CAP	(1u << 18)
#define INDEX_CAP	(1u << 19)
#define FRAME_CAP	((uint64_t)SITE_CAP * 16)
#define BLOCK_CAP	1024		/* threads counting at once */
#define COUNT_CAP	4096		/* sites per thread block */

struct heap_launch {
	char dir[PATH_MAX / 2];
	char **env;
	size_t n_env;
	unsigned int sample;
};

/* One process image's region. */
struct region {
	struct heap_region *r;
	size_t size;
	bool retired;		/* the image exec'd: its heap went with it */
	uint64_t salt;		/* mixed into its keys: images do not share stacks */
};

struct heap_be {
	struct heap_launch *launch;
	pid_t pid;
	struct region *regions;		/* regions[n - 1] is the current image's */
	size_t n;
	struct timespec t0;
	/* the record whose key the generic code may ask the stack of */
	const struct region *cur;
	const struct heap_region_site *cur_rec;
	uint64_t cur_key;
	struct heap_site *sum;		/* a region's totals per site, while read */
	uint64_t cap_sum;
};

/* --- before the launch -------------------------------------------------- */

/* Why the tracker cannot serve exe (a static string), or NULL. */
static const char *blocker(const char *exe, enum heap_probes probes)
{
	static char why[160];
	const char *pre = getenv("LD_PRELOAD");
	struct alloc_exe x;
	struct stat st;

	if (probes == HEAP_PROBES_RUST)
		return "--heap-probes rust asks for uprobes on the Rust allocator";
	if (stat(exe, &st))
		return "the executable cannot be read";
	if (st.st_mode & (S_ISUID | S_ISGID))
		return "the executable is setuid or setgid (the loader ignores LD_PRELOAD)";
	if (alloc_syms__inspect(exe, &x))
		return "the executable cannot be read";
	if (!x.is_elf)
		return "it is not an ELF executable";
	if (x.is_static)
		return "the executable is statically linked (no LD_PRELOAD)";
	if (x.own_malloc) {
		snprintf(why, sizeof(why), "the executable has its own malloc%s%s%s",
			 x.alloc_name[0] ? " (" : "", x.alloc_name, x.alloc_name[0] ? ")" : "");
		return why;
	}
	/* a #[global_allocator] of unknown make most likely wraps System (malloc) */
	if (x.rust_global && x.alloc_name[0]) {
		snprintf(why, sizeof(why), "the Rust program's #[global_allocator] is %s",
			 x.alloc_name);
		return why;
	}
	if (x.alloc_lib[0]) {
		snprintf(why, sizeof(why), "the executable links the allocator %s", x.alloc_lib);
		return why;
	}
	if (pre && (strstr(pre, "jemalloc") || strstr(pre, "tcmalloc") || strstr(pre, "mimalloc")))
		return "LD_PRELOAD holds another allocator";
	return NULL;
}

/* A directory for the library: not on a noexec file system (it is mmap'd to run). */
static int make_dir(char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	const char *cands[] = { tmp && *tmp ? tmp : "/tmp", "/dev/shm", "/var/tmp" };
	int err = -ENOENT;

	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		struct statvfs vfs;

		if (statvfs(cands[i], &vfs) || (vfs.f_flag & ST_NOEXEC))
			continue;
		snprintf(dir, len, "%s/rsprof-heap.XXXXXX", cands[i]);
		if (mkdtemp(dir))	/* mode 0700 */
			return 0;
		err = -errno;
	}
	pr_err("cannot make a private directory for the heap tracker (in $TMPDIR, /tmp, "
	       "/dev/shm, /var/tmp): %s", strerror(-err));
	pr_hint("set TMPDIR to a writable directory that allows executables, or use "
		"--heap-backend uprobe");
	return err;
}

/*
 * The tracker's bytes: the build inside rsprof, or RSPROF_HEAP_TRACKER's
 * (a developer's build, e.g. with UBSan). *buf: to free.
 */
static int tracker_bytes(const unsigned char **p, size_t *len, void **buf)
{
	const char *alt = getenv("RSPROF_HEAP_TRACKER");
	struct stat st;
	ssize_t n;
	int fd, err;

	*buf = NULL;
	if (!alt || !*alt) {
		*p = heap_preload_so;
		*len = (size_t)(heap_preload_so_end - heap_preload_so);
		return 0;
	}
	fd = open(alt, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !(*buf = malloc(st.st_size + 1)))
		goto fail;
	n = read(fd, *buf, st.st_size);
	if (n != st.st_size)
		goto fail;
	close(fd);
	*p = *buf;
	*len = (size_t)n;
	pr_debug(1, "heap: the tracker from %s (RSPROF_HEAP_TRACKER)", alt);
	return 0;
fail:
	err = errno ? -errno : -EIO;
	pr_err("cannot read RSPROF_HEAP_TRACKER %s: %s", alt, strerror(-err));
	if (fd >= 0)
		close(fd);
	free(*buf);
	*buf = NULL;
	return err;
}

static int write_so(const char *dir)
{
	const unsigned char *p;
	size_t left;
	char path[PATH_MAX];
	void *buf;
	int fd, err = tracker_bytes(&p, &left, &buf);

	if (err)
		return err;

	snprintf(path, sizeof(path), "%s/%s", dir, HEAP_REGION_SO);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
	if (fd < 0)
		goto fail;
	while (left) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = EIO;
			close(fd);
			goto fail;
		}
		p += n;
		left -= (size_t)n;
	}
	if (close(fd))
		goto fail;
	free(buf);
	return 0;
fail:
	err = -errno;
	pr_err("cannot write %s: %s", path, strerror(errno));
	free(buf);
	return err;
}

static int env_add(struct heap_launch *l, char *s)
{
	char **v;

	if (!s)
		return -ENOMEM;
	v = realloc(l->env, (l->n_env + 2) * sizeof(*v));
	if (!v) {
		free(s);
		return -ENOMEM;
	}
	l->env = v;
	l->env[l->n_env++] = s;
	l->env[l->n_env] = NULL;
	return 0;
}

/* environ, with our library first in LD_PRELOAD and the directory named. */
static int make_env(struct heap_launch *l)
{
	const char *old = getenv("LD_PRELOAD");
	char *s;
	int err = 0;

	for (char **e = environ; e && *e && !err; e++) {
		if (!strncmp(*e, "LD_PRELOAD=", 11) ||
		    !strncmp(*e, HEAP_REGION_DIR_ENV "=", sizeof(HEAP_REGION_DIR_ENV)))
			continue;
		err = env_add(l, strdup(*e));
	}
	if (!err) {
		if (asprintf(&s, "LD_PRELOAD=%s/%s%s%s", l->dir, HEAP_REGION_SO,
			     old && *old ? ":" : "", old ? old : "") < 0)
			s = NULL;
		err = env_add(l, s);
	}
	if (!err) {
		if (asprintf(&s, "%s=%s", HEAP_REGION_DIR_ENV, l->dir) < 0)
			s = NULL;
		err = env_add(l, s);
	}
	if (err)
		pr_err("cannot make the environment of the program: %s", strerror(-err));
	return err;
}

int heap_launch__new(const char *exe, enum heap_backend want, enum heap_probes probes,
		     unsigned int sample, struct heap_launch **out, const char **why)
{
	struct heap_launch *l;
	const char *no;
	int err;

	*out = NULL;
	*why = NULL;
	if (want == HEAP_BACKEND_UPROBE) {
		*why = "--heap-backend uprobe";
		return 0;
	}
	no = blocker(exe, probes);
	if (no) {
		if (want == HEAP_BACKEND_PRELOAD) {
			pr_err("the in-process heap tracker cannot run in %s: %s", exe, no);
			pr_hint("use --heap-backend uprobe, or auto to fall back by itself");
			return -ENOTSUP;
		}
		*why = no;
		return 0;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->sample = sample ? sample : 1;
	err = make_dir(l->dir, sizeof(l->dir));
	if (err) {
		l->dir[0] = '\0';
		goto fail;
	}
	err = write_so(l->dir);
	if (!err)
		err = make_env(l);
	if (err)
		goto fail;
	pr_debug(1, "heap: the in-process tracker in %s", l->dir);
	*out = l;
	return 0;
fail:
	heap_launch__delete(l);
	return err;
}

char *const *heap_launch__env(const struct heap_launch *l)
{
	return l->env;
}

void heap_launch__delete(struct heap_launch *l)
{
	DIR *d;

	if (!l)
		return;
	if (l->dir[0] && (d = opendir(l->dir))) {
		struct dirent *e;

		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
		if (rmdir(l->dir))
			pr_warn("cannot remove %s: %s", l->dir, strerror(errno));
	}
	for (size_t i = 0; i < l->n_env; i++)
		free(l->env[i]);
	free(l->env);
	free(l);
}

/* --- the region --------------------------------------------------------- */

static size_t align_page(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

/* The region the launched process will claim, made before it execs. */
static int region_offer(struct heap_be *b)
{
	struct heap_launch *l = b->launch;
	struct heap_region *r;
	char path[PATH_MAX];
	size_t off_index = align_page(sizeof(*r));
	size_t off_sites = align_page(off_index + INDEX_CAP * sizeof(struct heap_region_slot));
	size_t off_frames = align_page(off_sites + SITE_CAP * sizeof(struct heap_region_site));
	size_t off_blocks = align_page(off_frames + FRAME_CAP * sizeof(uint64_t));
	size_t block_size = align_page(sizeof(struct heap_region_block) +
				       COUNT_CAP * sizeof(struct heap_region_count));
	size_t size = off_blocks + BLOCK_CAP * block_size;
	struct region *reg;
	void *p;
	int fd, err;

	snprintf(path, sizeof(path), "%s/" HEAP_REGION_FILE, l->dir, (int)b->pid);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail;
	if (ftruncate(fd, (off_t)size)) {
		close(fd);
		goto fail;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		goto fail;
	r = p;
	r->magic = HEAP_REGION_MAGIC;
	r->version = HEAP_REGION_VERSION;
	r->header_size = sizeof(*r);
	r->size = size;
	r->pid = (uint32_t)b->pid;
	r->sample_every = l->sample;
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
	__atomic_store_n(&r->state, HEAP_REGION_OFFERED, __ATOMIC_RELEASE);
	reg = calloc(1, sizeof(*reg));
	if (!reg) {
		munmap(p, size);
		return -ENOMEM;
	}
	reg->r = r;
	reg->size = size;
	b->regions = reg;
	b->n = 1;
	return 0;
fail:
	err = -errno;
	pr_err("cannot make the heap tracker's region %s: %s", path, strerror(errno));
	return err;
}

/* The layout of r lies within it (a region made by the tracker). */
static bool region_fits(const struct heap_region *r)
{
	return r->off_frames + r->frame_cap * sizeof(uint64_t) <= r->size &&
	       r->off_sites + (uint64_t)r->site_cap * sizeof(struct heap_region_site) <= r->size &&
	       r->block_size >= sizeof(struct heap_region_block) +
				(uint64_t)r->count_cap * sizeof(struct heap_region_count) &&
	       r->off_blocks + (uint64_t)r->block_cap * r->block_size <= r->size;
}

/*
 * The process exec'd: its new image made the next generation's region.
 * The current one retires (what it held live went with the old image).
 */
static void follow_exec(struct heap_be *b)
{
	const struct heap_region *cur = b->regions[b->n - 1].r;
	struct region *v;
	struct heap_region *r;
	char path[PATH_MAX];
	struct stat st;
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/" HEAP_REGION_FILE_GEN, b->launch->dir, (int)b->pid,
		 cur->generation + 1);
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(*r) ||
	    (p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		close(fd);
		return;
	}
	close(fd);
	r = p;
	v = realloc(b->regions, (b->n + 1) * sizeof(*v));
	if (r->magic != HEAP_REGION_MAGIC || r->header_size != sizeof(*r) ||
	    r->size != (uint64_t)st.st_size || !region_fits(r) ||
	    __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != HEAP_REGION_CLAIMED || !v) {
		if (v)
			b->regions = v;
		munmap(p, st.st_size);
		return;
	}
	b->regions = v;
	b->regions[b->n - 1].retired = true;
	b->regions[b->n] = (struct region){
		.r = r, .size = st.st_size, .salt = (uint64_t)r->generation * 0x9e3779b97f4a7c15ULL,
	};
	b->n++;
	pr_debug(1, "heap: process %d exec'd: region generation %u", (int)b->pid, r->generation);
}

/* --- reading ------------------------------------------------------------ */

static const struct heap_region_block *block_at(const struct heap_region *r, uint64_t i)
{
	return (const void *)((const char *)r + r->off_blocks + i * r->block_size);
}

/*
 * Add the thread blocks' counters of sites below n to sum[]: the frees
 * (frees true) or the allocations. Read in two passes, frees first, so
 * that no free is seen without its allocation.
 */
static void add_blocks(const struct heap_region *r, uint64_t n, struct heap_site *sum, bool frees)
{
	uint64_t nb = __atomic_load_n(&r->n_blocks, __ATOMIC_ACQUIRE);

	if (nb > r->block_cap)
		nb = r->block_cap;
	for (uint64_t j = 0; j < nb; j++) {
		const struct heap_region_block *bl = block_at(r, j);
		uint32_t used = __atomic_load_n(&bl->n_used, __ATOMIC_ACQUIRE);

		if (used > r->count_cap)
			used = r->count_cap;
		for (uint32_t k = 0; k < used; k++) {
			const struct heap_region_count *c = &bl->counts[k];
			uint32_t site = __atomic_load_n(&c->site_plus1, __ATOMIC_ACQUIRE);

			if (!site || site > n)
				continue;
			if (frees) {
				sum[site - 1].free_bytes += __atomic_load_n(&c->free_bytes, __ATOMIC_ACQUIRE);
				sum[site - 1].free_count += __atomic_load_n(&c->free_count, __ATOMIC_ACQUIRE);
			} else {
				sum[site - 1].alloc_bytes += __atomic_load_n(&c->alloc_bytes, __ATOMIC_ACQUIRE);
				sum[site - 1].alloc_count += __atomic_load_n(&c->alloc_count, __ATOMIC_ACQUIRE);
			}
		}
	}
}

/* One region's sites: each record's counters plus its thread blocks'. */
static int region_sites(struct heap_be *b, const struct region *reg, heap_site_cb cb, void *ctx)
{
	const struct heap_region *r = reg->r;
	const struct heap_region_site *recs = (const void *)((const char *)r + r->off_sites);
	uint64_t n = __atomic_load_n(&r->n_sites, __ATOMIC_ACQUIRE);
	struct heap_site *sum;

	if (n > r->site_cap)
		n = r->site_cap;
	if (!n)
		return 0;	/* nothing allocated yet */
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
	}
	add_blocks(r, n, sum, true);
	for (uint64_t i = 0; i < n; i++) {
		sum[i].alloc_bytes = __atomic_load_n(&recs[i].alloc_bytes, __ATOMIC_ACQUIRE);
		sum[i].alloc_count = __atomic_load_n(&recs[i].alloc_count, __ATOMIC_ACQUIRE);
	}
	add_blocks(r, n, sum, false);
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
		b->cur_key = (key ^ reg->salt) ? key ^ reg->salt : 1;
		err = cb(ctx, b->cur_key, &sum[i]);
		if (err)
			return err;
	}
	return 0;
}

static int preload_sites(struct heap_be *b, heap_site_cb cb, void *ctx)
{
	struct timespec now;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &now);
	b->regions[b->n - 1].r->clock_ms = (uint64_t)(now.tv_sec - b->t0.tv_sec) * 1000 +
					   (uint64_t)((now.tv_nsec - b->t0.tv_nsec) / 1000000);
	if (__atomic_load_n(&b->regions[b->n - 1].r->state, __ATOMIC_ACQUIRE) == HEAP_REGION_CLAIMED)
		follow_exec(b);
	for (size_t g = 0; g < b->n && !err; g++)
		err = region_sites(b, &b->regions[g], cb, ctx);
	b->cur_rec = NULL;
	return err;
}

static bool preload_stack(struct heap_be *b, uint64_t key, struct heap_stack *out)
{
	const struct heap_region *r;
	const struct heap_region_site *s = b->cur_rec;
	const uint64_t *frames;
	unsigned int depth, n_cand;

	/* an image gone before its stacks were read: its mappings are gone too */
	if (!s || key != b->cur_key || !s->depth || b->cur->retired)
		return false;
	r = b->cur->r;
	frames = (const uint64_t *)((const char *)r + r->off_frames);
	depth = s->depth < HEAP_MAX_DEPTH ? s->depth : HEAP_MAX_DEPTH;
	n_cand = s->n_cand < HEAP_MAX_CAND ? s->n_cand : HEAP_MAX_CAND;
	if ((uint64_t)s->frames + s->depth + s->n_cand > r->frame_cap)
		return false;
	memset(out, 0, sizeof(*out));
	memcpy(out->ips, frames + s->frames, depth * sizeof(uint64_t));
	memcpy(out->cand, frames + s->frames + s->depth, n_cand * sizeof(uint64_t));
	return true;
}

static void preload_totals(struct heap_be *b, struct heap_totals *t)
{
	memset(t, 0, sizeof(*t));
	t->live = INT64_MIN;	/* the sum of the sites: exact, not stepped */
	t->probes = "libc";
	for (size_t g = 0; g < b->n; g++) {
		const struct heap_region *r = b->regions[g].r;
		const uint64_t *s = r->stats;

		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == HEAP_REGION_CLAIMED)
			t->started = true;
		if (r->peak_bytes > t->peak)
			t->peak = r->peak_bytes;
		t->unknown_frees += s[HEAP_RSTAT_UNKNOWN_FREES];
		t->unknown_free_bytes += s[HEAP_RSTAT_UNKNOWN_FREE_BYTES];
		t->dropped += s[HEAP_RSTAT_DROP_SITE] + s[HEAP_RSTAT_DROP_FRAMES] +
			      s[HEAP_RSTAT_DROP_LIVE];
	}
}

static void preload_delete(struct heap_be *b)
{
	if (!b)
		return;
	for (size_t g = 0; g < b->n; g++) {
		const uint64_t *s = b->regions[g].r->stats;

		pr_debug(1, "heap: region %zu: %llu threads (%llu blocks, %llu without), %llu forks, "
			 "%llu calls before the start, "
			 "%llu calls re-entered, %llu stale, %llu NULL returns", g,
			 (unsigned long long)s[HEAP_RSTAT_THREADS],
			 (unsigned long long)b->regions[g].r->n_blocks,
			 (unsigned long long)s[HEAP_RSTAT_NO_BLOCK],
			 (unsigned long long)s[HEAP_RSTAT_FORKS],
			 (unsigned long long)s[HEAP_RSTAT_EARLY],
			 (unsigned long long)s[HEAP_RSTAT_REENTERED],
			 (unsigned long long)s[HEAP_RSTAT_STALE],
			 (unsigned long long)s[HEAP_RSTAT_NULL_RETURNS]);
		munmap(b->regions[g].r, b->regions[g].size);
	}
	free(b->regions);
	free(b->sum);
	heap_launch__delete(b->launch);
	free(b);
}

int heap_preload__new(const struct heap_opts *o, struct heap_be **out)
{
	struct heap_be *b = calloc(1, sizeof(*b));
	int err;

	*out = NULL;
	if (!b) {
		heap_launch__delete(o->launch);
		return -ENOMEM;
	}
	b->launch = o->launch;
	b->pid = o->pid;
	clock_gettime(CLOCK_MONOTONIC, &b->t0);
	err = region_offer(b);
	if (err) {
		preload_delete(b);
		return err;
	}
	pr_debug(1, "heap: in-process tracker for pid %d (sample 1/%u)", (int)o->pid,
		 b->launch->sample);
	*out = b;
	return 0;
}

const struct heap_backend_ops heap_preload_ops = {
	.name = "preload",
	.sites = preload_sites,
	.stack = preload_stack,
	.totals = preload_totals,
	.delete = preload_delete,
};
