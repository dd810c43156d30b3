/*
 * Stress target of the heap trackers (issue 8): THREADS threads do ITERS
 * random operations each (malloc, calloc, realloc, posix_memalign, free,
 * and hand-overs: a block pushed to a shared queue is freed by whichever
 * thread pops it), threads exit and new ones start (ROUNDS rounds), the
 * process forks now and then (the child allocates and exits), and a timer
 * signal interrupts everything every 200 us. The program keeps its own
 * account of every block (its line and size) and writes, at the end, what
 * each line allocated and what was freed of it:
 *
 *   MARKER alloc_count alloc_bytes free_count free_bytes
 *
 * into OUT, to be compared with the profile.
 *
 *   heap_stress OUT [THREADS [ITERS [ROUNDS]]]
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

enum line { L_MALLOC, L_CALLOC, L_REALLOC, L_MEMALIGN, L_N };
static const char *const names[L_N] = { "ST_MALLOC", "ST_CALLOC", "ST_REALLOC", "ST_MEMALIGN" };

struct block {
	void *p;
	size_t size;
	int line;
};

struct account {
	unsigned long alloc_count[L_N], alloc_bytes[L_N], free_count[L_N], free_bytes[L_N];
};

#define SLOTS 256
#define QUEUE 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct block queue[QUEUE];
static int q_n;
static struct account total;
static unsigned long iters = 100000;
static volatile sig_atomic_t ticks;

static void on_tick(int sig)
{
	ticks++;
}

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void gone(struct account *a, const struct block *b)
{
	a->free_count[b->line]++;
	a->free_bytes[b->line] += b->size;
}

static void made(struct account *a, struct block *b, void *p, size_t size, int line)
{
	if (!p)
		abort();
	b->p = p;
	b->size = size;
	b->line = line;
	a->alloc_count[line]++;
	a->alloc_bytes[line] += size;
}

static void *worker(void *arg)
{
	uint64_t rng = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;
	struct block slot[SLOTS] = { { 0 } };
	struct account a = { { 0 } };

	for (unsigned long i = 0; i < iters; i++) {
		uint64_t r = next(&rng);
		struct block *b = &slot[r % SLOTS];
		size_t size = 1 + (r >> 20) % 4096;
		int op = (r >> 40) % 10;
		void *p;

		switch (op) {
		case 0: case 1: case 2: case 3:
			if (b->p) {
				gone(&a, b);
				free(b->p);
			}
			made(&a, b, malloc(size), size, L_MALLOC); /* ST_MALLOC */
			break;
		case 4:
			if (b->p) {
				gone(&a, b);
				free(b->p);
			}
			made(&a, b, calloc(1, size), size, L_CALLOC); /* ST_CALLOC */
			break;
		case 5: case 6:
			if (b->p)
				gone(&a, b);
			p = realloc(b->p, size); /* ST_REALLOC */
			made(&a, b, p, size, L_REALLOC);
			break;
		case 7:
			if (b->p) {
				gone(&a, b);
				free(b->p);
			}
			if (posix_memalign(&p, 64, size)) /* ST_MEMALIGN */
				abort();
			made(&a, b, p, size, L_MEMALIGN);
			break;
		case 8:
			/* hand over: push ours, free one another thread pushed */
			pthread_mutex_lock(&lock);
			if (b->p && q_n < QUEUE) {
				queue[q_n++] = *b;
				b->p = NULL;
			}
			if (q_n > QUEUE / 2) {
				struct block o = queue[--q_n];

				gone(&a, &o);
				free(o.p);
			}
			pthread_mutex_unlock(&lock);
			break;
		default:
			if (b->p) {
				gone(&a, b);
				free(b->p);
				b->p = NULL;
			}
			break;
		}
	}
	for (int i = 0; i < SLOTS; i++) {
		if (slot[i].p) {
			gone(&a, &slot[i]);
			free(slot[i].p);
		}
	}
	pthread_mutex_lock(&lock);
	for (int l = 0; l < L_N; l++) {
		total.alloc_count[l] += a.alloc_count[l];
		total.alloc_bytes[l] += a.alloc_bytes[l];
		total.free_count[l] += a.free_count[l];
		total.free_bytes[l] += a.free_bytes[l];
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 4, rounds = argc > 4 ? atoi(argv[4]) : 3;
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	pthread_t th[128];
	FILE *out;

	if (argc < 2 || threads < 1 || threads > 128)
		return 2;
	if (argc > 3)
		iters = strtoul(argv[3], NULL, 10);
	signal(SIGALRM, on_tick);
	setitimer(ITIMER_REAL, &it, NULL);
	for (int r = 0; r < rounds; r++) {
		pid_t pid;

		for (long t = 0; t < threads; t++)
			if (pthread_create(&th[t], NULL, worker, (void *)(r * 64 + t + 1)))
				return 1;
		/* a fork while the others allocate: the child must not hang */
		pid = fork();
		if (pid == 0) {
			for (int i = 0; i < 1000; i++)
				free(malloc(100));
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
		for (int t = 0; t < threads; t++)
			pthread_join(th[t], NULL);
	}
	/* what the queue still holds is freed last, by the main thread */
	for (int i = 0; i < q_n; i++) {
		gone(&total, &queue[i]);
		free(queue[i].p);
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	out = fopen(argv[1], "w");
	if (!out)
		return 3;
	for (int l = 0; l < L_N; l++)
		fprintf(out, "%s %lu %lu %lu %lu\n", names[l], total.alloc_count[l],
			total.alloc_bytes[l], total.free_count[l], total.free_bytes[l]);
	fprintf(out, "ticks %d\n", (int)ticks);
	return fclose(out) ? 4 : 0;
}
