# rsprof — one Makefile. Quiet by default, V=1 shows the commands.
# Everything generated lives under $(OUT).

OUT       ?= out
PREFIX    ?= /usr/local
DESTDIR   ?=
VERSION   := 0.1.0
CC        ?= gcc
CLANG     ?= clang
# bpftool is in /usr/sbin, which a user's PATH may not have.
BPFTOOL   ?= $(firstword $(shell command -v bpftool) /usr/sbin/bpftool)
LLVM_STRIP ?= llvm-strip
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
# rustc (for the Rust demo and test targets): the first found on PATH, else
# rustup's in ~/.cargo/bin (not on a non-login PATH), else Debian's, which
# `make deps` installs (the build group) before anything is compiled.
ifeq ($(origin RUSTC),undefined)
RUSTC     := $(firstword $(shell command -v rustc) $(wildcard $(HOME)/.cargo/bin/rustc) /usr/bin/rustc)
endif
export RUSTC

ifeq ($(V),1)
Q =
msg = @true
else
Q = @
msg = @printf '  %-8s %s\n' $(1) $(2)
endif

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	    -D_GNU_SOURCE -DRSPROF_VERSION='"$(VERSION)"' -I. -I$(OUT)
LDLIBS   += -lcapstone -lbpf -ldw -lelf -lsqlite3 -lpopt -lcap -lncursesw -ltinfo -liberty -lz -lpthread -lm

# SANITIZE=1: ASan and UBSan, UBSan fatal (a report fails the test).
# SANITIZE=fuzz: the same with clang and libFuzzer's instrumentation (make fuzz).
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ifeq ($(SANITIZE),1)
CFLAGS  += $(SAN_FLAGS)
LDFLAGS += $(SAN_FLAGS)
endif
ifeq ($(SANITIZE),fuzz)
CC      := $(CLANG)
CFLAGS  += $(SAN_FLAGS) -fsanitize=fuzzer-no-link
LDFLAGS += $(SAN_FLAGS)
endif

BUILTIN_SRC := $(sort $(wildcard builtin/*.c))
UTIL_SRC    := $(sort $(wildcard util/*.c util/*/*.c))
UTIL_OBJ    := $(UTIL_SRC:%.c=$(OUT)/%.o)
OBJ         := $(OUT)/rsprof.o $(BUILTIN_SRC:%.c=$(OUT)/%.o) $(UTIL_OBJ)
BPF_SRC     := $(sort $(wildcard bpf/*.bpf.c))
BPF_SKEL    := $(BPF_SRC:bpf/%.bpf.c=$(OUT)/%.skel.h)
DOC_SRC     := $(sort $(wildcard Documentation/rsprof*.txt))
# rsprof-files is the file format: section 5; every other page is section 1.
MAN5_SRC    := $(filter Documentation/rsprof-files.txt,$(DOC_SRC))
MAN1_SRC    := $(filter-out $(MAN5_SRC),$(DOC_SRC))
MAN1_PAGES  := $(MAN1_SRC:Documentation/%.txt=$(OUT)/man/%.1)
MAN5_PAGES  := $(MAN5_SRC:Documentation/%.txt=$(OUT)/man/%.5)
MAN_PAGES   := $(MAN1_PAGES) $(MAN5_PAGES)
UNIT_SRC    := $(sort $(wildcard tests/unit/test-*.c))
# The in-process heap tracker: its own artifact, embedded in rsprof.
PRELOAD_SRC := $(sort $(wildcard preload/*.c))
PRELOAD_SO  := $(OUT)/preload/librsprof-heap.so
PRELOAD_UBSAN_SO := $(OUT)/preload/ubsan/librsprof-heap.so
UNIT_BIN    := $(UNIT_SRC:tests/unit/%.c=$(OUT)/tests/unit/bin/%)
# Test helpers (tests/helper/*.c): tools the shell tests and benchmarks run
# (fixture profiles), each with its own main.
HELPER_SRC  := $(sort $(wildcard tests/helper/*.c))
HELPER_BIN  := $(HELPER_SRC:tests/helper/%.c=$(OUT)/tests/helper/%)
# Linked into both: fdatasync() and fsync() that do not wait for the disk.
NOSYNC_OBJ  := $(OUT)/tests/unit/nosync.o
FUZZ_SRC    := $(sort $(wildcard tests/fuzz/fuzz-*.c))
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(OUT)/tests/fuzz/%-replay)
FUZZ_BIN    := $(FUZZ_SRC:tests/fuzz/%.c=$(OUT)/tests/fuzz/%)
# make test also builds the unit tests, rsprof and the fuzz targets with the
# sanitizers here (unless this build is the sanitizer build already).
SAN_OUT     := $(if $(filter 1,$(SANITIZE)),$(OUT),$(OUT)-san)

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all deps bench-deps demo test test-unit targets bench man install clean san fuzz fuzz-run

all: $(OUT)/rsprof man

# Install the Debian packages of scripts/packages.txt that are missing.
deps:
	$(Q)./scripts/install-deps.sh build test

bench-deps:
	$(Q)./scripts/install-deps.sh build test bench

$(OUT)/rsprof: $(OBJ)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(OUT)/%.o: %.c $(wildcard util/*.h util/*/*.h) builtin.h | $(BPF_SKEL) $(OUT)/man-embed.h
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

-include $(OBJ:.o=.d)

# BPF: vmlinux.h from the running kernel's BTF, CO-RE object, skeleton.
$(OUT)/vmlinux.h: $(VMLINUX_BTF)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(OUT)
	$(Q)$(BPFTOOL) btf dump file $< format c > $@.tmp && mv $@.tmp $@

$(OUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(OUT)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(OUT) -Ibpf -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,GENSKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# The heap tracker preloaded into launched programs (preload/): PIC, -O2
# with link-time optimisation (its files are one hot path), frame pointers
# (it reads its caller's), hidden but for the interposed functions, libc
# only, bound at load (no lazy binding inside malloc); libunwind.so.8 is
# not linked but opened at run time when the target has it (its header
# only is needed here: libunwind-dev). Never sanitized: it
# replaces the allocator that ASan would. util/heap/preload-so.c embeds it.
PRELOAD_CFLAGS := -O2 -flto -fPIC -fvisibility=hidden -fno-omit-frame-pointer -fno-plt \
		  -std=gnu11 -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE -I.

$(PRELOAD_SO): $(PRELOAD_SRC) $(wildcard preload/*.h)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(PRELOAD_CFLAGS) -shared -Wl,-z,now -Wl,-z,defs -Wl,-soname,librsprof-heap.so \
		-o $@ $(PRELOAD_SRC)

# The same with UBSan (it cannot run under ASan, whose allocator it would
# replace): tests/t1524 runs its stress test with it (RSPROF_HEAP_TRACKER).
$(PRELOAD_UBSAN_SO): $(PRELOAD_SRC) $(wildcard preload/*.h)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(PRELOAD_CFLAGS) -fsanitize=undefined -fno-sanitize-recover=all -shared \
		-Wl,-z,now -o $@ $(PRELOAD_SRC)

$(OUT)/util/heap/preload-so.o: $(PRELOAD_SO)
$(OUT)/util/heap/preload-so.o: CFLAGS += -DRSPROF_PRELOAD_SO='"$(abspath $(PRELOAD_SO))"'

# Man pages: asciidoctor; the plain text is embedded for `rsprof help`
# on machines without man.
man: $(MAN_PAGES)

ASCIIDOCTOR_MAN = asciidoctor -b manpage -a mansource=rsprof -a mansource-version=$(VERSION) \
		-a manmanual='rsprof Manual'

$(OUT)/man/%.1: Documentation/%.txt
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(OUT)/man
	$(Q)$(ASCIIDOCTOR_MAN) -o $@ $<

$(OUT)/man/%.5: Documentation/%.txt
	$(call msg,MAN,$@)
	$(Q)mkdir -p $(OUT)/man
	$(Q)$(ASCIIDOCTOR_MAN) -o $@ $<

$(OUT)/man-embed.h: $(DOC_SRC) scripts/embed-docs.sh
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(OUT)
	$(Q)./scripts/embed-docs.sh $(DOC_SRC) > $@.tmp && mv $@.tmp $@

# Tests: unit binaries link the util objects; targets with known hot lines
# are built by tests/targets/Makefile into $(OUT)/targets.
$(OUT)/tests/unit/bin/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(UTIL_OBJ) $(NOSYNC_OBJ)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(NOSYNC_OBJ) $(UTIL_OBJ) $(LDLIBS)

$(OUT)/tests/helper/%: tests/helper/%.c $(wildcard tests/unit/*.h) $(UTIL_OBJ) $(NOSYNC_OBJ)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(NOSYNC_OBJ) $(UTIL_OBJ) $(LDLIBS)

targets:
	$(Q)$(MAKE) --no-print-directory -C tests/targets OUT=$(abspath $(OUT))/targets

test-unit: $(UNIT_BIN)
	$(Q)prove $(UNIT_BIN)

# Fuzz targets: tests/fuzz/fuzz-*.c. With tests/fuzz/replay.c as main() they
# replay a corpus once (make test); linked with libFuzzer they fuzz (make fuzz).
$(OUT)/tests/fuzz/%-replay: tests/fuzz/%.c tests/fuzz/replay.c $(UTIL_OBJ)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/replay.c $(UTIL_OBJ) $(LDLIBS)

$(OUT)/tests/fuzz/%: tests/fuzz/%.c $(UTIL_OBJ)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -fsanitize=fuzzer -o $@ $< $(UTIL_OBJ) $(LDLIBS)

# The sanitizer build that make test runs besides the normal one: its unit
# tests, and rsprof and the fuzz replays for tests/t7500 and t7600.
san:
	$(Q)$(MAKE) --no-print-directory OUT=$(SAN_OUT) SANITIZE=1 $(SAN_OUT)/rsprof \
		$(UNIT_SRC:tests/unit/%.c=$(SAN_OUT)/tests/unit/bin/%) \
		$(FUZZ_SRC:tests/fuzz/%.c=$(SAN_OUT)/tests/fuzz/%-replay)

# make test ends with one line: its wall time (the build included), the
# tests' own, and the load then.
ifneq ($(filter test,$(MAKECMDGOALS)),)
TEST_T0 := $(shell date +%s)
endif
test: deps all $(UNIT_BIN) $(HELPER_BIN) targets $(OUT)/demo $(PRELOAD_UBSAN_SO) san
	$(Q)t1=$$(date +%s); \
	RSPROF=$(abspath $(OUT))/rsprof TARGETS=$(abspath $(OUT))/targets \
		RSPROF_SAN=$(abspath $(SAN_OUT))/rsprof FUZZ_DIR=$(abspath $(SAN_OUT))/tests/fuzz \
		prove -j2 $(UNIT_BIN) \
		$(if $(filter 1,$(SANITIZE)),,$(UNIT_SRC:tests/unit/%.c=$(SAN_OUT)/tests/unit/bin/%)) \
		tests/t*.sh; \
	rc=$$?; t2=$$(date +%s); \
	printf 'make test: %dm %02ds, the tests %dm %02ds (prove -j2, %s CPUs, load %s)\n' \
		$$(((t2 - $(or $(TEST_T0),$$t1)) / 60)) $$(((t2 - $(or $(TEST_T0),$$t1)) % 60)) \
		$$(((t2 - t1) / 60)) $$(((t2 - t1) % 60)) "$$(nproc)" \
		"$$(cut -d' ' -f1-3 /proc/loadavg)"; \
	exit $$rc

# libFuzzer on every target for FUZZ_TIME seconds each, starting from the
# corpus in tests/fuzz/corpus/; new inputs and crashes go to $(OUT)-fuzz.
FUZZ_TIME ?= 60
fuzz:
	$(Q)./scripts/install-deps.sh build fuzz
	$(Q)$(MAKE) --no-print-directory OUT=$(OUT)-fuzz SANITIZE=fuzz fuzz-run

fuzz-run: $(FUZZ_BIN)
	$(Q)for f in $(FUZZ_BIN); do \
		n=$$(basename $$f); n=$${n#fuzz-}; \
		mkdir -p $(OUT)/corpus/$$n $(OUT)/crashes; \
		echo "  FUZZ     $$n ($(FUZZ_TIME) s)"; \
		$$f -max_total_time=$(FUZZ_TIME) -timeout=20 -rss_limit_mb=3072 \
			-artifact_prefix=$(OUT)/crashes/$$n- $(OUT)/corpus/$$n \
			tests/fuzz/corpus/$$n 2>$(OUT)/$$n.log || \
			{ tail -40 $(OUT)/$$n.log; exit 1; }; \
		grep -E "^(#[0-9]+ *DONE|Done)" $(OUT)/$$n.log | tail -1; \
	done

# The bundled demo: a small Rust service with one hot line and one line
# that keeps heap memory (demo/demo.rs).
$(OUT)/demo: demo/demo.rs
	$(call msg,RUSTC,$@)
	$(Q)mkdir -p $(OUT)
	$(Q)$(RUSTC) -g -O -C force-frame-pointers=yes --edition 2021 -o $@ $<

demo: deps all $(OUT)/demo
	$(Q)./scripts/demo.sh $(abspath $(OUT))

bench: bench-deps all targets $(UNIT_BIN) $(HELPER_BIN)
	$(Q)./bench/run.sh $(abspath $(OUT))

BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(OUT)/rsprof $(DESTDIR)$(PREFIX)/bin/rsprof
	install -m 644 $(MAN1_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/
	$(if $(MAN5_PAGES),install -m 644 $(MAN5_PAGES) $(DESTDIR)$(PREFIX)/share/man/man5/)
	install -m 644 contrib/completion/rsprof.bash $(DESTDIR)$(BASHCOMPDIR)/rsprof

clean:
	rm -rf $(OUT)
