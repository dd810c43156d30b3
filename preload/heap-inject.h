/*
 * Attaching the in-process heap tracker to a running process: what rsprof
 * (util/heap/inject.c) and the tracker loaded into the process
 * (preload/inject.c) tell each other. Both include this header; fixed-width
 * types only, as preload/heap-region.h.
 *
 * rsprof stops a thread of the process at a safe point (ptrace), loads the
 * tracker there with dlopen from a memfd, and calls HEAP_INJECT_ENTRY with
 * a struct heap_inject_args it wrote on that thread's stack. The tracker
 * maps the region (a memfd the process made: rsprof and the process alone
 * reach it), redirects the allocator in every loaded object (their GOT
 * slots), maps the hook page rsprof laid out, and returns its struct
 * heap_inject_ctl. rsprof then stops every thread, writes the jumps into
 * libc's free, realloc and malloc_usable_size (so that a block with the
 * tracker's header reaches the tracker whichever way it is freed), calls
 * HEAP_INJECT_HOOK in the thread it holds while the others stay stopped
 * (the tracker rewrites the entries of an allocator library the program
 * has instead of glibc's, none of them being run: heap_inject_ctl.pending)
 * and sets the tracker counting.
 *
 * The tracker stays loaded for the life of the process. At the end rsprof
 * calls rsprof_heap_detach() at a safe point (the GOT slots put back); when
 * rsprof goes without that (killed), the tracker stops counting by itself
 * once it sees the read end of rsprof's pipe hang up (the slots then keep
 * passing through). Either way its region is unmapped (an anonymous mapping
 * takes its place), and free, realloc and malloc_usable_size keep passing
 * through it, so that the blocks handed out with a header are freed right
 * for the rest of the process's life. A later rsprof finds it (its memfd's
 * name carries its build) and attaches to it again.
 */
#ifndef RSPROF_PRELOAD_HEAP_INJECT_H
#define RSPROF_PRELOAD_HEAP_INJECT_H

#include <stdint.h>

#define HEAP_INJECT_ABI		2
/* The tracker's entry rsprof calls. */
#define HEAP_INJECT_ENTRY	"rsprof_heap_attach"
/* Then, every other thread stopped: the entries of heap_inject_ctl.pending rewritten. */
#define HEAP_INJECT_HOOK	"rsprof_heap_hook"
/* Entries the tracker may rewrite, at most. */
#define HEAP_INJECT_PENDING_MAX	64
/* Bytes at an entry no thread may be inside while the tracker rewrites it. */
#define HEAP_INJECT_PENDING_LEN	32
/* The name of the tracker's memfd: "/memfd:" HEAP_INJECT_MEMFD ".<build id> (deleted)" in maps. */
#define HEAP_INJECT_MEMFD	"librsprof-heap.so"

/* Functions whose entry rsprof makes jump to the tracker (heap_inject_args.hooks[]). */
enum heap_inject_hook {
	HEAP_HOOK_FREE,
	HEAP_HOOK_REALLOC,
	HEAP_HOOK_USABLE,	/* malloc_usable_size */
	HEAP_HOOK_MAX,
};

/* What the entry returns (heap_inject_ctl.err). */
enum heap_inject_err {
	HEAP_INJECT_OK,
	HEAP_INJECT_EABI,	/* arguments of another version */
	HEAP_INJECT_EBUSY,	/* another rsprof is attached and alive */
	HEAP_INJECT_EREGION,	/* the region cannot be mapped, or is not valid */
	HEAP_INJECT_EMALLOC,	/* the process's malloc is the executable's own */
	HEAP_INJECT_EHOOK,	/* the hook page cannot be mapped where asked */
	HEAP_INJECT_ENOMEM,
};

struct heap_inject_args {
	uint32_t abi;			/* HEAP_INJECT_ABI */
	uint32_t size;			/* sizeof(struct heap_inject_args) */
	int32_t region_fd;		/* the region's memfd in the process (closed by the tracker) */
	int32_t hangup_fd;		/* the read end of rsprof's pipe: hung up, rsprof is gone */
	uint64_t hangup_ino;		/* its inode: the fd is still the pipe's */
	/* the hook page: mapped at page_addr, page_len bytes copied from page_src
	 * (on the calling thread's stack), then made read-only and executable;
	 * page_addr 0: the hooks are in place from an earlier attach */
	uint64_t page_addr, page_len, page_src;
	/* per hook: its trampoline in the page (the function's first
	 * instructions, moved, then a jump back); 0: not hooked */
	uint64_t tramp[HEAP_HOOK_MAX];
};

/* The tracker's answer, in its own memory (the entry returns its address). */
struct heap_inject_ctl {
	uint32_t abi;
	uint32_t err;			/* enum heap_inject_err */
	uint64_t mode_addr;		/* the tracker's mode word (an int) */
	int32_t mode_on;		/* the value that makes it count */
	uint32_t hooked;		/* the hooks' page is mapped (this or an earlier attach) */
	uint64_t slots;			/* GOT slots redirected */
	uint64_t objects;		/* objects looked at */
	char detail[160];		/* more about err (NUL-terminated) */
	/* entries HEAP_INJECT_HOOK rewrites: no thread may be in their first
	 * HEAP_INJECT_PENDING_LEN bytes then */
	uint32_t n_pending;
	uint32_t pad;
	uint64_t pending[HEAP_INJECT_PENDING_MAX];
};

#endif
