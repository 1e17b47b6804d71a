# memprof-data - build, test and install.
#
#   make            build build/memprof-data, build/libmemprof.a (the runtime)
#   make check      install missing packages, build, run every test
#   make check-asan the same under AddressSanitizer + UBSan
#   make check-tsan merge -j 8, show and diff under ThreadSanitizer
#   make unit       the Check unit suites only (no LLVM needed)
#   make check T=merge   only the tests whose file name contains "merge"
#   make demo       build and run the main job on the bundled sample data
#   make install PREFIX=/usr/local
#
# CFLAGS default to -O2 -g; CI (CI=true) adds -Werror.

.DEFAULT_GOAL := all

CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-missing-field-initializers
ifneq ($(CI),)
WARN    += -Werror
endif
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -Isrc -Iinclude $(WARN) $(CFLAGS) -MMD -MP
# libsupc++ (the static core of libstdc++, from g++) only for its
# demangler, the display of C++ names: linking it statically pulls the
# demangler's one object, where libstdc++.so would be mapped and relocated
# at every start (3-5 ms, a quarter of a `show --function`).  libmd for the
# MD5 of LLVM's function GUIDs.
LIBS    := -ldw -lelf -lzstd -lmd -lz -l:libsupc++.a -pthread -lm

CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)

LIB_DIRS := src/common src/raw src/indexed src/symbolize src/hashtable \
            src/llvm src/merge src/profile src/export
LIB_SRC  := $(wildcard $(addsuffix /*.c,$(LIB_DIRS)))
CLI_SRC  := $(wildcard src/cli/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tests/%)

LIBA := $(BUILD)/libmemprofdata.a
BIN  := $(BUILD)/memprof-data

# The fuzz targets' regression drivers and the fault-injection shim;
# appends to TOOL_BIN, so it comes after it, and names $(LIBA) as a
# prerequisite, expanded as the rule is read: so after LIBA too.
include tests/fuzz/fuzz.mk

# libmemprof.a, the runtime that writes raw profiles (src/runtime).
include src/runtime/runtime.mk

.PHONY: all deps deps-check check check-asan check-tsan unit demo install \
	clean

all: $(BIN) $(LIBA) $(RT_LIB) $(RT_SO) $(RT_LDS)

deps:
	@scripts/deps.sh build

deps-check:
	@scripts/deps.sh check

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(LIBA): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIBA)
	$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJ) $(LIBA) $(LIBS)

# Unit tests, tools and fuzz targets link the library only, never
# src/cli/: what they test must be reachable without the command line.
$(BUILD)/tests/test_%: tests/unit/test_%.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -o $@ $< $(LIBA) \
		$(LIBS) $(CHECK_LIBS)

$(BUILD)/tests/%: tests/tools/%.c $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBA) $(LIBS)

check: deps-check
	@$(MAKE) --no-print-directory all $(UNIT_BIN) $(TOOL_BIN)
	@tests/run.sh $(BUILD) $(T)

# The Check suites alone: no LLVM, no command-line scripts.
unit: deps
	@$(MAKE) --no-print-directory $(UNIT_BIN)
	@tests/run.sh --unit $(BUILD) $(T)

# The whole suite again under AddressSanitizer and UBSan, aborting on the
# first report.
ASAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all
check-asan: deps-check
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/asan CFLAGS="$(ASAN_FLAGS)" \
		all $(UNIT_BIN:$(BUILD)/%=$(BUILD)/asan/%) \
		$(TOOL_BIN:$(BUILD)/%=$(BUILD)/asan/%)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 CK_FORK=no \
		tests/run.sh $(BUILD)/asan $(T)

# ThreadSanitizer over what runs threads or may race: merge -j 8 of raw
# and indexed inputs, show, diff (tests/cli/test_tsan.sh).
TSAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
check-tsan: deps-check
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/tsan CFLAGS="$(TSAN_FLAGS)" \
		$(BUILD)/tsan/memprof-data
	@TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
		tests/run.sh --only-cli $(BUILD)/tsan test_tsan

demo: deps
	@$(MAKE) --no-print-directory all
	@tests/demo.sh $(BUILD)

install: all runtime-install
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(wildcard man/*.1) $(DESTDIR)$(PREFIX)/share/man/man1/
	$(if $(wildcard man/*.5),install -m 644 $(wildcard man/*.5) $(DESTDIR)$(PREFIX)/share/man/man5/)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' -type f 2>/dev/null)
