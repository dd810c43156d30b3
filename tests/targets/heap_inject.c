/*
 * Targets for attaching the heap tracker to a running process (tests/t1540,
 * t1541): each prints what it computed, the same whether rsprof attached,
 * detached, was killed meanwhile, or never came. READY_FILE is created once
 * the program runs its main phase (rsprof attaches then).
 *
 *   heap_inject churn READY ROUNDS    8 threads allocating, threads starting
 *                                     and exiting all the time; a pointer to
 *                                     free and a thread key whose destructor
 *                                     is free, both taken before any attach
 *   heap_inject lock READY MS         the main thread blocked for MS ms inside
 *                                     malloc_info(), holding an arena's lock
 *                                     (its output goes to a pipe nobody reads
 *                                     meanwhile), 8 threads allocating
 *   heap_inject fork READY ROUNDS     fork, exec and _exit while allocating
 *   heap_inject seccomp READY ROUNDS  a seccomp filter installed first
 *   heap_inject steady READY ROUNDS   one thread, the same allocations each round
 *   heap_inject scribble READY MS     once rsprof's region is mapped, writes
 *                                     garbage over its layout and its sites
 *                                     (rsprof reads it as hostile input), then
 *                                     waits MS ms without allocating
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../../preload/heap-region.h"

#define THREADS 8

/* taken before rsprof can attach: a block allocated afterwards goes through them */
static void (*volatile free_ptr)(void *);
static void *(*volatile realloc_ptr)(void *, size_t);
static pthread_key_t key;

static void ready(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0)
		close(fd);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void pause_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Some allocations of every kind; what they held, summed. */
static uint64_t work(uint64_t seed, int n)
{
	void *slot[64] = { 0 };
	uint64_t s = seed | 1, sum = 0;

	for (int i = 0; i < n; i++) {
		unsigned int k = (unsigned int)(rnd(&s) % 64), how = (unsigned int)(rnd(&s) % 8);
		size_t size = 1 + (size_t)(rnd(&s) % 700);
		unsigned char *p;

		if (slot[k]) {
			sum += ((unsigned char *)slot[k])[0];
			if (how == 0)
				free_ptr(slot[k]);	/* glibc's free, taken before the attach */
			else
				free(slot[k]);
			slot[k] = NULL;
			continue;
		}
		switch (how) {
		case 0: p = calloc(1, size); break;
		case 1: p = realloc_ptr(malloc(16), size); break;
		case 2: p = realloc(NULL, size); break;
		case 3: if (posix_memalign((void **)&p, 64, size)) p = NULL; break;
		case 4: p = (unsigned char *)strndup("0123456789abcdef", size % 17); size = size % 17 + 1; break;
		default: p = malloc(size); break;
		}
		if (!p)
			abort();
		p[0] = (unsigned char)(size + i);
		sum += malloc_usable_size(p) >= size;
		slot[k] = p;
	}
	for (int k = 0; k < 64; k++)
		free(slot[k]);
	return sum;
}

struct job {
	uint64_t seed, sum;
	int n;
};

static void *worker(void *arg)
{
	struct job *j = arg;

	/* freed by glibc at the thread's exit through the destructor (free) */
	pthread_setspecific(key, malloc(100 + j->seed % 100));
	j->sum = work(j->seed, j->n);
	return NULL;
}

static int churn(const char *rd, int rounds)
{
	uint64_t total = 0;

	ready(rd);
	for (int r = 0; r < rounds; r++) {
		pthread_t t[THREADS];
		struct job j[THREADS];

		for (int i = 0; i < THREADS; i++) {
			j[i] = (struct job){ .seed = (uint64_t)r * 1000 + i + 1, .n = 20000 };
			if (pthread_create(&t[i], NULL, worker, &j[i]))
				return 1;
		}
		for (int i = 0; i < THREADS; i++) {
			pthread_join(t[i], NULL);
			total += j[i].sum;
		}
	}
	printf("churn %d rounds: %llu\n", rounds, (unsigned long long)total);
	return 0;
}

static int pipe_fd[2], drain_ms;
static long drained;

/* Reads the pipe malloc_info writes into, but only after drain_ms. */
static void *drain(void *arg)
{
	char buf[65536];
	ssize_t n;

	pause_ms(drain_ms);
	while ((n = read(pipe_fd[0], buf, sizeof(buf))) > 0)
		drained += n;
	return NULL;
}

static void *rounds_worker(void *arg)
{
	struct job *j = arg;

	for (int r = 0; r < j->n; r++) {
		j->sum += work(j->seed + (uint64_t)r, 2000);
		pause_ms(20);
	}
	return NULL;
}

/*
 * The main thread blocks inside malloc_info() (its output to a pipe nobody
 * reads for ms ms: an arena's lock held all along), while workers allocate.
 */
static int lock(const char *rd, int ms)
{
	pthread_t d, w[THREADS];
	struct job j[THREADS];
	uint64_t total = 0;
	FILE *f;

	if (pipe(pipe_fd) || fcntl(pipe_fd[0], F_SETPIPE_SZ, 4096) < 0)
		return 1;
	drain_ms = ms;
	for (int i = 0; i < THREADS; i++) {
		j[i] = (struct job){ .seed = (uint64_t)i * 1000 + 7, .n = ms / 20 + 50 };
		pthread_create(&w[i], NULL, rounds_worker, &j[i]);
	}
	pthread_create(&d, NULL, drain, NULL);
	f = fdopen(pipe_fd[1], "w");
	if (!f)
		return 1;
	setvbuf(f, NULL, _IONBF, 0);
	ready(rd);
	/* more than the pipe holds: blocks inside, an arena locked */
	for (int i = 0; i < 16; i++)
		malloc_info(0, f);
	fclose(f);
	pthread_join(d, NULL);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(w[i], NULL);
		total += j[i].sum;
	}
	printf("lock: %llu, malloc_info said something: %d\n", (unsigned long long)total,
	       drained > 0);
	return 0;
}

static int forks(const char *rd, int rounds)
{
	uint64_t total = 0;

	ready(rd);
	for (int r = 0; r < rounds; r++) {
		int st;
		pid_t c = fork();

		if (c < 0)
			return 1;
		if (!c) {
			uint64_t s = work((uint64_t)r + 5, 2000);

			if (r % 2)
				_exit((int)(s % 200));
			execl("/bin/sh", "sh", "-c", "exit 3", (char *)NULL);
			_exit(127);
		}
		total += work((uint64_t)r + 9, 5000);
		if (waitpid(c, &st, 0) != c || !WIFEXITED(st))
			return 1;
		total += (uint64_t)WEXITSTATUS(st);
	}
	printf("fork %d rounds: %llu\n", rounds, (unsigned long long)total);
	return 0;
}

static int seccomp(const char *rd, int rounds)
{
	/* every system call allowed but one, which fails with EPERM */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_swapoff, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	uint64_t total = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		return 1;
	ready(rd);
	for (int r = 0; r < rounds; r++) {
		total += work((uint64_t)r + 3, 20000);
		pause_ms(10);
	}
	printf("seccomp %d rounds: %llu (swapoff: %s)\n", rounds, (unsigned long long)total,
	       syscall(SYS_swapoff, "/nonexistent") < 0 && errno == EPERM ? "EPERM" : "?");
	return 0;
}

static int steady(const char *rd, int rounds)
{
	uint64_t total = 0;

	ready(rd);
	for (int r = 0; r < rounds; r++) {
		total += work((uint64_t)r + 11, 20000);
		pause_ms(10);
	}
	printf("steady %d rounds: %llu\n", rounds, (unsigned long long)total);
	return 0;
}

/* The tracker's region in this process (its memfd's mapping); NULL: none. */
static struct heap_region *region(size_t *size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi;
	void *r = NULL;

	if (!f)
		return NULL;
	while (!r && fgets(line, sizeof(line), f))
		if (strstr(line, "memfd:rsprof-heap-region") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			r = (void *)lo;
			*size = hi - lo;
		}
	fclose(f);
	return r;
}

static int scribble(const char *rd, int ms)
{
	uint64_t total = work(1, 20000), s = 42;
	struct heap_region *r;
	size_t size = 0;

	printf("scribble: start\n");	/* stdout's buffer, before */
	ready(rd);
	while (!(r = region(&size))) {
		total += work(2, 2000);
		pause_ms(10);
	}
	for (int i = 0; i < 50; i++) {
		total += work((uint64_t)i + 3, 2000);
		pause_ms(10);
	}
	/* the layout rsprof reads (not the size, nor what the tracker itself
	 * reads on its path: this program allocates no more) */
	r->off_index = r->off_sites = r->off_frames = r->off_blocks = r->off_rings = ~0ULL / 3;
	r->site_cap = r->index_cap = r->block_cap = r->ring_count = r->ring_cap = ~0U;
	r->frame_cap = r->block_size = r->ring_size = ~0ULL;
	r->n_sites = r->n_frames = r->n_blocks = r->n_rings = ~0ULL;
	r->magic = r->version = 0;
	/* and the sites, the frames, the blocks: noise */
	for (size_t o = 4096; o + 8 <= size && o < (64u << 20); o += 8 + rnd(&s) % 64)
		*(uint64_t *)((char *)r + o) = rnd(&s);
	pause_ms(ms);
	printf("scribble: %llu\n", (unsigned long long)total);
	return 0;
}

int main(int argc, char **argv)
{
	int n;

	if (argc < 4)
		return 2;
	free_ptr = free;
	realloc_ptr = realloc;
	if (pthread_key_create(&key, free))
		return 1;
	n = atoi(argv[3]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "churn"))
		return churn(argv[2], n);
	if (!strcmp(argv[1], "lock"))
		return lock(argv[2], n);
	if (!strcmp(argv[1], "fork"))
		return forks(argv[2], n);
	if (!strcmp(argv[1], "seccomp"))
		return seccomp(argv[2], n);
	if (!strcmp(argv[1], "steady"))
		return steady(argv[2], n);
	if (!strcmp(argv[1], "scribble"))
		return scribble(argv[2], n);
	return 2;
}
