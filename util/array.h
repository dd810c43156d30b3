#ifndef RSPROF_UTIL_ARRAY_H
#define RSPROF_UTIL_ARRAY_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * The growable arrays of rsprof (git's ALLOC_GROW): room in array x for nr
 * elements, its capacity alloc (a variable of any integer type) doubled
 * from first until it holds them and x realloc'd to it. 0, or -ENOMEM with
 * x and alloc as they were (also when the size would overflow).
 *
 *	if (ALLOC_GROW(t->rows, t->n + 1, t->cap, 64))
 *		return -ENOMEM;
 *	t->rows[t->n++] = row;
 */
static inline size_t array__next_cap(size_t alloc, size_t nr, size_t first, size_t elem)
{
	size_t cap = alloc ? alloc : first;

	while (cap < nr) {
		if (cap > SIZE_MAX / 2)
			return 0;
		cap *= 2;
	}
	return cap > SIZE_MAX / elem ? 0 : cap;
}

/* The same for an array of elem-sized elements known at run time (*v, *alloc of them). */
static inline int array__grow(void **v, size_t *alloc, size_t nr, size_t elem, size_t first)
{
	size_t cap;
	void *p;

	if (nr <= *alloc)
		return 0;
	cap = array__next_cap(*alloc ? 2 * *alloc : 0, nr, first, elem);
	p = cap ? realloc(*v, cap * elem) : NULL;
	if (!p)
		return -ENOMEM;
	*v = p;
	*alloc = cap;
	return 0;
}

#define ALLOC_GROW(x, nr, alloc, first) ({						\
	int err_ = 0;									\
											\
	if ((size_t)(nr) > (size_t)(alloc)) {						\
		size_t cap_ = array__next_cap((size_t)(alloc) ? 2 * (size_t)(alloc) : 0,	\
					      (size_t)(nr), (first), sizeof(*(x)));	\
		void *p_ = cap_ ? realloc((x), cap_ * sizeof(*(x))) : NULL;		\
											\
		if (p_) {								\
			(x) = p_;							\
			(alloc) = cap_;							\
		} else {								\
			err_ = -ENOMEM;							\
		}									\
	}										\
	err_;										\
})

/* The same for two arrays that grow together, with one capacity. */
#define ALLOC_GROW2(x, y, nr, alloc, first) ({						\
	__typeof__(alloc) a1_ = (alloc), a2_ = (alloc);					\
	int e2_ = ALLOC_GROW(x, nr, a1_, first);					\
											\
	if (!e2_)									\
		e2_ = ALLOC_GROW(y, nr, a2_, first);					\
	if (!e2_)									\
		(alloc) = a1_;								\
	e2_;										\
})

#endif
