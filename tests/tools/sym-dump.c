/*
 * sym-dump - print what the symbolizer says, for tests/cli/test_sym_oracle.sh.
 *
 *	sym-dump [-d DIR] [-D] BIN [ADDR...]
 *		Frames of ELF addresses (hex; from stdin, one a line, when
 *		none are given) of BIN, one line per frame,
 *		innermost first:
 *		ADDR <tab> FUNCTION <tab> FILE <tab> LINE <tab> COLUMN <tab> DISC
 *		<tab> START-LINE
 *		with "??" for an unknown function or file and 0 for unknown
 *		numbers (llvm-symbolizer's conventions).
 *	sym-dump -p PROFILE [-d DIR] [-D] BIN...
 *		Map every PC of the raw profile to its module; print the
 *		distinct "MODULE-PATH <tab> ADDR" pairs and, on stderr, the
 *		counts of PCs mapped and not.
 *	sym-dump -l STEP BIN
 *		List every STEP-th address of BIN's executable PT_LOADs, in
 *		hex, one a line (input for the above and for llvm-symbolizer).
 *	sym-dump -s STEP [-d DIR] [-D] BIN
 *		Timing: look up every STEP-th address of BIN's executable
 *		PT_LOADs that lies in a DWARF subprogram, and print how many
 *		distinct addresses took how long.
 *
 * -d adds a debug directory; -D drops the default /usr/lib/debug.
 * Warnings go to stderr prefixed "warning: ".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <gelf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "raw/raw.h"
#include "symbolize/sym.h"

static void print_warning(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "warning: %s\n", msg);
}

static void die(const char *what, const struct mp_err *err)
{
	fprintf(stderr, "sym-dump: %s: %s\n", what, mp_errmsg(err));
	exit(2);
}

static void print_frames(uint64_t addr, const struct sym_frames *fr)
{
	if (fr->n == 0) {
		printf("0x%" PRIx64 "\t??\t??\t0\t0\t0\t0\n", addr);
		return;
	}
	for (uint32_t i = 0; i < fr->n; i++) {
		const struct sym_frame *f = &fr->f[i];

		printf("0x%" PRIx64 "\t%s\t%s\t%u\t%u\t%u\t%u\n", addr,
		       f->function ? f->function : "??",
		       f->file ? f->file : "??", f->line, f->column,
		       f->discriminator, f->start_line);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int dump_profile(struct sym_ctx *sym, const char *path)
{
	struct raw_file rf;
	struct mp_err err = { 0 };
	struct sym_addr a;
	uint64_t *keys = NULL;
	size_t nkeys = 0, akeys = 0;

	raw_file_init(&rf);
	if (raw_load(&rf, path, &err))
		die(path, &err);
	for (size_t p = 0; p < rf.nprofiles; p++)
		if (sym_check_profile(sym, &rf.profiles[p], &err))
			die(path, &err);
	for (size_t i = 0; i < rf.ncontexts; i++) {
		const struct raw_context *c = &rf.contexts[i];

		for (uint32_t k = 0; k < c->npcs; k++) {
			if (sym_map_pc(sym, &rf.profiles[c->profile], c->pcs[k],
				       &a, &err))
				die(path, &err);
			if (a.module < 0)
				continue;
			if (!MP_GROW(keys, akeys, nkeys + 2))
				return 1;
			keys[nkeys++] = (uint64_t)a.module;
			keys[nkeys++] = a.addr;
		}
	}
	/* Sort (module, addr) pairs as 128-bit keys: sort pairs by hand. */
	for (size_t i = 0; i < nkeys; i += 2) {
		struct sym_module_info mi;

		if (!sym_module_info(sym, (int32_t)keys[i], &mi))
			continue;
		printf("%s\t0x%" PRIx64 "\n", mi.path, keys[i + 1]);
	}
	{
		struct sym_stats st;

		sym_get_stats(sym, &st);
		fprintf(stderr, "pcs %" PRIu64 " unmapped %" PRIu64
			" no_binary %" PRIu64 "\n",
			st.pcs, st.unmapped, st.no_binary);
	}
	free(keys);
	raw_file_release(&rf);
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int sweep(struct sym_ctx *sym, const char *bin, uint64_t step,
		 bool list)
{
	struct mp_err err = { 0 };
	struct sym_addr a = { .module = 0 };
	const struct sym_frames *fr;
	uint64_t *addrs = NULL, n = 0, dwarf = 0, frames = 0;
	size_t alloc = 0, phnum;
	double t0, t1;
	GElf_Phdr ph;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(bin, O_RDONLY);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &phnum))
		return 1;
	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		for (uint64_t v = ph.p_vaddr; v < ph.p_vaddr + ph.p_memsz;
		     v += step) {
			if (!MP_GROW(addrs, alloc, n + 1))
				return 1;
			addrs[n++] = v;
		}
	}
	elf_end(elf);
	close(fd);
	qsort(addrs, n, sizeof(*addrs), cmp_u64);
	if (list) {
		for (uint64_t i = 0; i < n; i++)
			printf("0x%" PRIx64 "\n", addrs[i]);
		free(addrs);
		return 0;
	}
	/* Shuffle so the cache and the CU index see no helpful order. */
	srand(1);
	for (uint64_t i = n; i > 1; i--) {
		uint64_t j = (uint64_t)rand() % i, t = addrs[i - 1];

		addrs[i - 1] = addrs[j];
		addrs[j] = t;
	}
	t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		a.addr = addrs[i];
		if (sym_lookup(sym, a.module, a.addr, &fr, &err))
			die(bin, &err);
		frames += fr->n;
		if (fr->n && fr->f[0].file)
			dwarf++;
	}
	t1 = now();
	printf("%" PRIu64 " distinct addresses (%" PRIu64 " with DWARF lines, %"
	       PRIu64 " frames) in %.3f s\n", n, dwarf, frames, t1 - t0);
	t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		a.addr = addrs[i];
		sym_lookup(sym, a.module, a.addr, &fr, &err);
	}
	printf("again, from the cache: %.3f s\n", now() - t0);
	{
		struct sym_stats st;

		sym_get_stats(sym, &st);
		printf("memory held for them: %" PRIu64 " bytes\n", st.memory);
	}
	free(addrs);
	return 0;
}

int main(int argc, char **argv)
{
	struct sym_options opt = { .warn = print_warning };
	struct mp_err err = { 0 };
	const char *profile = NULL;
	uint64_t step = 0;
	bool list = false;
	struct sym_ctx sym;
	int c, rc = 0;

	/* Parse options first: -D must be known before sym_init. */
	while ((c = getopt(argc, argv, "d:Dl:p:s:")) != -1) {
		if (c == 'D')
			opt.no_default_debug_dir = true;
		else if (c == 'p')
			profile = optarg;
		else if (c == 's' || c == 'l')
			step = strtoull(optarg, NULL, 0);
		else if (c != 'd')
			return 2;
		list = list || c == 'l';
	}
	sym_init(&sym, &opt);
	optind = 1;
	while ((c = getopt(argc, argv, "d:Dl:p:s:")) != -1)
		if (c == 'd' && sym_add_debug_dir(&sym, optarg, &err))
			die(optarg, &err);
	if (optind >= argc) {
		fprintf(stderr, "usage: sym-dump [-d DIR] [-D] BIN ADDR...\n"
				"       sym-dump -p PROFILE [-d DIR] [-D] BIN...\n"
				"       sym-dump -l STEP BIN\n"
				"       sym-dump -s STEP [-d DIR] [-D] BIN\n");
		return 2;
	}
	if (profile) {
		for (int i = optind; i < argc; i++)
			if (sym_add_binary(&sym, argv[i], &err))
				die(argv[i], &err);
		rc = dump_profile(&sym, profile);
	} else if (step) {
		if (sym_add_binary(&sym, argv[optind], &err))
			die(argv[optind], &err);
		rc = sweep(&sym, argv[optind], step, list);
	} else {
		if (sym_add_binary(&sym, argv[optind], &err))
			die(argv[optind], &err);
		char line[64];
		int i = optind + 1;

		/* Addresses from the arguments, or from stdin if none. */
		while (i < argc ? (snprintf(line, sizeof(line), "%s", argv[i++]), 1)
				: (optind + 1 == argc && fgets(line, sizeof(line), stdin))) {
			struct sym_addr a = { .module = 0 };
			const struct sym_frames *fr;

			a.addr = strtoull(line, NULL, 16);
			if (sym_lookup(&sym, a.module, a.addr, &fr, &err))
				die(line, &err);
			print_frames(a.addr, fr);
		}
	}
	sym_release(&sym);
	return rc;
}
