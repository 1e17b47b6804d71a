# runtime.mk - libmemprof.a, the heap profiler runtime (src/runtime/), and
# its public header include/memprof/memprof.h.  Included by the top
# Makefile, whose CC, BUILD, CFLAGS, WARN, PREFIX and DESTDIR it uses.
#
#   make $(BUILD)/libmemprof.a   build the library
#   make $(BUILD)/libmemprof_preload.so  the same as a shared library, for
#                                LD_PRELOAD into programs not relinked (as
#                                heaptrack's libheaptrack_preload.so)
#   make $(BUILD)/libmemprof.so  a GNU ld script: -lmemprof links the
#                                archive with malloc & co. forced in, so a
#                                program that never calls malloc itself (all
#                                its allocation in shared libraries) still
#                                gets ours
#   make runtime-check           build it and run tests/runtime/run.sh
#   make runtime-install         install lib, header and man page
#
# The runtime is the program's malloc, so it is built with what that needs:
# no sanitizer (whose runtime would replace this malloc), frame pointers and
# no sibling calls (each entry point's frame starts the recorded stack), no
# malloc/calloc builtins (the compiler must not turn code inside calloc into
# a call to calloc), local TLS, PIE code for PIE executables.  It includes
# only include/memprof/raw_format.h from the tool.

# Included before or after the top Makefile's first target, this file must
# not become the default goal.
RT_SAVED_GOAL := $(.DEFAULT_GOAL)

RT_SRC   := $(wildcard src/runtime/*.c)
RT_OBJ   := $(RT_SRC:src/runtime/%.c=$(BUILD)/runtime/%.o)
RT_LIB   := $(BUILD)/libmemprof.a
RT_SO    := $(BUILD)/libmemprof_preload.so
RT_LDS   := $(BUILD)/libmemprof.so
RT_PIC   := $(RT_SRC:src/runtime/%.c=$(BUILD)/runtime-pic/%.o)
# check-asan passes -fsanitize=... in CFLAGS: dropped here.
RT_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) \
	$(filter-out -fsanitize=% -fno-sanitize-recover% -fsanitize-%,$(CFLAGS)) -MMD -MP \
	-fno-omit-frame-pointer -fno-optimize-sibling-calls -fPIE \
	-ftls-model=initial-exec -fno-builtin-malloc -fno-builtin-calloc \
	-fno-builtin-realloc -fno-builtin-free -fno-builtin-strdup \
	-fno-builtin-strndup -Iinclude

.PHONY: runtime runtime-check runtime-install

runtime: $(RT_LIB) $(RT_SO) $(RT_LDS)

$(BUILD)/runtime/%.o: src/runtime/%.c
	@mkdir -p $(dir $@)
	$(CC) $(RT_CFLAGS) -c -o $@ $<

# The shared library: position-independent code (initial-exec TLS stays
# right: a library linked in or preloaded gets static TLS).
$(BUILD)/runtime-pic/%.o: src/runtime/%.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -fPIE,$(RT_CFLAGS)) -fPIC -DRT_SHARED -c -o $@ $<

$(RT_LIB): $(RT_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(RT_SO): $(RT_PIC)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libmemprof_preload.so -Wl,--build-id -o $@ $^ -pthread

# The archive alone is pulled in only if the executable calls malloc
# itself; EXTERN makes the linker take the allocator whatever the program
# calls (libc.so is such a script too).  Not strdup: EXTERN pulls its
# member in even when the program defines its own, which then clashes.
$(RT_LDS): src/runtime/runtime.mk
	@mkdir -p $(dir $@)
	printf '%s\n' '/* GNU ld script: -lmemprof links libmemprof.a with its allocator. */' \
		'EXTERN ( malloc free calloc realloc )' 'INPUT ( libmemprof.a )' >$@

# The tests read profiles back with the command, so it is built too.
runtime-check: $(RT_LIB) $(RT_SO) $(RT_LDS) $(BUILD)/memprof-data
	@tests/runtime/run.sh $(BUILD)

runtime-install: $(RT_LIB) $(RT_SO) $(RT_LDS)
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/memprof \
		$(DESTDIR)$(PREFIX)/share/man/man3
	install -m 644 $(RT_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(RT_SO) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 $(RT_LDS) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/memprof/memprof.h $(DESTDIR)$(PREFIX)/include/memprof/
	install -m 644 man/libmemprof.3 $(DESTDIR)$(PREFIX)/share/man/man3/

.DEFAULT_GOAL := $(RT_SAVED_GOAL)
