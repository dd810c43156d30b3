#include "util/record/process-tree.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/array.h"
#include "util/error.h"
#include "util/hashmap.h"
#include "util/record/maps.h"
#include "util/record/proc.h"
#include "util/record/sampler.h"
#include "util/symbols/kernel.h"
#include "util/symbols/resolver.h"
#include "util/symbols/symbol.h"

#define KEY_SHIFT	48
#define KEY_MAX		0x7fff		/* bits 48..62 */
#define USER_LIMIT	(1ULL << KEY_SHIFT)

/* An address space: what one program (and the children it forked) maps. */
struct space {
	int id;			/* unique in the recording (not its index in spaces) */
	pid_t pid;		/* whose root and perf map the files are looked up in */
	char *exe;		/* the main executable as mapped; NULL until known */
	struct maps *maps;	/* executable mappings */
	unsigned int gen, res_gen;	/* changes to maps; what the resolver has seen */
	unsigned int written_gen;	/* what the file's map table has; ~0: nothing */
	struct resolver *res;
	int refs;		/* processes running in it */
	unsigned int keynum;	/* 0: none yet (see process-tree.h, keys) */
	uint64_t samples;	/* user samples */
	bool heap;		/* a heap row's site is in it */
	bool program;		/* made by an exec or an attach, not a placeholder */
	bool has_verdict;	/* verdict: its debug info, kept when its resolver went */
	int verdict;
	bool res_used;		/* system-wide: its resolver named an address since the last gc */
	bool in_use;		/* gc: a process of the tree is in it */
	uint64_t res_tick;	/* system-wide: when its resolver was last used */
};

/*
 * Data of the program's own: a sample or a heap site. Its debug information
 * is what process_tree__debuginfo() judges (a wrapper that only ran before
 * the exec of what was recorded is not).
 */
static bool has_data(const struct space *sp)
{
	return sp->samples || sp->heap;
}

/* One row of the processes table. */
struct image {
	struct process_row row;
	char *comm, *exe;
	char *cgroup;		/* its cgroup v2 path; NULL: not known */
	bool dirty;
	bool hidden;		/* rsprof's own fork before the launched program's exec */
};

struct process {
	pid_t pid, ppid;
	struct space *sp;
	size_t image;		/* index in images */
	bool alive;
	unsigned int dead_gcs;	/* checkpoints since it ended */
};

struct claim {
	uint64_t file;		/* interned "path#build-id" or "anon#space" */
	uint64_t off;
};

struct pending {
	uint64_t key, addr;
	struct space *sp;	/* NULL: a kernel address */
};

struct process_tree {
	uint64_t t0_ns, base_ms;
	uint64_t named;			/* keys whose symbol has a name (a function) */
	bool inherit;
	bool records;			/* perf records come (process_tree__event()) */
	struct space **spaces;
	size_t n_spaces, cap_spaces;
	struct process *procs;		/* the live ones, and those ended lately */
	size_t n_procs, cap_procs;
	size_t n_seen;			/* every process of the recording */
	struct hashmap by_pid;		/* pid -> index + 1 in procs */
	struct image *images;
	size_t n_images, cap_images;
	struct hashmap claims;		/* plain address -> index + 1 in cl */
	struct claim *cl;
	size_t n_cl, cap_cl;
	struct hashmap known;		/* other keys whose symbol is queued or written */
	char **strs;			/* interned identity strings */
	size_t n_strs, cap_strs;
	struct hashmap str_index;
	struct pending *pend;
	size_t n_pend, cap_pend;
	const struct symbol **out;	/* new_symbols() */
	size_t cap_out;
	struct symbol **owned;		/* copies made with their key, freed at the next call */
	size_t n_owned, cap_owned;
	struct process_row *rows;	/* changed_rows() */
	size_t cap_rows;
	struct kernel_syms *ksyms;
	struct hashmap exe_kept;	/* exe hashes whose first space keeps its maps */
	int next_space_id;
	/* system-wide: the space that holds the data of the ended ones, per exe hash */
	struct hashmap exe_data;
	size_t programs_gone;		/* program spaces freed (process_tree__counts()) */
	unsigned int next_keynum;
	bool warned_keys;
	/* system-wide: the symbols named so far, by file and offset (struct claim) */
	bool system_wide;
	struct id_sym {
		struct claim id;
		struct symbol *s;	/* a copy, owned */
	} *id_syms;
	size_t n_id_syms, cap_id_syms;
	struct hashmap id_syms_index;	/* -> index + 1 in id_syms */
	uint64_t res_tick;
	size_t *order;			/* new_symbols(): the pending keys by space */
	size_t cap_order;
	/* system-wide: resolvers of one file each, the most recently used */
	struct file_res {
		uint64_t file;		/* the file's identity (interned) */
		uint64_t start, end, pgoff;	/* its mapping where it was met */
		struct resolver *res;
		uint64_t tick;
	} fres[8];
	size_t n_fres;
};

static uint64_t to_ms(const struct process_tree *pt, uint64_t t_ns)
{
	return pt->base_ms + (t_ns > pt->t0_ns ? (t_ns - pt->t0_ns) / 1000000 : 0);
}

int process_tree__new(uint64_t t0_ns, uint64_t ts_base_ms, bool inherit, bool kernel,
		      struct process_tree **out)
{
	struct process_tree *pt = calloc(1, sizeof(*pt));

	*out = NULL;
	if (!pt)
		return -ENOMEM;
	pt->t0_ns = t0_ns;
	pt->base_ms = ts_base_ms;
	pt->inherit = inherit;
	pt->ksyms = kernel_syms__new(kernel);
	if (!pt->ksyms) {
		free(pt);
		return -ENOMEM;
	}
	*out = pt;
	return 0;
}

static void space_free(struct space *sp)
{
	if (!sp)
		return;
	free(sp->exe);
	maps__delete(sp->maps);
	resolver__delete(sp->res);
	free(sp);
}

void process_tree__delete(struct process_tree *pt)
{
	if (!pt)
		return;
	for (size_t i = 0; i < pt->n_spaces; i++)
		space_free(pt->spaces[i]);
	free(pt->spaces);
	free(pt->procs);
	for (size_t i = 0; i < pt->n_images; i++) {
		free(pt->images[i].comm);
		free(pt->images[i].exe);
		free(pt->images[i].cgroup);
	}
	free(pt->images);
	for (size_t i = 0; i < pt->n_strs; i++)
		free(pt->strs[i]);
	free(pt->strs);
	for (size_t i = 0; i < pt->n_owned; i++)
		symbol__delete(pt->owned[i]);
	free(pt->owned);
	free(pt->out);
	free(pt->cl);
	free(pt->pend);
	free(pt->rows);
	hashmap__free(&pt->by_pid);
	hashmap__free(&pt->claims);
	hashmap__free(&pt->known);
	hashmap__free(&pt->str_index);
	hashmap__free(&pt->exe_kept);
	hashmap__free(&pt->exe_data);
	for (size_t i = 0; i < pt->n_id_syms; i++)
		symbol__delete(pt->id_syms[i].s);
	free(pt->id_syms);
	free(pt->order);
	for (size_t i = 0; i < pt->n_fres; i++)
		resolver__delete(pt->fres[i].res);
	hashmap__free(&pt->id_syms_index);
	kernel_syms__delete(pt->ksyms);
	free(pt);
}

void process_tree__system_wide(struct process_tree *pt)
{
	pt->system_wide = true;
}

static struct space *space_new(struct process_tree *pt, pid_t pid, struct maps *m)
{
	struct space *sp = calloc(1, sizeof(*sp));

	if (!sp || ALLOC_GROW(pt->spaces, pt->n_spaces + 1, pt->cap_spaces, 16)) {
		free(sp);
		maps__delete(m);
		return NULL;
	}
	sp->maps = m ? m : maps__new(pid);
	if (!sp->maps) {
		free(sp);
		return NULL;
	}
	sp->id = pt->next_space_id++;
	sp->pid = pid;
	sp->written_gen = ~0u;
	pt->spaces[pt->n_spaces++] = sp;
	return sp;
}

static struct process *proc_find(struct process_tree *pt, pid_t pid)
{
	uint64_t i;

	return hashmap__get(&pt->by_pid, (uint64_t)pid, &i) ? &pt->procs[i - 1] : NULL;
}

/*
 * The cgroup of pid as /proc tells it now, else inherited (that of the
 * image it forked from or exec'd out of; NULL: not known): a copy.
 */
static int cgroup_of(pid_t pid, const char *inherited, bool read, char **out)
{
	char buf[4096];

	*out = NULL;
	if (read && !proc__cgroup(pid, false, buf, sizeof(buf)))
		inherited = buf;
	if (inherited && !(*out = strdup(inherited)))
		return -ENOMEM;
	return 0;
}

/*
 * A new image row for p, starting at ms, in cgroup (owned by the row
 * from now on, also when it fails; NULL: not known).
 */
static int image_start(struct process_tree *pt, struct process *p, const char *comm,
		       char *cgroup, uint64_t ms)
{
	struct image *im;

	if (ALLOC_GROW(pt->images, pt->n_images + 1, pt->cap_images, 16)) {
		free(cgroup);
		return -ENOMEM;
	}
	im = &pt->images[pt->n_images];
	memset(im, 0, sizeof(*im));
	im->cgroup = cgroup;
	im->comm = strdup(comm ? comm : "");
	im->exe = p->sp && p->sp->exe ? strdup(p->sp->exe) : NULL;
	if (!im->comm) {
		free(im->exe);
		free(im->cgroup);
		return -ENOMEM;
	}
	im->row.pid = p->pid;
	im->row.ppid = p->ppid;
	im->row.start_ms = ms;
	im->row.end_ms = -1;
	im->dirty = true;
	p->image = pt->n_images++;
	return 0;
}

static void image_end(struct process_tree *pt, struct process *p, uint64_t ms)
{
	struct image *im = &pt->images[p->image];

	if (im->row.end_ms < 0 && !im->hidden) {
		im->row.end_ms = (int64_t)ms;
		im->dirty = true;
	}
}

/* Enter p into sp (its current space leaves). */
static void proc_enter(struct process *p, struct space *sp)
{
	if (p->sp)
		p->sp->refs--;
	p->sp = sp;
	if (sp)
		sp->refs++;
}

static struct process *proc_new(struct process_tree *pt, pid_t pid, pid_t ppid)
{
	struct process *p;

	if (ALLOC_GROW(pt->procs, pt->n_procs + 1, pt->cap_procs, 16))
		return NULL;
	p = &pt->procs[pt->n_procs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ppid = ppid;
	p->alive = true;
	if (hashmap__set(&pt->by_pid, (uint64_t)pid, pt->n_procs + 1))
		return NULL;
	pt->n_procs++;
	pt->n_seen++;
	return p;
}

/* A process as /proc shows it now (attached, or one whose fork we did not see). */
static struct process *proc_from_proc(struct process_tree *pt, pid_t pid, uint64_t ms)
{
	char comm[64] = "", exe[PATH_MAX], *cgroup;
	struct maps *m = NULL;
	struct process *p;
	struct space *sp;

	if (maps__load(pid, &m))
		m = NULL;
	else
		maps__read_build_ids(m);
	sp = space_new(pt, pid, m);
	if (!sp)
		return NULL;
	sp->program = m != NULL;
	if (!proc__exe(pid, exe, sizeof(exe)) && !(sp->exe = strdup(exe)))
		return NULL;
	proc__comm(pid, comm, sizeof(comm));
	p = proc_new(pt, pid, 0);
	if (!p)
		return NULL;
	proc_enter(p, sp);
	if (cgroup_of(pid, NULL, true, &cgroup) || image_start(pt, p, comm, cgroup, ms))
		return NULL;
	return p;
}

int process_tree__add(struct process_tree *pt, pid_t pid, bool from_proc)
{
	struct process *p;
	struct space *sp;
	char comm[64] = "";

	if (proc_find(pt, pid))
		return 0;
	if (from_proc)
		return proc_from_proc(pt, pid, pt->base_ms) ? 0 : -ENOMEM;
	/* launched, stopped before its exec: the exec record gives it its program */
	sp = space_new(pt, pid, NULL);
	p = sp ? proc_new(pt, pid, getpid()) : NULL;
	if (!p)
		return -ENOMEM;
	proc_enter(p, sp);
	proc__comm(pid, comm, sizeof(comm));
	if (image_start(pt, p, comm, NULL, pt->base_ms))
		return -ENOMEM;
	pt->images[p->image].hidden = true;
	pt->images[p->image].dirty = false;
	return 0;
}

int process_tree__refresh(struct process_tree *pt, pid_t pid)
{
	struct process *p = proc_find(pt, pid);
	char exe[PATH_MAX];
	struct maps *m;
	struct space *sp;
	int err;

	if (!p)
		return proc_from_proc(pt, pid, pt->base_ms) ? 0 : -ENOMEM;
	err = maps__load(pid, &m);
	if (err)
		return err;
	if (proc__exe(pid, exe, sizeof(exe)))
		exe[0] = '\0';
	sp = p->sp;
	if (sp->exe && exe[0] && strcmp(sp->exe, exe)) {	/* it has exec'd */
		sp = space_new(pt, pid, NULL);
		if (!sp) {
			maps__delete(m);
			return -ENOMEM;
		}
		proc_enter(p, sp);
	}
	sp->program = true;
	if (!sp->exe && exe[0] && !(sp->exe = strdup(exe))) {
		maps__delete(m);
		return -ENOMEM;
	}
	/* what the maps read before know of a mapping still there: its build-id */
	for (size_t i = 0; sp->maps && i < m->n; i++) {
		struct map *e = &m->v[i];
		const struct map *o = maps__find(sp->maps, e->start);

		if (o && o->start == e->start && o->end == e->end && o->pgoff == e->pgoff &&
		    o->inode == e->inode && o->path && e->path && !strcmp(o->path, e->path)) {
			memcpy(e->build_id, o->build_id, sizeof(e->build_id));
			e->build_id_len = o->build_id_len;
		}
	}
	maps__read_build_ids(m);
	maps__delete(sp->maps);
	sp->maps = m;
	sp->gen++;
	return 0;
}

/* The process of a record, made from /proc when we missed its start. */
static struct process *proc_get(struct process_tree *pt, pid_t pid, uint64_t ms)
{
	struct process *p = proc_find(pt, pid);

	return p ? p : proc_from_proc(pt, pid, ms);
}

static int on_fork(struct process_tree *pt, const struct sampler_event *ev, uint64_t ms)
{
	struct process *parent, *p;
	struct space *sp;
	const char *comm = NULL;
	char *cgroup;

	if (ev->pid == ev->ppid || !pt->inherit)
		return 0;	/* a thread; or a child we do not follow */
	parent = proc_get(pt, ev->ppid, ms);
	if (!parent)
		return -ENOMEM;
	sp = parent->sp;
	comm = pt->images[parent->image].comm;
	p = proc_find(pt, ev->pid);
	if (p) {		/* a PID used again */
		image_end(pt, p, ms);
		p->ppid = ev->ppid;
		p->alive = true;
	} else {
		p = proc_new(pt, ev->pid, ev->ppid);
		if (!p)
			return -ENOMEM;
		/* proc_new() may have moved the array */
		parent = proc_find(pt, ev->ppid);
		sp = parent->sp;
	}
	proc_enter(p, sp);
	/* a child starts in its parent's cgroup (it may move before its exec) */
	if (cgroup_of(ev->pid, pt->images[parent->image].cgroup, false, &cgroup))
		return -ENOMEM;
	return image_start(pt, p, comm, cgroup, ms);
}

static int on_exec(struct process_tree *pt, const struct sampler_event *ev, uint64_t ms)
{
	struct process *p = proc_get(pt, ev->pid, ms);
	struct space *sp;
	char *cgroup;

	if (!p)
		return -ENOMEM;
	sp = space_new(pt, ev->pid, NULL);
	if (!sp)
		return -ENOMEM;
	sp->program = true;
	image_end(pt, p, ms);
	proc_enter(p, sp);
	/*
	 * where it runs the program (a container's, a service's: a runtime
	 * moves its child there before the exec); when it is gone already,
	 * where it was
	 */
	if (cgroup_of(ev->pid, pt->images[p->image].cgroup, true, &cgroup))
		return -ENOMEM;
	return image_start(pt, p, ev->comm, cgroup, ms);
}

static int on_mmap(struct process_tree *pt, const struct sampler_event *ev, uint64_t ms)
{
	struct process *p = proc_get(pt, ev->pid, ms);
	struct map m = { 0 };
	struct space *sp;
	int err;

	if (!p)
		return -ENOMEM;
	sp = p->sp;
	m.start = ev->start;
	m.end = ev->start + ev->len;
	m.pgoff = ev->pgoff;
	snprintf(m.perms, sizeof(m.perms), "r-xp");
	m.path = (char *)(ev->filename[0] && strcmp(ev->filename, "//anon") ? ev->filename : NULL);
	if (ev->build_id && ev->build_id_len) {
		memcpy(m.build_id, ev->build_id, ev->build_id_len);
		m.build_id_len = (unsigned char)ev->build_id_len;
	}
	err = maps__insert(sp->maps, &m);
	if (err)
		return err;
	sp->gen++;
	/* the first file an exec maps is the program (the interpreter comes next) */
	if (!sp->exe && m.path && m.path[0] == '/') {
		struct image *im = &pt->images[p->image];

		sp->exe = strdup(m.path);
		if (!sp->exe)
			return -ENOMEM;
		if (!im->exe && (im->exe = strdup(m.path)))
			im->dirty = !im->hidden;
	}
	return 0;
}

int process_tree__event(struct process_tree *pt, const struct sampler_event *ev)
{
	uint64_t ms = to_ms(pt, ev->time);
	struct process *p;

	pt->records = true;
	switch (ev->type) {
	case SEV_FORK:
		return on_fork(pt, ev, ms);
	case SEV_COMM:
		if (ev->exec)
			return on_exec(pt, ev, ms);
		p = proc_find(pt, ev->pid);
		if (p && ev->pid == ev->tid) {	/* prctl(PR_SET_NAME) of the main thread */
			struct image *im = &pt->images[p->image];
			char *c = strdup(ev->comm);

			if (!c)
				return -ENOMEM;
			free(im->comm);
			im->comm = c;
			im->dirty = !im->hidden;
		}
		return 0;
	case SEV_EXIT:
		p = proc_find(pt, ev->pid);
		if (p && ev->pid == ev->tid && p->alive) {
			p->alive = false;
			image_end(pt, p, ms);
			if (p->sp)
				p->sp->refs--;
		}
		return 0;
	case SEV_MMAP:
		return on_mmap(pt, ev, ms);
	default:
		return 0;
	}
}

int process_tree__learn(struct process_tree *pt, pid_t pid, pid_t ppid, bool forked, bool exec,
			bool exited, uint64_t ms)
{
	struct process *p = proc_find(pt, pid);

	if (pt->records)
		exited = exec = false;	/* the records said it, at the right time */
	if (exited) {
		if (p && p->alive) {
			p->alive = false;
			image_end(pt, p, ms);
			if (p->sp)
				p->sp->refs--;
		}
		return 0;
	}
	if (p) {
		if (exec && pid != getpid())
			process_tree__refresh(pt, pid);	/* gone already: its old maps stay */
		return 0;
	}
	if (forked && ppid > 0 && proc_find(pt, ppid)) {
		struct sampler_event ev = { .type = SEV_FORK, .pid = pid, .tid = pid,
					    .ppid = ppid };

		return on_fork(pt, &ev, ms);
	}
	p = proc_from_proc(pt, pid, ms);
	if (!p)
		return -ENOMEM;
	p->ppid = ppid;
	pt->images[p->image].row.ppid = ppid;
	return 0;
}

static struct resolver *space_resolver(struct space *sp);

/* The interned id of string s. */
static int intern(struct process_tree *pt, const char *s, uint64_t *id);

static bool str_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct process_tree *pt = ctx;

	return !strcmp(pt->strs[val], key);
}

static int intern(struct process_tree *pt, const char *s, uint64_t *id)
{
	uint64_t h = hashmap__hash_str(s);
	bool fresh;
	int err;

	if (hashmap__lookup(&pt->str_index, h, str_eq, s, pt, id))
		return 0;
	if (ALLOC_GROW(pt->strs, pt->n_strs + 1, pt->cap_strs, 16))
		return -ENOMEM;
	*id = pt->n_strs;
	err = hashmap__intern(&pt->str_index, h, str_eq, s, pt, id, &fresh);
	if (err)
		return err;
	if (fresh && !(pt->strs[pt->n_strs++] = strdup(s))) {
		pt->n_strs--;
		return -ENOMEM;
	}
	return 0;
}

/* What is at addr in sp: the file and the offset in it, or sp's own anonymous code. */
static int identity(struct process_tree *pt, struct space *sp, uint64_t addr, struct claim *c)
{
	/* sp's own maps: the file's interned id is kept in the map (every frame of
	 * a heap stack comes here) */
	struct map *m = sp->maps ? (struct map *)maps__find(sp->maps, addr) : NULL;
	char buf[PATH_MAX + 64];

	if (m && m->path) {
		int n, err;

		c->off = addr - m->start + m->pgoff;
		if (m->ident) {
			c->file = m->ident - 1;
			return 0;
		}
		n = snprintf(buf, sizeof(buf), "%s#", m->path);
		for (int i = 0; i < m->build_id_len && n < (int)sizeof(buf) - 3; i++)
			n += snprintf(buf + n, sizeof(buf) - n, "%02x", m->build_id[i]);
		err = intern(pt, buf, &c->file);
		if (!err)
			m->ident = c->file + 1;
		return err;
	} else {
		snprintf(buf, sizeof(buf), "anon#%d", sp->id);
		c->off = addr;
	}
	return intern(pt, buf, &c->file);
}

static int queue(struct process_tree *pt, uint64_t key, struct space *sp, uint64_t addr)
{
	if (ALLOC_GROW(pt->pend, pt->n_pend + 1, pt->cap_pend, 16))
		return -ENOMEM;
	pt->pend[pt->n_pend++] = (struct pending){ key, addr, sp };
	/*
	 * Code in no file (a JIT's) is named by its perf map, which a JIT
	 * may remove when it exits: looked up now, while it runs (the
	 * resolver keeps the answer).
	 */
	if (sp && sp->res && sp->maps && !maps__find_file(sp->maps, addr))
		resolver__resolve(sp->res, addr);
	return 0;
}

int process_tree__key(struct process_tree *pt, pid_t pid, uint64_t addr, enum key_use use,
		      uint64_t *key)
{
	struct process *p;
	struct space *sp;
	struct claim c;
	uint64_t idx;
	bool fresh;
	int err;

	*key = addr;
	if (kernel_syms__is_kernel(addr)) {
		/* system-wide: a kernel thread has samples in the kernel only */
		if (use == KEY_SAMPLE && pt->system_wide && !proc_get(pt, pid, pt->base_ms))
			return -ENOMEM;
		if (use == KEY_SAMPLE && (p = proc_find(pt, pid)) &&
		    !pt->images[p->image].hidden) {
			pt->images[p->image].row.samples++;
			pt->images[p->image].dirty = true;
		}
		if (hashmap__get(&pt->known, addr, NULL))
			return 0;
		err = hashmap__set(&pt->known, addr, 1);
		return err ? err : queue(pt, addr, NULL, addr);
	}
	p = proc_get(pt, pid, pt->base_ms);
	if (!p)
		return -ENOMEM;
	sp = p->sp;
	if (use == KEY_HEAP_SITE && !sp->heap) {
		sp->heap = true;
		if (!sp->samples && !sp->res)
			space_resolver(sp);
	}
	if (use == KEY_SAMPLE) {
		/*
		 * The files are opened at the first sample, while the process
		 * most likely still runs: a short-lived process in a container
		 * has its files only under its own /proc/PID/root.
		 */
		if (!sp->samples++ && !sp->res && !pt->system_wide)
			space_resolver(sp);
		if (!pt->images[p->image].hidden) {
			pt->images[p->image].row.samples++;
			pt->images[p->image].dirty = true;
		}
	}
	err = identity(pt, sp, addr, &c);
	if (err)
		return err;
	if (!hashmap__get(&pt->claims, addr, &idx)) {
		if (ALLOC_GROW(pt->cl, pt->n_cl + 1, pt->cap_cl, 16))
			return -ENOMEM;
		pt->cl[pt->n_cl++] = c;
		err = hashmap__set(&pt->claims, addr, pt->n_cl);
		return err ? err : queue(pt, addr, sp, addr);
	}
	if (pt->cl[idx - 1].file == c.file && pt->cl[idx - 1].off == c.off)
		return 0;
	/* other code at this address: the space's own key */
	if (addr >= USER_LIMIT)
		return 0;
	if (!sp->keynum) {
		if (pt->next_keynum >= KEY_MAX) {
			if (!pt->warned_keys)
				pr_warn("more than %d programs in the recording: some addresses "
					"may be named after another program's code", KEY_MAX);
			pt->warned_keys = true;
			pt->next_keynum = 0;
		}
		sp->keynum = ++pt->next_keynum;
	}
	*key = ((uint64_t)sp->keynum << KEY_SHIFT) | addr;
	err = hashmap__add(&pt->known, *key, 0, &fresh);
	if (err || !fresh)
		return err;
	hashmap__set(&pt->known, *key, 1);
	return queue(pt, *key, sp, addr);
}

/* sp's resolver, made or told about new mappings. NULL when it cannot be made. */
static struct resolver *space_resolver(struct space *sp)
{
	struct maps *m;

	if (sp->res && sp->res_gen == sp->gen)
		return sp->res;
	if (!sp->maps)
		return NULL;	/* its process is gone and its maps with it */
	m = maps__dup(sp->maps);
	if (!m)
		return sp->res;
	if (!sp->res) {
		if (resolver__new_maps(sp->pid, sp->exe, m, &sp->res)) {
			sp->res = NULL;
			return NULL;
		}
	} else if (resolver__set_maps(sp->res, m)) {
		return sp->res;
	}
	sp->res_gen = sp->gen;
	return sp->res;
}

struct resolver *process_tree__busiest(struct process_tree *pt, const char **exe)
{
	struct space *best = NULL;

	for (size_t i = 0; i < pt->n_spaces; i++)
		if (pt->spaces[i]->exe && (!best || pt->spaces[i]->samples > best->samples))
			best = pt->spaces[i];
	*exe = best ? best->exe : NULL;
	return best ? space_resolver(best) : NULL;
}

struct resolver *process_tree__resolver(struct process_tree *pt, pid_t pid)
{
	struct process *p = proc_find(pt, pid);

	return p && p->sp ? space_resolver(p->sp) : NULL;
}

/* A symbol of no code: one frame, named name (NULL: unnamed). */
static struct symbol *symbol_unknown(uint64_t key, const char *name)
{
	struct symbol *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->addr = key;
	d->n_frames = 1;
	d->frames = calloc(1, sizeof(*d->frames));
	if (!d->frames || (name && !(d->frames[0].function = strdup(name)))) {
		symbol__delete(d);
		return NULL;
	}
	return d;
}

int process_tree__truncated_key(struct process_tree *pt, uint64_t *key)
{
	int err;

	*key = KEY_TRUNCATED;
	if (hashmap__get(&pt->known, KEY_TRUNCATED, NULL))
		return 0;
	err = hashmap__set(&pt->known, KEY_TRUNCATED, 1);
	return err ? err : queue(pt, KEY_TRUNCATED, NULL, KEY_TRUNCATED);
}

static bool id_sym_eq(uint64_t val, const void *key, const void *ctx)
{
	const struct process_tree *pt = ctx;
	const struct claim *k = key;

	return pt->id_syms[val - 1].id.file == k->file && pt->id_syms[val - 1].id.off == k->off;
}

static uint64_t id_sym_hash(const struct claim *id)
{
	return hashmap__hash_u64(id->file * 0x9e3779b97f4a7c15ULL ^ id->off);
}

static const struct symbol *id_sym_find(struct process_tree *pt, const struct claim *id)
{
	uint64_t v;

	return hashmap__lookup(&pt->id_syms_index, id_sym_hash(id), id_sym_eq, id, pt, &v) ?
	       pt->id_syms[v - 1].s : NULL;
}

/* A copy of s, the name of id for every space from now on. 0 or -ENOMEM. */
static int id_sym_add(struct process_tree *pt, const struct claim *id, const struct symbol *s)
{
	struct symbol *d;
	uint64_t v;
	bool fresh;

	if (ALLOC_GROW(pt->id_syms, pt->n_id_syms + 1, pt->cap_id_syms, 64))
		return -ENOMEM;
	d = symbol__copy(s, s->addr);
	if (!d)
		return -ENOMEM;
	pt->id_syms[pt->n_id_syms] = (struct id_sym){ *id, d };
	v = pt->n_id_syms + 1;
	if (hashmap__intern(&pt->id_syms_index, id_sym_hash(id), id_sym_eq, id, pt, &v, &fresh)) {
		symbol__delete(d);
		return -ENOMEM;
	}
	pt->n_id_syms++;
	return 0;
}

/*
 * System-wide: at most this many resolvers of spaces at a time (for code in
 * no file: a JIT's), besides the resolvers of files below. A resolver that
 * reads a library's DWARF holds its tables (the decompressed sections of
 * Debian's debug files are one copy for the run, util/symbols/inflated.h).
 * The pending keys are taken space by space, so each resolver is made once
 * per checkpoint.
 */
#define LIVE_RESOLVERS	4

/*
 * System-wide: an address in a file is named by a resolver of that file
 * alone, shared by every space that maps it: its one executable mapping as
 * the first space had it, the address moved there by its file offset.
 * libc is read (and its debug sections decompressed) once, not once per
 * process. The least recently used of them goes when a new one is needed.
 */
static struct file_res *file_resolver(struct process_tree *pt, const struct space *sp,
				      uint64_t addr, const struct claim *id)
{
	const struct map *m = sp->maps ? maps__find(sp->maps, addr) : NULL;
	struct file_res *f, *lru = NULL;
	struct maps *one;
	struct map copy;

	for (size_t i = 0; i < pt->n_fres; i++) {
		f = &pt->fres[i];
		if (f->file == id->file && id->off >= f->pgoff &&
		    id->off - f->pgoff < f->end - f->start) {
			f->tick = ++pt->res_tick;
			return f;
		}
		if (!lru || f->tick < lru->tick)
			lru = f;
	}
	if (!m || !m->path)
		return NULL;
	if (pt->n_fres == sizeof(pt->fres) / sizeof(pt->fres[0])) {
		resolver__delete(lru->res);
		f = lru;
	} else {
		f = &pt->fres[pt->n_fres++];
	}
	memset(f, 0, sizeof(*f));
	one = maps__new(sp->pid);
	copy = *m;
	if (!one || maps__insert(one, &copy)) {
		maps__delete(one);
		one = NULL;
	}
	/* one is the resolver's from here, also when it fails */
	if (!one || resolver__new_maps(sp->pid, m->path, one, &f->res)) {
		pt->n_fres--;
		if (f != &pt->fres[pt->n_fres])
			*f = pt->fres[pt->n_fres];
		return NULL;
	}
	f->file = id->file;
	f->start = m->start;
	f->end = m->end;
	f->pgoff = m->pgoff;
	f->tick = ++pt->res_tick;
	return f;
}

static void space_drop_resolver(struct space *sp);

/* Room for one more resolver: the least recently used one goes. */
static void resolvers_make_room(struct process_tree *pt, const struct space *keep)
{
	struct space *lru = NULL;
	size_t live = 0;

	for (size_t i = 0; i < pt->n_spaces; i++) {
		struct space *sp = pt->spaces[i];

		if (!sp->res || sp == keep)
			continue;
		live++;
		if (!lru || sp->res_tick < lru->res_tick)
			lru = sp;
	}
	if (lru && live >= LIVE_RESOLVERS)
		space_drop_resolver(lru);
}

static int order_cmp(const void *a, const void *b, void *ctx)
{
	const struct process_tree *pt = ctx;
	const struct pending *x = &pt->pend[*(const size_t *)a];
	const struct pending *y = &pt->pend[*(const size_t *)b];
	int ix = x->sp ? x->sp->id : -1, iy = y->sp ? y->sp->id : -1;

	if (ix != iy)
		return ix < iy ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

const char *process_tree__kernel_fn(struct process_tree *pt, uint64_t addr)
{
	const struct symbol *s = pt->ksyms ? kernel_syms__resolve(pt->ksyms, addr) : NULL;

	return s && s->n_frames ? s->frames[0].function : NULL;
}

int process_tree__tracking_key(struct process_tree *pt, pid_t pid, uint64_t *key)
{
	struct process *p = proc_find(pt, pid);
	int err;

	*key = KEY_HEAP_TRACKING;
	if (p && !pt->images[p->image].hidden) {
		pt->images[p->image].row.samples++;
		pt->images[p->image].dirty = true;
	}
	if (hashmap__get(&pt->known, KEY_HEAP_TRACKING, NULL))
		return 0;
	err = hashmap__set(&pt->known, KEY_HEAP_TRACKING, 1);
	return err ? err : queue(pt, KEY_HEAP_TRACKING, NULL, KEY_HEAP_TRACKING);
}

int process_tree__new_symbols(struct process_tree *pt, const struct symbol *const **syms,
			      size_t *n)
{
	size_t k = 0;

	for (size_t i = 0; i < pt->n_owned; i++)
		symbol__delete(pt->owned[i]);
	pt->n_owned = 0;
	*syms = NULL;
	*n = 0;
	if (pt->n_pend > pt->cap_out) {
		const struct symbol **v = realloc(pt->out, pt->n_pend * sizeof(*v));

		if (!v)
			return -ENOMEM;
		pt->out = v;
		pt->cap_out = pt->n_pend;
	}
	if (pt->n_pend > pt->cap_owned) {
		struct symbol **v = realloc(pt->owned, pt->n_pend * sizeof(*v));

		if (!v)
			return -ENOMEM;
		pt->owned = v;
		pt->cap_owned = pt->n_pend;
	}
	if (pt->system_wide && pt->n_pend > pt->cap_order) {
		size_t *v = realloc(pt->order, pt->n_pend * sizeof(*v));

		if (!v)
			return -ENOMEM;
		pt->order = v;
		pt->cap_order = pt->n_pend;
	}
	if (pt->system_wide && pt->n_pend) {
		for (size_t i = 0; i < pt->n_pend; i++)
			pt->order[i] = i;
		qsort_r(pt->order, pt->n_pend, sizeof(*pt->order), order_cmp, pt);
	}
	for (size_t j = 0; j < pt->n_pend; j++) {
		const struct pending *q = &pt->pend[pt->system_wide ? pt->order[j] : j];
		const struct symbol *s = NULL;
		struct resolver *res;
		struct claim id;
		bool by_id = false;

		/* system-wide: what another space running the same file named */
		if (q->sp && pt->system_wide && !identity(pt, q->sp, q->addr, &id) &&
		    strncmp(pt->strs[id.file], "anon#", 5)) {
			by_id = true;
			s = id_sym_find(pt, &id);
		}
		/* system-wide: the file's own resolver */
		if (!s && by_id) {
			struct file_res *f = file_resolver(pt, q->sp, q->addr, &id);

			s = f ? resolver__resolve(f->res, f->start + (id.off - f->pgoff)) : NULL;
			if (s) {
				if (id_sym_add(pt, &id, s))
					return -ENOMEM;
				s = pt->id_syms[pt->n_id_syms - 1].s;
			}
		}
		if (!s && q->sp && pt->system_wide && !q->sp->res)
			resolvers_make_room(pt, q->sp);
		if (s) {
			;
		} else if (q->key == KEY_TRUNCATED) {
			struct symbol *u = symbol_unknown(q->key, "[truncated]");

			if (!u)
				return -ENOMEM;
			pt->owned[pt->n_owned++] = u;
			s = u;
		} else if (q->key == KEY_HEAP_TRACKING) {
			struct symbol *u = symbol_unknown(q->key, "[rsprof heap tracking]");

			if (!u || !(u->module = strdup("[rsprof heap tracking]"))) {
				symbol__delete(u);
				return -ENOMEM;
			}
			pt->owned[pt->n_owned++] = u;
			s = u;
		} else if (!q->sp) {
			s = kernel_syms__resolve(pt->ksyms, q->addr);
		} else if ((res = space_resolver(q->sp))) {
			q->sp->res_used = true;
			q->sp->res_tick = ++pt->res_tick;
			s = resolver__resolve(res, q->addr);
			/*
			 * system-wide: the copy, for the resolver may go before the
			 * symbols are written (resolvers_make_room())
			 */
			if (s && by_id) {
				if (id_sym_add(pt, &id, s))
					return -ENOMEM;
				s = pt->id_syms[pt->n_id_syms - 1].s;
			} else if (s && pt->system_wide && s->addr == q->key) {
				struct symbol *d = symbol__copy(s, q->key);

				if (!d)
					return -ENOMEM;
				pt->owned[pt->n_owned++] = d;
				s = d;
			}
		} else {
			struct symbol *u = symbol_unknown(q->key, NULL);

			if (!u)
				return -ENOMEM;
			pt->owned[pt->n_owned++] = u;
			s = u;
		}
		if (!s)
			return -ENOMEM;
		if (s->addr != q->key) {
			struct symbol *d = symbol__copy(s, q->key);

			if (!d)
				return -ENOMEM;
			pt->owned[pt->n_owned++] = d;
			s = d;
		}
		/*
		 * The [vdso]'s names (clock_gettime...) come from the kernel and
		 * name none of the program's code: a stripped program that calls
		 * it is still one nothing could be named in.
		 */
		if (s->n_frames && s->frames[s->chosen].function && q->key != KEY_TRUNCATED &&
		    !(s->module && !strcmp(s->module, "[vdso]")))
			pt->named++;
		pt->out[k++] = s;
	}
	pt->n_pend = 0;
	*syms = pt->out;
	*n = k;
	return 0;
}

int process_tree__changed_rows(struct process_tree *pt, const struct process_row **rows,
			       size_t *n)
{
	size_t k = 0;

	*rows = NULL;
	*n = 0;
	for (size_t i = 0; i < pt->n_images; i++) {
		struct image *im = &pt->images[i];

		if (!im->dirty)
			continue;
		if (ALLOC_GROW(pt->rows, k + 1, pt->cap_rows, 16))
			return -ENOMEM;
		im->row.comm = im->comm;
		im->row.exe = im->exe;
		im->row.cgroup = im->cgroup;
		pt->rows[k++] = im->row;
		im->dirty = false;
	}
	*rows = pt->rows;
	*n = k;
	return 0;
}

int process_tree__changed_maps(struct process_tree *pt,
			       int (*cb)(void *ctx, const struct maps *m), void *ctx)
{
	for (size_t i = 0; i < pt->n_spaces; i++) {
		struct space *sp = pt->spaces[i];
		int err;

		if (!sp->maps || sp->written_gen == sp->gen || !sp->maps->n)
			continue;
		sp->maps->pid = sp->pid;
		err = cb(ctx, sp->maps);
		if (err)
			return err;
		sp->written_gen = sp->gen;
	}
	return 0;
}

const char *process_tree__exe(struct process_tree *pt, pid_t pid)
{
	struct process *p = proc_find(pt, pid);

	return p && p->sp ? p->sp->exe : NULL;
}

/* The resolver of sp goes; its verdict on debug info stays (process_tree__debuginfo()). */
static void space_drop_resolver(struct space *sp)
{
	if (!sp->res)
		return;
	if (has_data(sp) && sp->exe && !sp->has_verdict) {
		sp->verdict = resolver__check_debuginfo(sp->res);
		sp->has_verdict = true;
	}
	resolver__delete(sp->res);
	sp->res = NULL;
}

/* Processes ended two checkpoints ago leave (the heap read them last one checkpoint after). */
static void gc_processes(struct process_tree *pt)
{
	for (size_t i = 0; i < pt->n_procs;) {
		struct process *p = &pt->procs[i];

		if (p->alive || ++p->dead_gcs < 2) {
			i++;
			continue;
		}
		hashmap__remove(&pt->by_pid, (uint64_t)p->pid);
		if (i != pt->n_procs - 1) {
			*p = pt->procs[pt->n_procs - 1];
			hashmap__set(&pt->by_pid, (uint64_t)p->pid, i + 1);
		}
		pt->n_procs--;
	}
}

/* Rows written and ended, of no process any more, leave. */
static void gc_images(struct process_tree *pt)
{
	size_t w = 0, *at;	/* at[i]: where image i goes; SIZE_MAX: used by a process */

	if (!pt->n_images || !(at = calloc(pt->n_images, sizeof(*at))))
		return;
	for (size_t i = 0; i < pt->n_procs; i++)
		at[pt->procs[i].image] = SIZE_MAX;
	for (size_t i = 0; i < pt->n_images; i++) {
		struct image *im = &pt->images[i];

		if (at[i] != SIZE_MAX && !im->dirty && (im->hidden || im->row.end_ms >= 0)) {
			free(im->comm);
			free(im->exe);
			free(im->cgroup);
			continue;
		}
		at[i] = w;
		pt->images[w++] = *im;
	}
	for (size_t i = 0; i < pt->n_procs; i++)
		pt->procs[i].image = at[pt->procs[i].image];
	pt->n_images = w;
	free(at);
}

/*
 * System-wide, where a program may run thousands of times an hour: an
 * ended space whose maps and resolver are gone is freed, so that the
 * tree grows with the programs, not with the processes. Its data (what
 * process_tree__debuginfo() adds up per executable) goes to the first
 * ended space of its executable, which stays; one with no data leaves
 * nothing behind. Not while symbols are queued (they point at spaces).
 */
static void drop_spaces(struct process_tree *pt)
{
	size_t w = 0;

	if (pt->n_pend)
		return;
	for (size_t i = 0; i < pt->n_spaces; i++) {
		struct space *sp = pt->spaces[i], *into = NULL;
		uint64_t v;

		if (sp->in_use || sp->refs > 0 || sp->maps || sp->res) {
			pt->spaces[w++] = sp;
			continue;
		}
		if (has_data(sp)) {
			if (!sp->exe) {
				pt->spaces[w++] = sp;
				continue;
			}
			if (hashmap__get(&pt->exe_data, hashmap__hash_str(sp->exe), &v))
				into = (struct space *)(uintptr_t)v;
			if (!into || into == sp || strcmp(into->exe, sp->exe)) {
				/* the first of its executable (or no memory to note it) */
				if (!into)
					hashmap__set(&pt->exe_data, hashmap__hash_str(sp->exe),
						     (uint64_t)(uintptr_t)sp);
				pt->spaces[w++] = sp;
				continue;
			}
			into->samples += sp->samples;
			into->heap |= sp->heap;
			if (!into->has_verdict && sp->has_verdict) {
				into->has_verdict = true;
				into->verdict = sp->verdict;
			}
		}
		pt->programs_gone += sp->program;
		space_free(sp);
	}
	pt->n_spaces = w;
}

/*
 * Address spaces no process uses any more, their maps written: the maps go.
 * A space with data keeps its verdict on debug info; one without keeps
 * its maps only if it is the first of its executable (what
 * process_tree__debuginfo() looks at when nothing had samples).
 */
static void gc_spaces(struct process_tree *pt)
{
	for (size_t i = 0; i < pt->n_spaces; i++)
		pt->spaces[i]->in_use = false;
	for (size_t i = 0; i < pt->n_procs; i++)
		if (pt->procs[i].sp)
			pt->procs[i].sp->in_use = true;
	for (size_t i = 0; i < pt->n_spaces; i++) {
		struct space *sp = pt->spaces[i];
		bool fresh = false;

		if (sp->in_use || sp->refs > 0 || !sp->maps || sp->written_gen != sp->gen)
			continue;
		if (!has_data(sp) && sp->exe && sp->program &&
		    (hashmap__add(&pt->exe_kept, hashmap__hash_str(sp->exe), 1, &fresh) || fresh))
			continue;	/* the first of its program (or no memory to tell) */
		/* no resolver was made: nothing to say about it (system-wide: not asked) */
		if (has_data(sp) && !sp->has_verdict && !pt->system_wide)
			continue;
		maps__delete(sp->maps);
		sp->maps = NULL;
		if (!has_data(sp)) {
			free(sp->exe);
			sp->exe = NULL;
		}
	}
	if (pt->system_wide)
		drop_spaces(pt);
}

void process_tree__gc(struct process_tree *pt)
{
	for (size_t i = 0; i < pt->n_spaces; i++) {
		struct space *sp = pt->spaces[i];

		/* system-wide: a resolver that named nothing this time goes too */
		if (sp->refs <= 0 || (pt->system_wide && !sp->res_used))
			space_drop_resolver(sp);
		sp->res_used = false;
		resolver__release_pages(sp->res);
	}
	for (size_t i = 0; i < pt->n_fres; i++)
		resolver__release_pages(pt->fres[i].res);
	gc_processes(pt);
	gc_images(pt);
	gc_spaces(pt);
}

int process_tree__debuginfo(struct process_tree *pt,
			    void (*cb)(void *ctx, const char *exe, uint64_t samples, int verdict),
			    void *ctx)
{
	bool any = false;

	for (size_t i = 0; i < pt->n_spaces; i++)
		any |= has_data(pt->spaces[i]) && pt->spaces[i]->exe;
	/* one line per executable: spaces of one program add up */
	for (size_t i = 0; i < pt->n_spaces; i++) {
		struct space *sp = pt->spaces[i];
		uint64_t samples = 0;
		struct resolver *res;
		bool first = true;

		if (!sp->exe || (any ? !has_data(sp) : !sp->program))
			continue;
		for (size_t j = 0; j < pt->n_spaces; j++) {
			struct space *o = pt->spaces[j];

			if (!o->exe || strcmp(o->exe, sp->exe) || (any ? !has_data(o) : !o->program))
				continue;
			if (j < i) {
				first = false;
				break;
			}
			samples += o->samples;
		}
		if (!first)
			continue;
		if (sp->has_verdict && !sp->res) {
			cb(ctx, sp->exe, samples, sp->verdict);
			continue;
		}
		res = space_resolver(sp);
		cb(ctx, sp->exe, samples, res ? resolver__check_debuginfo(res) : -RSPROF_ENODEBUG);
		if (sp->refs <= 0)	/* made for this: not needed any more */
			space_drop_resolver(sp);
	}
	return 0;
}

uint64_t process_tree__named(const struct process_tree *pt)
{
	return pt->named;
}

void process_tree__counts(const struct process_tree *pt, size_t *processes, size_t *spaces)
{
	size_t programs = 0;

	for (size_t i = 0; i < pt->n_spaces; i++)
		programs += pt->spaces[i]->program;
	*processes = pt->n_seen;
	*spaces = programs + pt->programs_gone;
}
