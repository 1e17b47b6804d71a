/*
 * fault.c - an LD_PRELOAD shim that makes one chosen call fail, to show
 * that a command's outputs are complete or absent, never partial
 * (tests/cli/test_atomic.sh).  Built by tests/fuzz/fuzz.mk as
 * $(BUILD)/tests/libfault.so.
 *
 *	LD_PRELOAD=build/tests/libfault.so FAULT_AT=write:2 memprof-data ...
 *
 * FAULT_AT=OP:N[:ERRNO] fails the Nth call (from 1) of OP:
 *	write	write() returns -1, errno EIO
 *	enospc	the disk fills during the Nth write(): it writes half its
 *		bytes and returns that short count; every later write()
 *		returns -1 with ENOSPC
 *	fsync	fsync() or fdatasync() returns -1, errno EIO, syncing nothing
 *	rename	rename() or renameat() returns -1, errno EIO, renaming nothing
 *	close	close() releases the descriptor (as Linux always does) but
 *		returns -1, errno EIO (as NFS may, reporting a failed flush)
 *	malloc	malloc(), calloc() or realloc() returns NULL, errno ENOMEM
 * ERRNO (a number or one of EIO, ENOSPC, EDQUOT, EACCES, EPERM, EROFS,
 * EXDEV, ENOMEM, EINTR) replaces the default errno.
 *
 * FAULT_COUNT=FILE appends "OP COUNT" lines to FILE at exit: how many
 * calls of each OP the process made, so a test can try every N.
 * FAULT_SLOW=USEC sleeps USEC microseconds before every write(), so that
 * a signal sent at a random moment often lands in the middle of writing.
 * FAULT_TRACE=1 prints a backtrace on standard error when the fault fires
 * (to find which call N is).
 *
 * Writes through stdio.  glibc's stdio calls its internal write, which no
 * shim can interpose; so fdopen() of a descriptor for writing is replaced
 * by a fopencookie() stream whose functions call write(), lseek() and
 * close() through this shim, and fileno() answers the descriptor for such
 * streams.  (memprof-data writes its outputs through mp_outfile, which is
 * mkostemp() + fdopen().)  Standard error is written by glibc directly,
 * uncounted, so messages always get out.
 *
 * Only this shim's own state is touched; it is test code, never linked
 * into the tool.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

enum op { OP_WRITE, OP_ENOSPC, OP_FSYNC, OP_RENAME, OP_CLOSE, OP_MALLOC, OP__COUNT };

static const char *const op_names[OP__COUNT] = {
	"write", "enospc", "fsync", "rename", "close", "malloc",
};
static const int op_errno[OP__COUNT] = { EIO, ENOSPC, EIO, EIO, EIO, ENOMEM };

/* What to fail, read once from the environment. */
static int fault_op = -1;
static unsigned long fault_n;
static int fault_errno;
static unsigned long slow_usec;
static bool disk_full;
static bool configured;

/* Calls seen, by op; writes count for both write and enospc. */
static unsigned long calls[OP__COUNT];

/* ---- the real functions ---- */

static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_rename)(const char *, const char *);
static int (*real_renameat)(int, const char *, int, const char *);
static int (*real_close)(int);
static FILE *(*real_fdopen)(int, const char *);
static int (*real_fileno)(FILE *);
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);

/*
 * dlsym() may allocate before real_calloc is known: such early requests
 * are served from this static block and never freed.
 */
static _Alignas(16) unsigned char boot[16384];
static size_t boot_used;
static int resolving;

static void *boot_alloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n > sizeof(boot) - boot_used)
		return NULL;
	p = boot + boot_used;
	boot_used += n;
	return p;
}

static bool is_boot(const void *p)
{
	return (const unsigned char *)p >= boot &&
	       (const unsigned char *)p < boot + sizeof(boot);
}

static int errno_by_name(const char *s)
{
	static const struct { const char *name; int e; } names[] = {
		{ "EIO", EIO }, { "ENOSPC", ENOSPC }, { "EDQUOT", EDQUOT },
		{ "EACCES", EACCES }, { "EPERM", EPERM }, { "EROFS", EROFS },
		{ "EXDEV", EXDEV }, { "ENOMEM", ENOMEM }, { "EINTR", EINTR },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].e;
	return atoi(s);
}

extern char **environ;

static void configure(void)
{
	const char *at, *slow;

	/*
	 * Allocations can come before the C library has set up the
	 * environment (a sanitizer runtime starting): read it later then.
	 */
	if (configured || !environ)
		return;
	at = getenv("FAULT_AT");
	slow = getenv("FAULT_SLOW");
	if (at) {
		for (int i = 0; i < OP__COUNT; i++) {
			size_t len = strlen(op_names[i]);

			if (strncmp(at, op_names[i], len) == 0 && at[len] == ':') {
				const char *e;

				fault_op = i;
				fault_n = strtoul(at + len + 1, NULL, 10);
				fault_errno = op_errno[i];
				e = strchr(at + len + 1, ':');
				if (e && errno_by_name(e + 1) > 0)
					fault_errno = errno_by_name(e + 1);
			}
		}
	}
	if (slow)
		slow_usec = strtoul(slow, NULL, 10);
	configured = true;
}

static void resolve(void)
{
	if (real_free)
		return;
	resolving = 1;
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_write = dlsym(RTLD_NEXT, "write");
	real_fsync = dlsym(RTLD_NEXT, "fsync");
	real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
	real_rename = dlsym(RTLD_NEXT, "rename");
	real_renameat = dlsym(RTLD_NEXT, "renameat");
	real_close = dlsym(RTLD_NEXT, "close");
	real_fdopen = dlsym(RTLD_NEXT, "fdopen");
	real_fileno = dlsym(RTLD_NEXT, "fileno");
	real_free = dlsym(RTLD_NEXT, "free");
	resolving = 0;
}

static void trace(void)
{
	static const char msg[] = "fault: injected here:\n";
	void *pcs[32];
	int n;

	if (!getenv("FAULT_TRACE"))
		return;
	n = backtrace(pcs, 32);
	if (real_write(STDERR_FILENO, msg, sizeof(msg) - 1) > 0)
		backtrace_symbols_fd(pcs, n, STDERR_FILENO);
}

/* Count a call of OP; true when this is the one to fail. */
static bool hit(enum op op)
{
	unsigned long n = __atomic_add_fetch(&calls[op], 1, __ATOMIC_RELAXED);

	configure();
	if (fault_op != (int)op || n != fault_n)
		return false;
	trace();
	return true;
}

/* ---- allocation ---- */

void *malloc(size_t n)
{
	if (resolving)
		return boot_alloc(n);
	resolve();
	if (hit(OP_MALLOC)) {
		errno = fault_errno;
		return NULL;
	}
	return real_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	if (resolving) {
		size_t s;
		void *p;

		if (__builtin_mul_overflow(n, m, &s))
			return NULL;
		p = boot_alloc(s);
		if (p)
			memset(p, 0, s);
		return p;
	}
	resolve();
	if (hit(OP_MALLOC)) {
		errno = fault_errno;
		return NULL;
	}
	return real_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	resolve();
	if (is_boot(p)) {
		size_t avail = (size_t)(boot + sizeof(boot) - (unsigned char *)p);
		void *q = real_malloc(n);

		/* The block's own size is unknown; it lies within boot[]. */
		if (q)
			memcpy(q, p, n < avail ? n : avail);
		return q;
	}
	if (hit(OP_MALLOC)) {
		errno = fault_errno;
		return NULL;
	}
	return real_realloc(p, n);
}

void free(void *p)
{
	if (!p || is_boot(p))
		return;
	resolve();
	real_free(p);
}

/* ---- files ---- */

ssize_t write(int fd, const void *buf, size_t n)
{
	unsigned long k;

	resolve();
	configure();
	if (slow_usec)
		usleep((useconds_t)slow_usec);
	/* write and enospc count the same calls. */
	k = __atomic_add_fetch(&calls[OP_WRITE], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&calls[OP_ENOSPC], 1, __ATOMIC_RELAXED);
	if (fault_op == OP_WRITE && k == fault_n) {
		trace();
		errno = fault_errno;
		return -1;
	}
	if (fault_op == OP_ENOSPC && k >= fault_n) {
		if (!disk_full) {
			trace();
			disk_full = true;
			if (n > 1)
				return real_write(fd, buf, n / 2);
		}
		errno = fault_errno;
		return -1;
	}
	return real_write(fd, buf, n);
}

int fsync(int fd)
{
	resolve();
	if (hit(OP_FSYNC)) {
		errno = fault_errno;
		return -1;
	}
	return real_fsync(fd);
}

int fdatasync(int fd)
{
	resolve();
	if (hit(OP_FSYNC)) {
		errno = fault_errno;
		return -1;
	}
	return real_fdatasync(fd);
}

int rename(const char *from, const char *to)
{
	resolve();
	if (hit(OP_RENAME)) {
		errno = fault_errno;
		return -1;
	}
	return real_rename(from, to);
}

int renameat(int dfrom, const char *from, int dto, const char *to)
{
	resolve();
	if (hit(OP_RENAME)) {
		errno = fault_errno;
		return -1;
	}
	return real_renameat(dfrom, from, dto, to);
}

int close(int fd)
{
	resolve();
	if (hit(OP_CLOSE)) {
		real_close(fd);
		errno = fault_errno;
		return -1;
	}
	return real_close(fd);
}

/* ---- stdio streams on descriptors, routed through the functions above ---- */

#define MAX_STREAMS 64

static struct stream {
	FILE *fp;
	int fd;
} streams[MAX_STREAMS];

static ssize_t cookie_read(void *c, char *buf, size_t n)
{
	return read((int)(intptr_t)c, buf, n);
}

/*
 * Write all N bytes, as glibc's own file streams do: a short count is
 * retried, so that a full disk shows as ENOSPC on the next call.  On
 * failure, return the bytes written (less than N, which marks the stream
 * in error) with errno set by write().
 */
static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = write((int)(intptr_t)c, buf + done, n - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

static int cookie_seek(void *c, off64_t *off, int whence)
{
	off64_t r = lseek64((int)(intptr_t)c, *off, whence);

	if (r < 0)
		return -1;
	*off = r;
	return 0;
}

static int cookie_close(void *c)
{
	int fd = (int)(intptr_t)c;

	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i].fp && streams[i].fd == fd)
			streams[i].fp = NULL;
	return close(fd);
}

FILE *fdopen(int fd, const char *mode)
{
	static const cookie_io_functions_t io = {
		cookie_read, cookie_write, cookie_seek, cookie_close,
	};
	int slot = -1;
	FILE *fp;

	resolve();
	for (int i = 0; i < MAX_STREAMS && slot < 0; i++)
		if (!streams[i].fp)
			slot = i;
	/* Streams for reading, or no room to remember one: stdio's own. */
	if (!strpbrk(mode, "wa+") || slot < 0)
		return real_fdopen(fd, mode);
	if (fcntl(fd, F_GETFD) < 0)
		return NULL;	/* EBADF, as fdopen says */
	fp = fopencookie((void *)(intptr_t)fd, mode, io);
	if (fp) {
		streams[slot].fp = fp;
		streams[slot].fd = fd;
	}
	return fp;
}

int fileno(FILE *fp)
{
	resolve();
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i].fp == fp && fp)
			return streams[i].fd;
	return real_fileno(fp);
}

/* ---- the count report ---- */

__attribute__((destructor)) static void report_counts(void)
{
	const char *path = getenv("FAULT_COUNT");
	char line[64];
	int fd;

	if (!path || !real_write)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	for (int i = 0; i < OP__COUNT; i++) {
		int n = snprintf(line, sizeof(line), "%s %lu\n", op_names[i],
				 calls[i]);

		if (real_write(fd, line, (size_t)n) < 0)
			break;
	}
	real_close(fd);
}
