/*
 * rt_dump.c - write a raw MemProf profile, version 4, as clang 19's
 * compiler-rt does (memprof_rawprofile.cpp), and the public API around it.
 *
 *	header   48 bytes: magic, version 4, total size, and the offsets of
 *	         the three sections from the header's first byte
 *	segments u64 count, 64 bytes per executable PT_LOAD of every module
 *	         (dl_iterate_phdr order: the executable first): start, end,
 *	         load bias, build id size, build id padded to 32 bytes
 *	MIBs     u64 count, per context: u64 stack id, 144-byte MIB, and
 *	         AccessHistogramSize u64 histogram entries
 *	stacks   u64 count, per context: u64 id, u64 n, n PCs (return
 *	         address - 1), leaf first
 * All little-endian and packed; every section is a multiple of 8 bytes
 * already, so the round-ups compiler-rt applies add nothing.
 */
#include "rt.h"
#include "memprof/memprof.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char __memprof_profile_filename[] __attribute__((weak));

static rt_lock dump_lock;
static int done_final;
static char prefix[4096];		/* memprof_set_output(); "" = unset */
static char last_path[4200];		/* the file earlier dumps wrote */
static int have_last;

void memprof_rt_dump_lock(void)
{
	memprof_rt_lock(&dump_lock);
}

void memprof_rt_dump_unlock(void)
{
	memprof_rt_unlock(&dump_lock);
}

void memprof_rt_dump_child(void)
{
	atomic_init(&dump_lock.v, 0);
	have_last = 0;		/* the child writes its own file, <pid> differs */
	/* Forked after the parent's final dump (from an exit handler): the
	 * child is a process of its own and profiles until its own exit. */
	if (done_final) {
		done_final = 0;
		atomic_store(&memprof_rt_profiling, 1);
	}
}

/* ------------------------------------------------------------ segments */

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* The GNU build id of a loaded module, from its PT_NOTE segments. */
static size_t build_id(const struct dl_phdr_info *info, uint8_t out[RAW_BUILD_ID_MAX])
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;
		size_t al = ph->p_align == 8 ? 8 : 4;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			ElfW(Nhdr) n;
			size_t desc, next;

			memcpy(&n, p, sizeof(n));
			desc = align_up(sizeof(n) + n.n_namesz, al);
			next = align_up(desc + n.n_descsz, al);
			if (desc + n.n_descsz > (size_t)(end - p))
				break;
			if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 &&
			    memcmp(p + sizeof(n), "GNU", 4) == 0) {
				size_t len = n.n_descsz < RAW_BUILD_ID_MAX ?
					     n.n_descsz : RAW_BUILD_ID_MAX;

				memcpy(out, p + desc, len);
				return len;
			}
			if (next > (size_t)(end - p))
				break;
			p += next;
		}
	}
	return 0;
}

struct seg_walk {
	struct rt_buf *buf;
	uint64_t count;
	int first;
};

static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct seg_walk *w = arg;
	uint8_t bid[RAW_BUILD_ID_MAX] = {0};
	size_t bid_len;
	int first = w->first;

	(void)size;
	w->first = 0;
	/* As compiler-rt: the executable, then every module with a name. */
	if (!first && (!info->dlpi_name || !info->dlpi_name[0]))
		return 0;
	bid_len = build_id(info, bid);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint8_t *e;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		e = memprof_rt_buf_add(w->buf, RAW_SEGMENT_SIZE_V3);
		if (!e)
			return 1;
		memprof_rt_put_le(e, info->dlpi_addr + ph->p_vaddr, 8);
		memprof_rt_put_le(e + 8, info->dlpi_addr + ph->p_vaddr + ph->p_memsz, 8);
		memprof_rt_put_le(e + 16, info->dlpi_addr, 8);
		memprof_rt_put_le(e + 24, bid_len, 8);
		memcpy(e + 32, bid, RAW_BUILD_ID_MAX);
		w->count++;
	}
	return 0;
}

/* ------------------------------------------------------------ sections */

struct live_walk {
	uint32_t now, cpu;
	uint64_t objects;
};

static void add_live(struct rt_hdr *h, uintptr_t user, void *arg)
{
	struct live_walk *w = arg;

	memprof_rt_record(h, user, w->now, w->cpu);
	w->objects++;
}

/* C's sample entries into the block SMP (C's lock held). */
static void put_samples(struct rt_buf *smp, uint32_t id, const struct rt_ctx *c,
			uint64_t *count)
{
	for (uint32_t i = 0; i < c->nsamp; i++) {
		const struct rt_samp *e = &c->samp[i];
		uint8_t *p = memprof_rt_buf_add(smp, 32 + 16 * RAW_SAMPLE_NFIELDS);

		if (!p)
			return;
		memprof_rt_put_le(p, id, 8);
		memprof_rt_put_le(p + 8, e->interval, 8);
		memprof_rt_put_le(p + 16, e->n, 8);
		memprof_rt_put_le(p + 24, e->u, 8);
		p += 32;
		for (unsigned k = 0; k < RAW_SAMPLE_NFIELDS; k++) {
			uint64_t b[2];

			memcpy(&b[0], &e->est[k], 8);
			memcpy(&b[1], &e->var[k], 8);
			memprof_rt_put_le(p + 8 * k, b[0], 8);
			memprof_rt_put_le(p + 8 * (RAW_SAMPLE_NFIELDS + k), b[1], 8);
		}
		(*count)++;
	}
}

/* Move every recorded MIB into MIB (the section minus its count), emptying
 * the table; the ids taken go to IDS (u32 each), sample entries to SMP.
 * Returns the count. */
static uint64_t take_mibs(struct rt_buf *mib, struct rt_buf *ids,
			  struct rt_buf *smp, uint64_t *nsmp)
{
	uint32_t n = memprof_rt_ctx_count();
	uint64_t count = 0, rng = memprof_rt_sample_dump_seed();

	for (uint32_t id = 1; id <= n; id++) {
		struct rt_ctx *c = memprof_rt_ctx(id);
		uint8_t *p;
		uint32_t nh;

		if (!c || !c->mib.AllocCount)
			continue;
		memprof_rt_lock(&c->lock);
		nh = c->mib.AccessHistogramSize;
		p = memprof_rt_buf_add(mib, 8 + RAW_MIB_SIZE_V4 +
					       (size_t)nh * RAW_HIST_ENTRY_SIZE_V4);
		if (p && c->mib.AllocCount) {
			memprof_rt_put_le(p, id, 8);
			if (c->nsamp) {
				struct rt_mib est = c->mib;

				memprof_rt_sample_apply(&est, c, &rng);
				memprof_rt_mib_pack(p + 8, &est);
				put_samples(smp, id, c, nsmp);
			} else {
				memprof_rt_mib_pack(p + 8, &c->mib);
			}
			p += 8 + RAW_MIB_SIZE_V4;
			for (uint32_t i = 0; i < nh; i++)
				memprof_rt_put_le(p + 8 * i, c->hist[i], 8);
			uint32_t *slot = memprof_rt_buf_add(ids, sizeof(*slot));

			if (slot)
				*slot = id;
			count++;
		} else if (p) {
			mib->len -= 8 + RAW_MIB_SIZE_V4 + (size_t)nh * RAW_HIST_ENTRY_SIZE_V4;
		}
		if (nh)
			memset(c->hist, 0, (size_t)nh * sizeof(*c->hist));
		c->mib.AllocCount = 0;
		c->mib.AccessHistogramSize = 0;
		c->nsamp = 0;
		memprof_rt_unlock(&c->lock);
	}
	return count;
}

static void put_stacks(struct rt_buf *stk, const struct rt_buf *ids)
{
	const uint32_t *id = (const uint32_t *)ids->p;
	size_t n = ids->len / sizeof(*id);

	memprof_rt_buf_put64(stk, n);
	for (size_t i = 0; i < n; i++) {
		const struct rt_ctx *c = memprof_rt_ctx(id[i]);

		memprof_rt_buf_put64(stk, id[i]);
		memprof_rt_buf_put64(stk, c->depth);
		for (uint32_t k = 0; k < c->depth; k++)
			memprof_rt_buf_put64(stk, c->pc[k]);
	}
}

/* The sample block (raw_format.h) around the N entries in SMP. */
static void put_sample_block(struct rt_buf *b, uint64_t r,
			     const struct rt_buf *smp, uint64_t n)
{
	uint8_t *p;

	memprof_rt_buf_put64(b, RAW_SAMPLE_MAGIC);
	memprof_rt_buf_put64(b, 40 + 8 * RAW_SAMPLE_NFIELDS + smp->len);
	memprof_rt_buf_put64(b, r);
	memprof_rt_buf_put64(b, RAW_SAMPLE_NFIELDS);
	for (unsigned k = 0; k < RAW_SAMPLE_NFIELDS; k++)
		memprof_rt_buf_put64(b, memprof_rt_sample_tag(k));
	memprof_rt_buf_put64(b, n);
	p = smp->len ? memprof_rt_buf_add(b, smp->len) : NULL;
	if (p)
		memcpy(p, smp->p, smp->len);
}

/* ------------------------------------------------------------ files */

static const char *current_prefix(void)
{
	if (prefix[0])
		return prefix;
	if (memprof_rt_opts.log_path[0])
		return memprof_rt_opts.log_path;
	if (__memprof_profile_filename && __memprof_profile_filename[0])
		return __memprof_profile_filename;
	return "memprof.profraw";
}

static int is_stream(const char *p)
{
	return strcmp(p, "stdout") == 0 || strcmp(p, "stderr") == 0;
}

/* PREFIX.<pid> (or the stream name) into BUF; snprintf-style length. */
static size_t make_path(char *buf, size_t size)
{
	const char *pre = current_prefix();
	char digits[24];
	size_t n = 0, len = strlen(pre), d = 0;
	unsigned long pid = (unsigned long)getpid();

	if (!is_stream(pre)) {
		do {
			digits[d++] = (char)('0' + pid % 10);
			pid /= 10;
		} while (pid);
	}
	n = len + (d ? 1 + d : 0);
	if (n < size) {
		memcpy(buf, pre, len);
		if (d) {
			buf[len] = '.';
			for (size_t i = 0; i < d; i++)
				buf[len + 1 + i] = digits[d - 1 - i];
		}
		buf[n] = '\0';
	} else if (size) {
		buf[0] = '\0';
	}
	return n;
}

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Append the file at PATH (earlier profiles of this process) to FD. */
/*
 * The mode compiler-rt's profiles get: 0660 less the umask (0640 under the
 * usual 022).  The umask is read from /proc/self/status: umask() would
 * change it, under the program's other threads.  Unknown: 0600.
 */
static mode_t profile_mode(void)
{
	char buf[2048];
	const char *p;
	ssize_t n;
	mode_t mask = 0;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0600;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0600;
	buf[n] = '\0';
	if (!(p = strstr(buf, "\nUmask:\t")))
		return 0600;
	for (p += 8; *p >= '0' && *p <= '7'; p++)
		mask = (mode_t)(mask << 3 | (mode_t)(*p - '0'));
	return 0660 & ~mask;
}

static int copy_from(int fd, const char *path)
{
	uint8_t buf[16384];
	int in = open(path, O_RDONLY | O_CLOEXEC);
	int ret = 0;

	if (in < 0)
		return errno == ENOENT ? 0 : -1;
	for (;;) {
		ssize_t r = read(in, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (r > 0 && write_all(fd, buf, (size_t)r) < 0)) {
			ret = -1;
			break;
		}
		if (r == 0)
			break;
	}
	close(in);
	return ret;
}

/*
 * Create the directories of PATH that do not exist (0755 less the umask),
 * as compiler-rt does for its log_path: a profile asked for under a
 * directory nobody made is written, not lost.  A failure is left to the
 * open that follows, which says why.
 */
static void make_dirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*p = '/';
			return;
		}
		*p = '/';
	}
}

static int write_profile(const char *path, const struct rt_buf *parts, int nparts)
{
	char tmp[sizeof(last_path) + 16];
	int fd, err;
	size_t len = strlen(path);

	if (is_stream(path)) {
		fd = path[3] == 'o' ? 1 : 2;
		for (int i = 0; i < nparts; i++)
			if (write_all(fd, parts[i].p, parts[i].len) < 0)
				return -1;
		return 0;
	}
	if (len + sizeof(".tmp.XXXXXX") > sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/*
	 * An unpredictable name created with O_EXCL (mkostemp), so that a
	 * link planted at a predictable LOG.PID.tmp cannot redirect our
	 * write to another file: O_EXCL fails on any existing name, link or
	 * not.  The profile is private to its user (0600) until it is
	 * whole, then gets compiler-rt's mode.
	 */
	memcpy(tmp, path, len);
	memcpy(tmp + len, ".tmp.XXXXXX", sizeof(".tmp.XXXXXX"));
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		make_dirs(tmp);
		memcpy(tmp + len, ".tmp.XXXXXX", sizeof(".tmp.XXXXXX"));
		fd = mkostemp(tmp, O_CLOEXEC);
	}
	if (fd < 0)
		return -1;
	if (have_last && strcmp(last_path, path) == 0 && copy_from(fd, path) < 0)
		goto fail;
	for (int i = 0; i < nparts; i++)
		if (write_all(fd, parts[i].p, parts[i].len) < 0)
			goto fail;
	if (fchmod(fd, profile_mode()) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		fd = -1;
		goto fail;
	}
	memcpy(last_path, path, len + 1);
	have_last = 1;
	return 0;
fail:
	err = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = err;
	return -1;
}

/* ------------------------------------------------------------ the dump */

int memprof_rt_dump(int final)
{
	struct rt_tls *t = &memprof_rt_tls;
	/* header, sample block, segments, MIBs, stacks */
	struct rt_buf part[5] = {{0}};
	struct rt_buf ids = {0}, smp = {0};
	struct seg_walk sw = {.buf = &part[2], .first = 1};
	struct live_walk lw;
	uint64_t nmib, nsmp = 0, total, r;
	uint8_t *hdr;
	char path[sizeof(last_path)];
	int ret = -1, err = 0;

	memprof_rt_init_late();	/* a dump from an early constructor */
	t->in_rt++;
	/*
	 * The segments first, outside the dump lock: dl_iterate_phdr takes the
	 * loader lock, and a library constructor run by dlopen (loader lock
	 * held) may itself call memprof_dump().
	 */
	memprof_rt_buf_put64(&part[2], 0);
	dl_iterate_phdr(add_module, &sw);
	if (part[2].p)
		memprof_rt_put_le(part[2].p, sw.count, 8);

	memprof_rt_dump_lock();
	if (done_final) {
		memprof_rt_dump_unlock();
		memprof_rt_buf_release(&part[2]);
		t->in_rt--;
		return 0;
	}
	if (final) {
		/* From now on nothing is recorded: this is the last word. */
		done_final = 1;
		atomic_store(&memprof_rt_profiling, 0);
	}

	lw.now = memprof_rt_now_ms();
	lw.cpu = memprof_rt_cpu();
	lw.objects = 0;
	memprof_rt_walk_live(add_live, &lw);

	memprof_rt_buf_put64(&part[3], 0);
	nmib = take_mibs(&part[3], &ids, &smp, &nsmp);
	if (part[3].p)
		memprof_rt_put_le(part[3].p, nmib, 8);
	put_stacks(&part[4], &ids);
	r = atomic_load_explicit(&memprof_rt_sample_interval, memory_order_relaxed);
	if (r || nsmp)
		put_sample_block(&part[1], r, &smp, nsmp);

	hdr = memprof_rt_buf_add(&part[0], RAW_HEADER_SIZE);
	for (int i = 0; i < 5; i++)
		if (part[i].failed || smp.failed)
			goto nomem;
	total = RAW_HEADER_SIZE;
	for (int i = 1; i < 5; i++)
		total += part[i].len;
	memprof_rt_put_le(hdr + RAW_HDR_MAGIC, RAW_MAGIC, 8);
	memprof_rt_put_le(hdr + RAW_HDR_VERSION, RAW_VERSION_WRITE, 8);
	memprof_rt_put_le(hdr + RAW_HDR_TOTAL_SIZE, total, 8);
	/* The offsets skip the sample block: compiler-rt's readers never
	 * see it. */
	memprof_rt_put_le(hdr + RAW_HDR_SEGMENT_OFFSET, RAW_HEADER_SIZE + part[1].len, 8);
	memprof_rt_put_le(hdr + RAW_HDR_MIB_OFFSET,
			  RAW_HEADER_SIZE + part[1].len + part[2].len, 8);
	memprof_rt_put_le(hdr + RAW_HDR_STACK_OFFSET,
			  RAW_HEADER_SIZE + part[1].len + part[2].len + part[3].len, 8);

	if (make_path(path, sizeof(path)) >= sizeof(path)) {
		err = ENAMETOOLONG;
		goto out;
	}
	if (write_profile(path, part, 5) < 0) {
		err = errno;
		goto out;
	}
	ret = 0;
	if (memprof_rt_opts.verbosity)
		memprof_rt_log("wrote '%s': %lu contexts, %lu live objects, %lu bytes",
			       path, (unsigned long)nmib,
			       (unsigned long)lw.objects, (unsigned long)total);
	goto out;
nomem:
	err = ENOMEM;
	make_path(path, sizeof(path));
out:
	if (ret < 0 && (final || memprof_rt_opts.verbosity))
		memprof_rt_log("cannot write profile '%s': %s", path,
			       strerrordesc_np(err));
	for (int i = 0; i < 5; i++)
		memprof_rt_buf_release(&part[i]);
	memprof_rt_buf_release(&ids);
	memprof_rt_buf_release(&smp);
	memprof_rt_dump_unlock();
	t->in_rt--;
	if (ret < 0)
		errno = err;
	return ret;
}

/* ------------------------------------------------------------ API */

int memprof_dump(void)
{
	return memprof_rt_dump(0);
}

int __memprof_profile_dump(void)
{
	memprof_rt_dump(0);
	return 0;
}

void __memprof_profile_reset(void)
{
	memprof_rt_dump_lock();
	have_last = 0;
	memprof_rt_dump_unlock();
}

void memprof_discard(void)
{
	uint32_t n = memprof_rt_ctx_count();

	for (uint32_t id = 1; id <= n; id++) {
		struct rt_ctx *c = memprof_rt_ctx(id);

		if (!c)
			continue;
		memprof_rt_lock(&c->lock);
		if (c->hist)
			memset(c->hist, 0, (size_t)c->mib.AccessHistogramSize * sizeof(*c->hist));
		c->nsamp = 0;
		c->mib.AllocCount = 0;
		c->mib.AccessHistogramSize = 0;
		memprof_rt_unlock(&c->lock);
	}
}

int memprof_set_output(const char *p)
{
	size_t len = p ? strlen(p) : 0;

	memprof_rt_init_late();	/* MEMPROF_OPTIONS read before it is overridden */

	if (len >= sizeof(prefix)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memprof_rt_dump_lock();
	if (p)
		memcpy(prefix, p, len + 1);
	else
		prefix[0] = '\0';
	have_last = 0;
	memprof_rt_dump_unlock();
	return 0;
}

size_t memprof_output_path(char *buf, size_t size)
{
	size_t n;

	memprof_rt_init_late();
	memprof_rt_dump_lock();
	n = make_path(buf, size);
	memprof_rt_dump_unlock();
	return n;
}

int memprof_set_sample_interval(size_t bytes)
{
	memprof_rt_init_late();	/* MEMPROF_OPTIONS read before it is overridden */
	if (bytes > RAW_SAMPLE_INTERVAL_MAX) {
		errno = EINVAL;
		return -1;
	}
	memprof_rt_sample_set(bytes);
	return 0;
}

size_t memprof_sample_interval(void)
{
	memprof_rt_init_late();
	return (size_t)atomic_load(&memprof_rt_sample_interval);
}

void memprof_set_dump_at_exit(int enable)
{
	memprof_rt_opts.dump_at_exit = enable != 0;
}
