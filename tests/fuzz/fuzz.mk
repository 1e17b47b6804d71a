# tests/fuzz/fuzz.mk - fuzz targets, their regression drivers, the fault-
# injection shim and a valgrind run; included by the top Makefile after
# TOOL_BIN is defined (it appends to it, so `make check` and
# `make check-asan` build the regression drivers and the shim).
#
#   make check                 replays tests/fuzz/corpus/* and regress/* through every
#                              target (tests/cli/test_fuzz_regression.sh)
#   make fuzz FUZZ_SECONDS=N   fuzzes each target N seconds, one after the
#                              other (clang + libFuzzer + ASan + UBSan);
#                              corpus grows in tests/fuzz/out/<target>/,
#                              crashes land in tests/fuzz/out/artifacts/
#   make fuzz-minimize         merges tests/fuzz/out/<target>/ into the
#                              committed tests/fuzz/corpus/<target>/ (-merge=1);
#                              tests/fuzz/regress/<target>/ (named reproducers
#                              of fixed bugs) is replayed too, never minimized
#   make fuzz-seed             rebuilds the seed corpora from the fixtures
#   make fuzz-coverage         line/branch coverage of src/ by the corpora
#   make check-valgrind        tests/cli/test_show.sh and test_merge.sh with
#                              memprof-data under valgrind
#
# FUZZ_TARGETS=raw picks targets; FUZZ_FLAGS adds libFuzzer flags.

FUZZ_TARGETS ?= raw indexed roundtrip show
FUZZ_ALL     := raw indexed roundtrip show
FUZZ_CC      ?= clang-19
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   ?=
FUZZ_BUILD   := $(BUILD)/fuzz
FUZZ_OUT     := tests/fuzz/out
FUZZ_SAN     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
		-fno-sanitize-recover=all
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -Isrc -Iinclude $(WARN) $(FUZZ_SAN)
FUZZ_HDRS    := tests/fuzz/fuzz.h $(wildcard src/*/*.h)

# The regression drivers: each target linked with regression.c, built
# with $(CC) and $(CFLAGS) like every other test (so with ASan under
# check-asan).  Not named test_*: tests/run.sh would take them for Check
# suites; tests/cli/test_fuzz_regression.sh runs them.
FUZZ_REGRESS := $(FUZZ_ALL:%=$(BUILD)/tests/fuzz-regress-%)
FAULT_SO     := $(BUILD)/tests/libfault.so
TOOL_BIN     += $(FUZZ_REGRESS) $(FAULT_SO)

$(BUILD)/tests/fuzz-regress-%: tests/fuzz/regression.c tests/fuzz/fuzz_%.c \
		$(FUZZ_HDRS) $(LIBA)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(ALL_CFLAGS)) -DFUZZ_TARGET='"fuzz_$*"' \
		-o $@ tests/fuzz/regression.c tests/fuzz/fuzz_$*.c \
		$(LIBA) $(LIBS)

# The shim is never built with sanitizers: it is preloaded, ahead of any
# sanitizer runtime.
$(FAULT_SO): tests/fault/fault.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -fPIC -shared \
		-o $@ $< -ldl

# ---- libFuzzer builds ----

FUZZ_SRC := $(LIB_SRC)
FUZZ_OBJ := $(FUZZ_SRC:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_BIN := $(FUZZ_ALL:%=$(FUZZ_BUILD)/fuzz_%)

$(FUZZ_BUILD)/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_HDRS) $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(LIBS)

.PHONY: fuzz fuzz-build fuzz-minimize fuzz-seed fuzz-coverage check-valgrind

fuzz-build: $(FUZZ_BIN)

# One target after the other, each for FUZZ_SECONDS; each run's log is
# $(FUZZ_OUT)/<target>-<UTC time>.log, and its final libFuzzer stats are
# printed.  Stops at the first target that crashes, leaving the input in
# $(FUZZ_OUT)/artifacts/.
fuzz: fuzz-build
	@mkdir -p $(FUZZ_OUT)/artifacts
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_OUT)/$$t; \
		log=$(FUZZ_OUT)/$$t-$$(date -u +%Y%m%dT%H%M%SZ).log; \
		echo "fuzz_$$t: $(FUZZ_SECONDS) s, log $$log"; \
		ASAN_OPTIONS=detect_leaks=1 $(FUZZ_BUILD)/fuzz_$$t \
			-max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-timeout=10 -rss_limit_mb=2048 -max_len=16384 \
			-artifact_prefix=$(FUZZ_OUT)/artifacts/$$t- $(FUZZ_FLAGS) \
			$(FUZZ_OUT)/$$t tests/fuzz/corpus/$$t \
			$$(ls -d tests/fuzz/regress/$$t 2>/dev/null) \
			>$$log 2>&1 || { tail -n 40 $$log; exit 1; }; \
		grep -E '^#[0-9]+[[:space:]].*cov: ' $$log | tail -n 1; \
		grep -E '^Done|^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
			$$log; \
	done

# Keep only inputs that add coverage; the committed corpora stay small.
# Then replay the result with the regression driver: an input it fails
# (one that reaches a known bug, skipped while fuzzing, or a new bug) is
# moved to $(FUZZ_OUT)/rejected/<target>/ and named, for a human to look.
fuzz-minimize: fuzz-build $(FUZZ_REGRESS)
	@set -e; for t in $(FUZZ_TARGETS); do \
		rm -rf tests/fuzz/corpus/$$t.new; \
		mkdir -p tests/fuzz/corpus/$$t.new $(FUZZ_OUT)/$$t $(FUZZ_OUT)/rejected/$$t; \
		$(FUZZ_BUILD)/fuzz_$$t -merge=1 -max_len=16384 \
			tests/fuzz/corpus/$$t.new tests/fuzz/corpus/$$t \
			$(FUZZ_OUT)/$$t $$(ls -d tests/fuzz/regress/$$t 2>/dev/null) \
			2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new files' || true; \
		rm -rf tests/fuzz/corpus/$$t; \
		mv tests/fuzz/corpus/$$t.new tests/fuzz/corpus/$$t; \
		while bad=$$($(BUILD)/tests/fuzz-regress-$$t tests/fuzz/corpus/$$t 2>&1 >/dev/null | \
				grep -m 1 -oE "tests/fuzz/corpus/$$t/[0-9a-f]+"); do \
			echo "$$bad fails the regression driver: moved to $(FUZZ_OUT)/rejected/$$t/"; \
			mv "$$bad" $(FUZZ_OUT)/rejected/$$t/; \
		done; \
		echo "corpus/$$t: $$(ls tests/fuzz/corpus/$$t | wc -l) files, $$(cat tests/fuzz/corpus/$$t/* | wc -c) bytes"; \
	done

fuzz-seed: $(BIN)
	tests/fuzz/seed.sh $(BUILD) $(FUZZ_OUT)/seed

# Line and branch coverage of src/ by the committed corpora: the
# regression drivers built with clang's source-based coverage.
FUZZ_COV      := $(BUILD)/fuzz-cov
FUZZ_COV_OBJ  := $(FUZZ_SRC:%.c=$(FUZZ_COV)/%.o)
FUZZ_COV_CFLAGS := -std=c11 -D_GNU_SOURCE -O0 -g -fprofile-instr-generate \
		   -fcoverage-mapping
FUZZ_COV_REPORT := src/raw/raw.c src/indexed/idx.c src/hashtable/ht.c \
		   src/common/mp_file.c src/common/mp_mib.c src/cli/view.c \
		   src/cli/report.c src/cli/emit.c

$(FUZZ_COV)/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_COV_CFLAGS) -c -o $@ $<

$(FUZZ_COV)/regress-%: tests/fuzz/regression.c tests/fuzz/fuzz_%.c \
		$(FUZZ_HDRS) $(FUZZ_COV_OBJ)
	$(FUZZ_CC) $(FUZZ_COV_CFLAGS) -DFUZZ_TARGET='"fuzz_$*"' -o $@ \
		tests/fuzz/regression.c tests/fuzz/fuzz_$*.c $(FUZZ_COV_OBJ) $(LIBS)

# Objects of the pattern rules above are not intermediates to delete.
.SECONDARY: $(FUZZ_OBJ) $(FUZZ_COV_OBJ)

fuzz-coverage: $(FUZZ_ALL:%=$(FUZZ_COV)/regress-%)
	@rm -f $(FUZZ_COV)/*.cov
	@for t in $(FUZZ_ALL); do \
		LLVM_PROFILE_FILE=$(FUZZ_COV)/$$t.cov $(FUZZ_COV)/regress-$$t \
			tests/fuzz/corpus/$$t $$(ls -d tests/fuzz/regress/$$t 2>/dev/null) \
			>/dev/null || exit 1; \
	done
	@$(FUZZ_CC:clang%=llvm-profdata%) merge -o $(FUZZ_COV)/corpus.profdata \
		$(FUZZ_COV)/*.cov
	@$(FUZZ_CC:clang%=llvm-cov%) report $(FUZZ_COV)/regress-show \
		$(foreach t,raw indexed roundtrip,-object $(FUZZ_COV)/regress-$(t)) \
		-instr-profile=$(FUZZ_COV)/corpus.profdata $(FUZZ_COV_REPORT)

# ---- valgrind ----

# test_show.sh and test_merge.sh run $BUILD/memprof-data; point them at a
# directory whose memprof-data runs the real one under valgrind.  A
# valgrind error exits 99 (a failed test) and leaves its log.
VG_DIR := $(BUILD)/valgrind
check-valgrind: all
	@mkdir -p $(VG_DIR)/logs
	@rm -f $(VG_DIR)/logs/*
	@printf '%s\n' '#!/bin/sh' \
		'exec valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --track-origins=yes \
		--log-file=$(abspath $(VG_DIR))/logs/%p.log \
		$(abspath $(BIN)) "$$@"' >$(VG_DIR)/memprof-data
	@chmod +x $(VG_DIR)/memprof-data
	@fail=0; for t in tests/cli/test_show.sh tests/cli/test_merge.sh; do \
		echo "# $$t under valgrind"; \
		MEMPROF_DATA=$(VG_DIR)/memprof-data FIXTURES=tests/fixtures \
			sh $$t $(VG_DIR) >$(VG_DIR)/out 2>&1; \
		cat $(VG_DIR)/out; \
		grep -q '^not ok - ' $(VG_DIR)/out && fail=1; \
	done; \
	logs=$$(find $(VG_DIR)/logs -name '*.log' -size +0 | sort); \
	n=$$(ls $(VG_DIR)/logs | wc -l); \
	if [ -n "$$logs" ]; then \
		echo "check-valgrind: valgrind reported errors in $$(echo $$logs | wc -w) of $$n runs:"; \
		for l in $$logs; do echo "== $$l"; head -n 40 $$l; done; fail=1; \
	else \
		echo "check-valgrind: $$n memprof-data runs, no valgrind error"; \
	fi; \
	exit $$fail
