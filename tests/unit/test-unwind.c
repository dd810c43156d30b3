/*
 * util/unwind: the CFI reader on real ELF files (this test's own binary,
 * and its bytes damaged), and the walk of a sample's stack copy on stacks
 * built here with known rules.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "tap.h"
#include "util/unwind/cfi.h"
#include "util/unwind/elf-cfi.h"
#include "util/unwind/walk.h"

/* --- the walk -------------------------------------------------------------- */

#define RULE_SP(off)	(CFI_SP | (uint64_t)(off) << 3)
#define RULE_SP_BP(off, bp)	(CFI_SP | (uint64_t)(off) << 3 | (uint64_t)(bp) << CFI_BP_SHIFT)

/* code addresses of the fake program and their rules */
struct fake_code {
	uint64_t pc;
	uint64_t rule;
};

static const struct fake_code *code;
static unsigned int n_code;

static uint64_t fake_rule(void *ctx, uint64_t pc)
{
	for (unsigned int i = 0; i < n_code; i++)
		if (code[i].pc == pc)
			return code[i].rule;
	return CFI_OTHER;
}

static void test_walk(void)
{
	/*
	 * A stack at 0x1000: leaf (no frame: CFA = sp + 8) called from
	 * caller (frame pointer: CFA = bp + 16), called from main (CFA =
	 * sp + 24, %rbp saved at CFA - 16), called from _start (the end).
	 */
	uint64_t st[16] = { 0 };
	const struct fake_code c[] = {
		{ 0x401000, RULE_SP(8) },		/* the sampled ip, in leaf */
		{ 0x402000 - 1, CFI_RULE_FP },		/* the call in caller */
		{ 0x403000 - 1, RULE_SP_BP(24, 2) },	/* the call in main */
		{ 0x404000 - 1, CFI_END },		/* the call in _start */
	};
	uint64_t out[16];
	struct unwind_sample s = { .ip = 0x401000, .sp = 0x1000, .bp = 0x1010 };
	bool whole;
	unsigned int n;

	code = c;
	n_code = 4;
	st[0] = 0x402000;	/* leaf's return address, at sp */
	st[2] = 0x1028;		/* caller's frame at 0x1010: saved %rbp, then */
	st[3] = 0x403000;	/* its return address */
	/* main's frame: CFA = 0x1020 + 24 = 0x1038; %rbp at CFA - 16, ra at CFA - 8 */
	st[5] = 0x1234;
	st[6] = 0x404000;
	s.stack = (const unsigned char *)st;
	s.stack_len = sizeof(st);
	n = unwind__sample(&s, fake_rule, NULL, out, 16, &whole);
	is_int(n, 4, "walk: four frames");
	ok(n == 4 && out[0] == 0x401000 && out[1] == 0x402000 - 1 && out[2] == 0x403000 - 1 &&
	   out[3] == 0x404000 - 1, "walk: the leaf's caller is there, the calls are - 1");
	ok(whole, "walk: down to the frame the CFI ends");

	/* the copy ends inside caller's frame: the kernel's chain goes on */
	{
		const uint64_t chain[] = { 0x401000, 0x403000 - 1, 0x404000 - 1, 0x405000 - 1 };
		const struct fake_code c2[] = {
			{ 0x401000, RULE_SP(8) },
			{ 0x402000 - 1, CFI_RULE_FP },
			{ 0x405000 - 1, CFI_END },
		};

		code = c2;
		n_code = 3;
		s.stack_len = 16;	/* leaf's return address only */
		s.chain = chain;
		s.chain_len = 4;
		n = unwind__sample(&s, fake_rule, NULL, out, 16, &whole);
		/* caller's step needs 0x1018: not in the copy; the chain has no
		 * 0x402000 - 1 (a leaf's caller the kernel missed): cut */
		is_int(n, 2, "splice: no common return address, the walk stops");
		ok(!whole, "splice: not whole");
		s.stack_len = sizeof(st);
		st[3] = 0x403000;
		s.stack_len = 32;	/* caller's frame, not main's */
		n = unwind__sample(&s, fake_rule, NULL, out, 16, &whole);
		ok(n == 5 && out[2] == 0x403000 - 1 && out[3] == 0x404000 - 1 &&
		   out[4] == 0x405000 - 1, "splice: the chain after the common return address");
		ok(whole, "splice: the chain's last frame ends by the CFI");
		s.chain = NULL;
		s.chain_len = 0;
	}

	/* an epilogue: %rbp popped, the CFI still names its slot below sp */
	{
		uint64_t e[4] = { 0x402000, 0, 0, 0 };
		const struct fake_code c3[] = {
			{ 0x401000, RULE_SP_BP(8, 3) },	/* slot at CFA - 24 = sp - 16 */
			{ 0x402000 - 1, CFI_END },
		};
		struct unwind_sample s3 = { .ip = 0x401000, .sp = 0x2000, .bp = 0x77,
					    .stack = (const unsigned char *)e, .stack_len = sizeof(e) };

		code = c3;
		n_code = 2;
		n = unwind__sample(&s3, fake_rule, NULL, out, 16, &whole);
		ok(n == 2 && whole, "epilogue: a popped %%rbp slot is not read");
	}

	/* garbage: a return address into the kernel, a frame going down */
	{
		uint64_t g[4] = { 0xffffffff81000000ULL, 0, 0, 0 };
		const struct fake_code c4[] = { { 0x401000, RULE_SP(8) } };
		struct unwind_sample s4 = { .ip = 0x401000, .sp = 0x3000, .bp = 0x10,
					    .stack = (const unsigned char *)g, .stack_len = sizeof(g) };

		code = c4;
		n_code = 1;
		n = unwind__sample(&s4, fake_rule, NULL, out, 16, &whole);
		ok(n == 1 && !whole, "a kernel address is no return address");
		g[0] = 0x402000;
		n = unwind__sample(&s4, fake_rule, NULL, out, 16, &whole);
		/* 0x402000 - 1 has no rule: a frame pointer, %rbp 0x10 below sp */
		ok(n == 2 && !whole, "a frame pointer below the stack pointer stops the walk");
		n = unwind__sample(&s4, fake_rule, NULL, out, 1, &whole);
		is_int(n, 1, "max frames honoured");
	}
}

/* --- the reader on ELF files ----------------------------------------------- */

int main(void);

__attribute__((noinline)) static int probe_function(int x)
{
	return x * 3 + 1;
}

/* a frame larger than 64 KiB, without a frame pointer: its CFA is
 * %rsp + some 300 KiB at the call */
static uintptr_t big_frame_ra;

__attribute__((noinline)) static int big_frame_callee(int x)
{
	big_frame_ra = (uintptr_t)__builtin_return_address(0);
	return x + 1;
}

__attribute__((noinline, optimize("omit-frame-pointer"))) static int big_frame(int x)
{
	volatile char buf[300 << 10];

	buf[x] = (char)x;
	return big_frame_callee(buf[x]) + buf[sizeof(buf) - 1 - x];
}

static void test_elf(void)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	struct cfi_module m;
	struct stat st;
	Elf *elf;
	uint64_t r;
	uintptr_t base = 0, f = (uintptr_t)probe_function;

	elf_version(EV_CURRENT);
	if (!ok(fd >= 0, "open our own executable"))
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	is_int(elf_cfi__load(elf, &m), 0, "elf_cfi__load on a gcc-built executable");
	{
		/* the load bias of a PIE: our address of main less its link address */
		GElf_Ehdr eh;

		if (gelf_getehdr(elf, &eh) && eh.e_type == ET_DYN) {
			Elf_Scn *scn = NULL;
			size_t strndx;

			elf_getshdrstrndx(elf, &strndx);
			while ((scn = elf_nextscn(elf, scn))) {
				GElf_Shdr sh;
				Elf_Data *d;

				if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
					continue;
				d = elf_getdata(scn, NULL);
				for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
					GElf_Sym sym;
					const char *name;

					if (!gelf_getsym(d, (int)i, &sym))
						continue;
					name = elf_strptr(elf, sh.sh_link, sym.st_name);
					if (name && !strcmp(name, "main"))
						base = (uintptr_t)main - sym.st_value;
				}
			}
		}
	}
	r = cfi__rule(&m, f - base);
	ok(cfi_rule_kind(r) == CFI_SP && cfi_rule_off(r) == 8,
	   "a function's first instruction: CFA = %%rsp + 8 (got kind %u off %llu)",
	   cfi_rule_kind(r), (unsigned long long)cfi_rule_off(r));
	is_int(cfi__fn_start(&m, f - base + 1), f - base, "the function's start from its table");
	is_int(probe_function(1), 4, "(the probe runs)");
	big_frame(1);
	r = cfi__rule(&m, big_frame_ra - 1 - base);
	ok(cfi_rule_kind(r) == CFI_SP && cfi_rule_off(r) > (300 << 10),
	   "a call in a frame of 300 KiB: CFA = %%rsp + %llu (kind %u)",
	   (unsigned long long)cfi_rule_off(r), cfi_rule_kind(r));
	for (unsigned int k = 0; k < 3; k++)
		if (m.plt[k].hi > m.plt[k].lo) {
			r = cfi__rule(&m, m.plt[k].lo);
			ok(r == (CFI_SP | 8u << 3), "a PLT stub: CFA = %%rsp + 8");
			break;
		}
	elf_end(elf);

	/* the same file damaged: every read stays in the file (ASan would say) */
	if (!fstat(fd, &st)) {
		unsigned char *copy = malloc(st.st_size);
		unsigned int seed = 12345, asked = 0;

		if (copy && pread(fd, copy, st.st_size, 0) == st.st_size) {
			for (int round = 0; round < 64; round++) {
				unsigned char *img = malloc(st.st_size);
				struct cfi_module dm;

				memcpy(img, copy, st.st_size);
				elf = elf_memory((char *)img, st.st_size);
				if (elf && !elf_cfi__load(elf, &dm)) {
					size_t span = (size_t)(dm.hi - dm.lo);

					/* the CFI's segment, in img: damaged */
					for (int k = 0; k < 300 && span; k++) {
						seed = seed * 1103515245 + 12345;
						((unsigned char *)dm.lo)[(seed >> 8) % span] ^=
							(unsigned char)(seed >> 24);
					}
					for (uintptr_t a = dm.text_lo; a < dm.text_hi;
					     a += 1 + (dm.text_hi - dm.text_lo) / 997) {
						cfi__rule(&dm, a);
						cfi__fn_start(&dm, a);
						asked++;
					}
				}
				if (elf)
					elf_end(elf);
				free(img);
			}
		}
		ok(asked > 0, "damaged CFI: %u rules asked, no read outside the file", asked);
		free(copy);
	}
	close(fd);
}

int main(void)
{
	test_walk();
	test_elf();
	return done_testing();
}
