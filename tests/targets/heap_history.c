/*
 * Allocations at known addresses and moments (issue 14, rsprof history):
 * each event is printed to stderr as "EVENT ADDRESS MONO_NS LINE", the time
 * on CLOCK_MONOTONIC (the profile's meta alloc_history_monotonic_ns is its
 * time 0 there). A block is freed and its address handed out again to the
 * next allocation of the same size (glibc's tcache): the owner changes.
 * Events are 30 ms apart, so that a query 10 ms after one sees it alone.
 * A thread allocates too (its own ring), and a block is freed by another
 * thread than the one that made it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *volatile sink;

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void pause_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

#define SAY(what, p, line) do {						\
		fprintf(stderr, "%s %p %llu %d\n", what, (void *)(p), mono_ns(), line); \
		pause_ms(30);						\
	} while (0)

__attribute__((noinline)) static char *make_first(void)
{
	char *p = malloc(200);	/* HIST:first */

	SAY("alloc", p, __LINE__ - 2);
	memset(p, 1, 200);
	return p;
}

__attribute__((noinline)) static char *make_second(void)
{
	char *p = malloc(200);	/* HIST:second */

	SAY("alloc", p, __LINE__ - 2);
	memset(p, 2, 200);
	return p;
}

__attribute__((noinline)) static char *make_third(void)
{
	char *p = malloc(200);	/* HIST:third */

	SAY("alloc", p, __LINE__ - 2);
	memset(p, 3, 200);
	return p;
}

static void *worker(void *arg)
{
	char *q = malloc(5000);	/* HIST:thread */

	SAY("alloc", q, __LINE__ - 2);
	memset(q, 4, 5000);
	*(char **)arg = q;
	return NULL;
}

int main(void)
{
	pthread_t t;
	char *a, *b, *c, *q = NULL;

	pause_ms(50);
	a = make_first();
	free(a);
	SAY("free", a, 0);
	b = make_second();	/* the same address again (tcache) */
	sink = b;
	if (pthread_create(&t, NULL, worker, &q) || pthread_join(t, NULL))
		return 1;
	free(q);		/* made by the thread, freed here */
	SAY("free", q, 0);
	free(b);
	SAY("free", b, 0);
	c = make_third();
	sink = c;
	free(c);
	SAY("free", c, 0);
	return 0;
}
