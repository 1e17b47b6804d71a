#include "merge.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/mp_file.h"
#include "cli.h"

/* One decoded input, handed from a worker to the main thread. */
struct slot {
	struct mp_buf buf;
	struct raw_file rf;
	struct idx_file idx;
	bool indexed;
	bool ready;
	enum mp_errcode rc;
	struct mp_err err;
};

struct pipeline {
	const struct merge_input *in;
	struct slot *slots;
	size_t n;
	size_t next;		/* next input a worker takes */
	size_t consumed;	/* inputs the main thread is done with */
	size_t window;		/* how far decoding may run ahead */
	pthread_mutex_t lock;
	pthread_cond_t ready, space;
};

void merge_init(struct merge *m, const struct merge_opts *opts,
		struct sym_ctx *sym)
{
	memset(m, 0, sizeof(*m));
	m->opts = *opts;
	if (m->opts.jobs == 0)
		m->opts.jobs = 1;
	m->sym = sym;
	idx_builder_init(&m->b);
}

/* Where a PC is, independent of the process: the key of the PC cache. */
struct merge_pc {
	int32_t module;		/* sym module, or -1 */
	uint32_t build_id_size;
	uint64_t where;		/* module address, module offset, or PC */
	uint8_t build_id[RAW_BUILD_ID_MAX];
	uint32_t first, n;	/* its frames in merge.ids */
};

void merge_release(struct merge *m)
{
	if (!m)
		return;
	idx_builder_release(&m->b);
	stack_buf_release(&m->buf);
	ht_release(&m->pc_ht);
	free(m->pcs);
	free(m->ids);
	free(m->runtime);
	free(m->stack);
	free(m->stack_rt);
	memset(m, 0, sizeof(*m));
}

static void pc_key(const struct raw_profile *prof, uint64_t pc,
		   const struct sym_addr *a, struct merge_pc *k)
{
	memset(k, 0, sizeof(*k));
	k->module = a->module;
	if (a->module >= 0) {
		k->where = a->addr;
	} else if (a->segment >= 0 && a->build_id_size) {
		k->build_id_size = a->build_id_size;
		memcpy(k->build_id, prof->segments[a->segment].build_id,
		       a->build_id_size);
		k->where = a->offset;
	} else {
		/* No build id to name the module by: the address itself. */
		k->where = pc;
	}
}

static uint64_t pc_hash(const struct merge_pc *k)
{
	uint64_t h = mp_hash64(k->where ^ ((uint64_t)(uint32_t)k->module << 40));

	if (k->build_id_size)
		h = mp_hash_bytes(k->build_id, k->build_id_size, h);
	return h;
}

static bool pc_eq(const void *key, uint32_t id, const void *ctx)
{
	const struct merge_pc *k = key, *p = &((const struct merge *)ctx)->pcs[id];

	return p->module == k->module && p->where == k->where &&
	       p->build_id_size == k->build_id_size &&
	       memcmp(p->build_id, k->build_id, k->build_id_size) == 0;
}

/* Symbolize and intern the frames of a PC not seen before. */
static enum mp_errcode add_pc(struct merge *m, const struct raw_profile *prof,
			      uint64_t pc, const struct sym_addr *a,
			      struct merge_pc *k, uint64_t h, struct mp_err *err)
{
	enum mp_errcode rc;

	m->buf.n = 0;
	if ((rc = stack_add_pc(m->sym, prof, a, pc, &m->buf, err)))
		return rc;
	if (stack_to_idx(&m->buf) ||
	    !MP_GROW(m->ids, m->aids, m->nids + m->buf.n) ||
	    !MP_GROW(m->runtime, m->aruntime, m->nids + m->buf.n) ||
	    !MP_GROW(m->pcs, m->apcs, m->npcs + 1))
		return mp_fail(err, MP_E_NOMEM, NULL);
	k->first = (uint32_t)m->nids;
	k->n = (uint32_t)m->buf.n;
	for (size_t i = 0; i < m->buf.n; i++) {
		rc = idx_builder_frame(&m->b, &m->buf.idx[i], &m->ids[m->nids]);
		if (rc)
			return mp_fail(err, rc, NULL);
		m->runtime[m->nids++] = m->buf.sf[i] && m->buf.sf[i]->runtime;
	}
	m->pcs[m->npcs] = *k;
	if (ht_insert(&m->pc_ht, h, (uint32_t)m->npcs))
		return mp_fail(err, MP_E_NOMEM, NULL);
	m->npcs++;
	return MP_OK;
}

bool merge_parse_weighted(const char *s, struct merge_input *in)
{
	const char *comma = strchr(s, ',');
	char num[32];
	unsigned long long w;
	size_t len;

	if (!comma || comma == s || !comma[1])
		return false;
	len = (size_t)(comma - s);
	if (len >= sizeof(num))
		return false;
	memcpy(num, s, len);
	num[len] = '\0';
	if (!cli_parse_uint(num, 1, UINT64_MAX, &w))
		return false;
	in->weight = w;
	in->path = comma + 1;
	return true;
}

/* Read and validate one input: what a worker does. */
static void decode(const char *path, struct slot *s)
{
	s->rc = mp_file_read(&s->buf, path, &s->err);
	if (s->rc)
		return;
	if (idx_is_indexed(s->buf.data, s->buf.size)) {
		s->indexed = true;
		s->rc = idx_open(&s->idx, s->buf.data, s->buf.size, &s->err);
		return;
	}
	raw_file_init(&s->rf);
	s->rc = raw_parse(&s->rf, s->buf.data, s->buf.size, &s->err);
	/* A raw file is copied out during parsing: the bytes can go. */
	mp_buf_release(&s->buf);
}

static void slot_release(struct slot *s)
{
	raw_file_release(&s->rf);
	mp_buf_release(&s->buf);
}

static void *worker(void *arg)
{
	struct pipeline *p = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&p->lock);
		while (p->next < p->n && p->next >= p->consumed + p->window)
			pthread_cond_wait(&p->space, &p->lock);
		if (p->next >= p->n) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		i = p->next++;
		pthread_mutex_unlock(&p->lock);

		decode(p->in[i].path, &p->slots[i]);

		pthread_mutex_lock(&p->lock);
		p->slots[i].ready = true;
		pthread_cond_broadcast(&p->ready);
		pthread_mutex_unlock(&p->lock);
	}
}

/*
 * Fold the contexts of a raw file, symbolized, into the builder.  Each PC
 * costs a segment search and a cache probe; only a PC location never seen
 * before is symbolized and interned.  The allocation runtime's leading
 * frames are dropped as stack_symbolize() drops them.
 */
static enum mp_errcode add_raw(struct merge *m, const struct raw_file *rf,
			       uint64_t weight, struct mp_err *err)
{
	enum mp_errcode rc;

	for (size_t p = 0; p < rf->nprofiles; p++)
		if ((rc = sym_check_profile(m->sym, &rf->profiles[p], err)))
			return rc;
	/*
	 * Within one memory map a PC value always means the same place: map
	 * each raw PC to its cache entry once per file (per map).
	 */
	struct ht_map local = HT_MAP_INIT;
	uint32_t layout = UINT32_MAX;

	for (size_t i = 0; i < rf->ncontexts; i++) {
		const struct raw_context *c = &rf->contexts[i];
		const struct raw_profile *prof = &rf->profiles[c->profile];
		size_t n = 0, start = 0;

		if (prof->layout != layout) {
			ht_map_release(&local);
			layout = prof->layout;
		}
		if (c->npcs == 0)
			continue;	/* no stack: nothing to attach it to */
		for (uint32_t k = 0; k < c->npcs; k++) {
			struct sym_addr a;
			struct merge_pc key;
			const struct merge_pc *e;
			uint64_t h;
			uint32_t id;

			if (ht_map_get(&local, c->pcs[k], &id))
				goto have;
			if ((rc = sym_map_pc(m->sym, prof, c->pcs[k], &a, err)))
				goto fail;
			pc_key(prof, c->pcs[k], &a, &key);
			h = pc_hash(&key);
			id = ht_find(&m->pc_ht, h, pc_eq, &key, m);
			if (id == HT_NONE) {
				rc = add_pc(m, prof, c->pcs[k], &a, &key, h, err);
				if (rc)
					goto fail;
				id = (uint32_t)m->npcs - 1;
			}
			if (ht_map_put(&local, c->pcs[k], id)) {
				rc = mp_fail(err, MP_E_NOMEM, NULL);
				goto fail;
			}
have:
			e = &m->pcs[id];
			if (!MP_GROW(m->stack, m->astack, n + e->n) ||
			    !MP_GROW(m->stack_rt, m->astack_rt, n + e->n)) {
				rc = mp_fail(err, MP_E_NOMEM, NULL);
				goto fail;
			}
			memcpy(m->stack + n, m->ids + e->first, e->n * sizeof(*m->ids));
			memcpy(m->stack_rt + n, m->runtime + e->first, e->n);
			n += e->n;
		}
		if (!m->opts.keep_runtime)
			while (start < n && m->stack_rt[start])
				start++;
		if (start == n) {
			/* Nothing but the runtime: keep it all rather than lose it. */
			m->stats.all_runtime++;
			start = 0;
		}
		m->stats.runtime_dropped += start;
		rc = idx_builder_add_stack(&m->b, m->stack + start,
					   (uint32_t)(n - start), &c->mib, c->hist,
					   c->nhist, weight, err);
		if (rc)
			goto fail;
	}
	ht_map_release(&local);
	idx_builder_count_inputs(&m->b, 1);
	return MP_OK;
fail:
	ht_map_release(&local);
	return rc;
}

/*
 * As for show (view.c), an indexed input may expand to at most 16 frames
 * per byte of it: a trie lets N nodes describe N^2/2 frames.
 */
#define MERGE_FRAMES_PER_BYTE 16
#define MERGE_FRAMES_MIN 65536

struct idx_add {
	struct merge *m;
	uint64_t weight;
	struct mp_err *err;
	enum mp_errcode rc;
	char (*paths)[4096];
	size_t apaths;
	uint64_t frames, max_frames;
};

static int add_idx_context(void *arg, const struct idx_file *f,
			   const struct idx_context *c)
{
	struct idx_add *a = arg;
	struct stack_buf *buf = &a->m->buf;
	uint32_t d = idx_stack_depth(f, c->stack_id);

	a->frames += d;
	if (a->frames > a->max_frames) {
		a->rc = mp_fail(a->err, MP_E_TOO_LARGE,
				"its stacks expand to more than %llu frames (%d "
				"per byte of the file)",
				(unsigned long long)a->max_frames,
				MERGE_FRAMES_PER_BYTE);
		return 1;
	}
	if (!MP_GROW(buf->idx, buf->aidx, d) || !MP_GROW(a->paths, a->apaths, d)) {
		a->rc = mp_fail(a->err, MP_E_NOMEM, NULL);
		return 1;
	}
	for (uint32_t k = 0, node = c->stack_id; k < d;
	     k++, node = idx_node_parent1(f, node) - 1)
		idx_stack_frame(f, node, 0, &buf->idx[k], a->paths[k],
				sizeof(a->paths[k]));
	a->rc = idx_builder_add(&a->m->b, buf->idx, d, &c->mib, c->hist,
				c->nhist, a->weight, a->err);
	return a->rc != MP_OK;
}

static enum mp_errcode add_indexed(struct merge *m, const struct idx_file *f,
				   uint64_t weight, struct mp_err *err)
{
	struct idx_add a = { m, weight, err, MP_OK, NULL, 0, 0, 0 };
	int r;

	a.max_frames = (uint64_t)f->size * MERGE_FRAMES_PER_BYTE;
	if (a.max_frames < MERGE_FRAMES_MIN)
		a.max_frames = MERGE_FRAMES_MIN;
	r = idx_foreach_context(f, add_idx_context, &a);

	free(a.paths);
	if (r && !a.rc)
		a.rc = mp_fail(err, MP_E_NOMEM, NULL);
	if (a.rc == MP_OK)
		idx_builder_count_inputs(&m->b, f->ninputs ? f->ninputs : 1);
	return a.rc;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress(struct merge *m, size_t done, size_t n, double start,
		     bool last)
{
	static double shown;

	if (!m->opts.progress || (!last && now() - start < 0.5) ||
	    (!last && now() - shown < 0.1))
		return;
	shown = now();
	fprintf(stderr, "\r%s merge: %zu/%zu inputs, %zu contexts%s",
		cli_progname, done, n, m->b.nctxs, last ? "\n" : "");
}

/*
 * Take an input's decoded slot: merge it or report it.  Only a failure to
 * decode is the input's fault and follows the failure mode; a failure
 * while folding it in (out of memory, a limit of the format, a --strict
 * symbolization error) would leave it half merged, so it always fails.
 */
static int consume(struct merge *m, const struct merge_input *in,
		   struct slot *s)
{
	struct mp_err err = { 0 };
	enum mp_errcode rc;

	if (s->rc) {
		slot_release(s);
		m->bad++;
		if (m->opts.failure_mode == FAIL_ANY) {
			cli_error(in->path, "%s", mp_errmsg(&s->err));
			return EXIT_ERROR;
		}
		cli_warning(in->path, "%s; input skipped", mp_errmsg(&s->err));
		return EXIT_OK;
	}
	rc = s->indexed ? add_indexed(m, &s->idx, in->weight, &err)
			: add_raw(m, &s->rf, in->weight, &err);
	slot_release(s);
	if (rc) {
		cli_error(in->path, "%s", mp_errmsg(&err));
		return EXIT_ERROR;
	}
	m->good++;
	return EXIT_OK;
}

int merge_inputs(struct merge *m, const struct merge_input *in, size_t n)
{
	struct pipeline p = { 0 };
	pthread_t *threads = NULL;
	unsigned nthreads = 0;
	double start = now();
	int rc = EXIT_OK;
	size_t i = 0;

	p.in = in;
	p.n = n;
	p.window = 2 * (size_t)m->opts.jobs;
	p.slots = calloc(n ? n : 1, sizeof(*p.slots));
	if (!p.slots) {
		cli_error(NULL, "out of memory");
		return EXIT_ERROR;
	}
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.ready, NULL);
	pthread_cond_init(&p.space, NULL);
	if (m->opts.jobs > 1 && n > 1) {
		threads = calloc(m->opts.jobs, sizeof(*threads));
		for (unsigned t = 0; threads && t < m->opts.jobs; t++)
			if (pthread_create(&threads[t], NULL, worker, &p) == 0)
				nthreads++;
	}
	for (i = 0; i < n && rc == EXIT_OK; i++) {
		if (nthreads) {
			pthread_mutex_lock(&p.lock);
			while (!p.slots[i].ready)
				pthread_cond_wait(&p.ready, &p.lock);
			pthread_mutex_unlock(&p.lock);
		} else {
			decode(in[i].path, &p.slots[i]);
		}
		rc = consume(m, &in[i], &p.slots[i]);
		pthread_mutex_lock(&p.lock);
		p.consumed++;
		pthread_cond_broadcast(&p.space);
		pthread_mutex_unlock(&p.lock);
		progress(m, i + 1, n, start, false);
	}
	if (nthreads) {
		/* On an early failure, let the workers run out of inputs. */
		pthread_mutex_lock(&p.lock);
		p.n = p.next;
		p.consumed = p.n;
		pthread_cond_broadcast(&p.space);
		pthread_mutex_unlock(&p.lock);
		for (unsigned t = 0; t < nthreads; t++)
			pthread_join(threads[t], NULL);
	}
	progress(m, i, n, start, m->opts.progress && now() - start >= 0.5);
	for (size_t k = 0; k < n; k++)
		slot_release(&p.slots[k]);
	free(p.slots);
	free(threads);
	pthread_mutex_destroy(&p.lock);
	pthread_cond_destroy(&p.ready);
	pthread_cond_destroy(&p.space);
	if (rc != EXIT_OK)
		return rc;
	if (m->good == 0 && m->opts.failure_mode != FAIL_WARN) {
		cli_error(NULL, "no input could be merged");
		return EXIT_ERROR;
	}
	return EXIT_OK;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

int merge_write(struct merge *m, const char *path)
{
	struct mp_outfile of = { 0 };
	struct mp_err err = { 0 };
	struct mp_buf z = { 0 };
	char *mem = NULL;
	size_t len = 0;
	FILE *fp = NULL;
	int rc = EXIT_ERROR;

	if (mp_outfile_open(&of, path, &err)) {
		cli_error(path, "%s", mp_errmsg(&err));
		goto out;
	}
	if (!has_suffix(path, ".zst")) {
		/* Straight to the temporary file: the result is not held twice. */
		if (idx_builder_write(&m->b, of.fp, &err)) {
			cli_error(path, "%s", mp_errmsg(&err));
			goto out;
		}
	} else {
		/*
		 * glibc's memstream fclose() reports success even when its
		 * final realloc fails, leaving MEM NULL.
		 */
		enum mp_errcode wrc;
		int crc;

		fp = open_memstream(&mem, &len);
		if (!fp) {
			cli_error(path, "out of memory");
			goto out;
		}
		wrc = idx_builder_write(&m->b, fp, &err);
		crc = fclose(fp);
		fp = NULL;
		if (wrc || crc || !mem) {
			cli_error(path, "%s", wrc ? mp_errmsg(&err) : "out of memory");
			goto out;
		}
		if (mp_zstd_compress(&z, mem, len, 19, &err)) {
			cli_error(path, "%s", mp_errmsg(&err));
			goto out;
		}
		free(mem);
		mem = NULL;
		if (fwrite(z.data, 1, z.size, of.fp) != z.size) {
			cli_error(path, "cannot write output: %s", strerror(errno));
			goto out;
		}
	}
	if (mp_outfile_commit(&of, &err)) {
		cli_error(path, "%s", mp_errmsg(&err));
		goto out;
	}
	rc = EXIT_OK;
out:
	mp_outfile_abort(&of);
	mp_buf_release(&z);
	free(mem);
	return rc;
}
