/* util/symbols/x86-prologue.h: the frame-pointer test of the census and the tracker. */
#include "util/symbols/x86-prologue.h"

#include "tap.h"

#define TEST(want, what, ...) do {						\
		static const uint8_t b_[] = { __VA_ARGS__ };			\
		is_int(x86__fp_prologue(b_, sizeof(b_)), want, what);		\
	} while (0)

int main(void)
{
	TEST(1, "push %%rbp; mov %%rsp,%%rbp", 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10);
	TEST(1, "the other encoding of the mov", 0x55, 0x48, 0x8b, 0xec, 0xc3);
	TEST(1, "after an endbr64", 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5);
	TEST(1, "a movabs scheduled first (gcc -O2)",
	     0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, 0x55, 0x48, 0x89, 0xe5);
	TEST(1, "a lea between the two", 0x55, 0x48, 0x8d, 0x47, 0x08, 0x48, 0x89, 0xe5);
	TEST(0, "push %%rbx first: a frame without one", 0x53, 0x48, 0x83, 0xec, 0x20, 0x90);
	TEST(0, "push %%r12 first", 0x41, 0x54, 0x55, 0x53, 0x90);
	TEST(0, "sub $32,%%rsp first", 0x48, 0x83, 0xec, 0x20, 0x90);
	TEST(0, "%%rbp pushed as a plain register, then another push",
	     0x55, 0x53, 0x48, 0x89, 0xe5, 0x90);
	TEST(0, "mov %%rsp,%%rbp after a sub: %%rbp used for a buffer",
	     0x55, 0x48, 0x83, 0xec, 0x40, 0x48, 0x89, 0xe5);
	TEST(-1, "a leaf without a frame", 0x8d, 0x04, 0x37, 0xc3);
	TEST(-1, "too few bytes to tell", 0x90);
	{
		/* the window: a prologue past X86_FP_WINDOW bytes is not looked for */
		uint8_t b[X86_FP_WINDOW + 8];

		memset(b, 0x90, sizeof(b));
		memcpy(b + X86_FP_WINDOW, (uint8_t[]){ 0x55, 0x48, 0x89, 0xe5 }, 4);
		is_int(x86__fp_prologue(b, sizeof(b)), -1, "nothing within the window");
		memcpy(b + X86_FP_WINDOW - 6, (uint8_t[]){ 0x55, 0x48, 0x89, 0xe5 }, 4);
		is_int(x86__fp_prologue(b, sizeof(b)), 1, "the same just inside it");
		is_int(x86__fp_prologue(b, X86_FP_WINDOW - 3), -1,
		       "never past n (the module's end): the mov cut off there is not seen");
	}
	return done_testing();
}
