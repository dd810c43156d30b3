#ifndef RSPROF_UTIL_SYMBOLS_FRAME_POINTERS_H
#define RSPROF_UTIL_SYMBOLS_FRAME_POINTERS_H

/*
 * Does a module's own code keep frame pointers? `record -g` walks
 * the frame-pointer chain (the kernel's user stack walk), so without them
 * CPU call stacks stop after a frame or two; the recorder says so up front.
 *
 * The census looks at the functions of the program's own compilation units
 * (DWARF units whose source is not toolchain library source: a Rust binary
 * carries std's precompiled functions, which keep frame pointers, and the
 * user's, which do not unless asked) and reads the first instructions of
 * each from the file: a function that keeps a frame pointer starts with
 * `push %rbp; mov %rsp,%rbp`, after an `endbr64` with CET (x86-64); one
 * that does not starts with a push of another register or a `sub` from
 * %rsp. Leaf functions that need no stack frame tell nothing and are not
 * counted.
 */
struct Dwfl_Module;

struct fp_census {
	unsigned int functions;		/* own functions with a stack frame (a few hundred at most) */
	unsigned int with_fp;		/* those that set up %rbp */
};

/* 0, or -ENOENT when the module has no DWARF of its own code or no readable code. */
int frame_pointers__census(struct Dwfl_Module *mod, struct fp_census *c);

/* Most own functions keep a frame pointer (false with no census: nothing to say). */
static inline int frame_pointers__missing(const struct fp_census *c)
{
	return c->functions >= 4 && c->with_fp * 2 < c->functions;
}

#endif
