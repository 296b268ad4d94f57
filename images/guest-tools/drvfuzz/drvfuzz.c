// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * drvfuzz: random ioctls, mmaps, reads and writes on a driver's device, as
 * an unprivileged user, from a seed (drvfuzz.h).
 *
 *   drvfuzz DRIVER SEED OPS [UID]
 *
 * DRIVER is a table's name (tgr).  Run as root, it first forks a victim
 * that keeps objects of its own open (as root) for the whole run, then
 * drops to UID (default 65534, nobody): every mmap the fuzzer gets must
 * lie inside a range an ioctl of its own returned.  Prints one "ok" line
 * with the counts, or "FAIL" lines; exit status 0, 1 on a failure, 2 on
 * bad usage.  Check the kernel log afterwards (tgrtest dmesg).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/args.h"
#include "common/fault.h"
#include "drvfuzz.h"

static const struct fz_driver *const drivers[] = { &fz_tgr, &fz_ps1, &fz_myri };

#define MAX_MAPS	32

struct fz_map {
	void *addr;
	size_t len;
};

static struct fz_map maps[MAX_MAPS];
static unsigned int n_maps;
static unsigned long cnt_ioctl, cnt_ioctl_ok, cnt_rnd_ioctl, cnt_mmap,
	cnt_mmap_ok, cnt_rw, cnt_faults, cnt_reopen;
static int failures;

/* ---- randomness ---- */

uint64_t fz_rand(struct fz *f)
{
	/* xorshift64*: the same seed gives the same run */
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return f->rng * 0x2545f4914f6cdd1dull;
}

uint32_t fz_below(struct fz *f, uint32_t n)
{
	return n ? fz_rand(f) % n : 0;
}

uint32_t fz_u32(struct fz *f)
{
	static const uint32_t edge[] = { 0, 1, 2, 3, 4, 63, 64, 255, 256,
					 1023, 1024, 4095, 4096, 65535, 65536,
					 0x7fffffff, 0x80000000u, 0xffffffffu };

	switch (fz_below(f, 5)) {
	case 0:
		return fz_below(f, 8);
	case 1:
		return f->n_ids ? f->ids[fz_below(f, f->n_ids)] : 1;
	case 2:
		return edge[fz_below(f, sizeof(edge) / sizeof(edge[0]))];
	case 3:
		return fz_below(f, 70);
	default:
		return fz_rand(f);
	}
}

uint64_t fz_addr(struct fz *f)
{
	uint64_t base = (uintptr_t)f->arena;
	size_t page = f->drv->page;

	switch (fz_below(f, 8)) {
	case 0:
		return 0;
	case 1:
		return 0xffff888000000000ull + fz_below(f, 1 << 20) * page;
	case 2:
		return fz_rand(f);
	case 3:
		return base + fz_below(f, FZ_ARENA_PAGES * page);
	default:
		return base + fz_below(f, FZ_ARENA_PAGES) * page;
	}
}

uint64_t fz_len(struct fz *f)
{
	size_t page = f->drv->page;

	switch (fz_below(f, 6)) {
	case 0:
		return fz_below(f, 2 * page);
	case 1:
		return fz_rand(f);
	case 2:
		return (uint64_t)fz_below(f, 1 << 16) * page;
	default:
		return (uint64_t)(1 + fz_below(f, FZ_ARENA_PAGES / 2)) * page;
	}
}

void fz_give(struct fz *f, uint64_t off, uint64_t len)
{
	if (f->n_given < FZ_MAX_GIVEN && len) {
		f->given[f->n_given].off = off;
		f->given[f->n_given].len = len;
		f->n_given++;
	}
}

void fz_note_id(struct fz *f, uint32_t id)
{
	if (f->n_ids < FZ_MAX_IDS)
		f->ids[f->n_ids++] = id;
	else
		f->ids[fz_below(f, FZ_MAX_IDS)] = id;
}

uint64_t fz_given_offset(struct fz *f)
{
	const struct fz_range *r;

	if (!f->n_given)
		return 0;
	r = &f->given[fz_below(f, f->n_given)];
	return r->off + (fz_below(f, 4) ? 0 : fz_below(f, r->len + 1));
}

static void fuzz_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	if (failures++ >= 10)
		return;
	printf("FAIL drvfuzz: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Was [off, off + len) given to us? */
static bool fz_is_given(struct fz *f, uint64_t off, uint64_t len)
{
	for (unsigned int i = 0; i < f->n_given; i++)
		if (off >= f->given[i].off &&
		    off + len <= f->given[i].off + f->given[i].len)
			return true;
	return false;
}

/* ---- the operations ---- */

static void fz_random_fill(struct fz *f, uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = fz_below(f, 4) ? 0 : fz_rand(f);
}

static void op_ioctl(struct fz *f)
{
	const struct fz_ioctl *io =
		&f->drv->ioctls[fz_below(f, f->drv->n_ioctls)];
	uint8_t arg[512];

	fz_random_fill(f, arg, sizeof(arg));
	if (io->fill && fz_below(f, 8))
		io->fill(f, arg);
	cnt_ioctl++;
	if (fz_below(f, 32) == 0) {
		/* the argument itself is a bad pointer */
		ioctl(f->fd, io->nr, (void *)(uintptr_t)fz_addr(f));
		return;
	}
	if (ioctl(f->fd, io->nr, arg) == 0) {
		cnt_ioctl_ok++;
		if (io->harvest)
			io->harvest(f, arg);
	}
}

static void op_random_ioctl(struct fz *f)
{
	static uint8_t arg[8192];
	unsigned long nr;

	fz_random_fill(f, arg, sizeof(arg));
	if (fz_below(f, 2)) {
		/* the driver's magic, any number, size and direction */
		unsigned long base = f->drv->ioctls[0].nr;

		nr = _IOC(fz_below(f, 4), _IOC_TYPE(base), fz_below(f, 64),
			  fz_below(f, 4) ? fz_below(f, 256) : fz_below(f, 8192));
	} else {
		nr = (uint32_t)fz_rand(f);
	}
	/* these would change the file under the fuzzer, not the driver */
	if (nr == FIOCLEX || nr == FIONCLEX || nr == FIONBIO ||
	    nr == FIOASYNC)
		return;
	cnt_rnd_ioctl++;
	ioctl(f->fd, nr, fz_below(f, 8) ? arg : (void *)(uintptr_t)fz_addr(f));
}

static void fz_unmap_one(unsigned int i)
{
	munmap(maps[i].addr, maps[i].len);
	maps[i] = maps[--n_maps];
}

static void op_mmap(struct fz *f)
{
	static const int prots[] = { PROT_READ, PROT_WRITE,
				     PROT_READ | PROT_WRITE, PROT_NONE,
				     PROT_READ | PROT_EXEC,
				     PROT_READ | PROT_WRITE | PROT_EXEC };
	size_t page = f->drv->page;
	uint64_t off = f->drv->pick_offset(f) & ~(uint64_t)(page - 1);
	size_t len = (1 + fz_below(f, 4)) * page;
	int prot = prots[fz_below(f, 6)];
	int flags = fz_below(f, 8) ? MAP_SHARED : MAP_PRIVATE;
	volatile uint8_t *p;
	int sig;

	if (fz_below(f, 16) == 0)
		len = fz_below(f, 64) * page + fz_below(f, page);
	cnt_mmap++;
	p = mmap(NULL, len, prot, flags, f->fd, off);
	if (p == MAP_FAILED)
		return;
	cnt_mmap_ok++;
	if (!fz_is_given(f, off, (len + page - 1) & ~(page - 1)))
		fuzz_fail("mmap of offset 0x%llx, %zu bytes, prot %d flags %d "
			  "succeeded: the driver never gave it to us",
			  (unsigned long long)off, len, prot, flags);
	if (n_maps == MAX_MAPS)
		fz_unmap_one(fz_below(f, n_maps));
	maps[n_maps].addr = (void *)p;
	maps[n_maps].len = len;
	n_maps++;
	if (!(prot & PROT_READ))
		return;
	/* touch one word; a fault (a revoked or refused page) is fine */
	sig = sigsetjmp(fault_jmp, 1);
	if (sig) {
		cnt_faults++;
		return;
	}
	(void)p[fz_below(f, len) & ~3u];
}

static void op_rw(struct fz *f)
{
	static uint8_t buf[16384];
	size_t len = fz_below(f, sizeof(buf) + 1);
	struct pollfd pfd = { .fd = f->fd, .events = POLLIN | POLLPRI };

	cnt_rw++;
	switch (fz_below(f, 3)) {
	case 0:
		(void)!read(f->fd, fz_below(f, 8) ? buf :
			    (void *)(uintptr_t)fz_addr(f), len);
		break;
	case 1:
		fz_random_fill(f, buf, len);
		(void)!write(f->fd, buf, len);
		break;
	default:
		poll(&pfd, 1, 0);
		break;
	}
}

static int fz_open(struct fz *f)
{
	f->fd = open(f->drv->dev, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (f->fd < 0)
		return -errno;
	f->n_given = 0;
	f->n_ids = 0;
	if (f->drv->opened)
		f->drv->opened(f, f->fd);
	return 0;
}

/* Close (the driver frees everything of the file) and open again. */
static void op_reopen(struct fz *f)
{
	while (n_maps)
		fz_unmap_one(0);
	close(f->fd);
	cnt_reopen++;
	if (fz_open(f))
		fuzz_fail("reopen %s: %s", f->drv->dev, strerror(errno));
}

/* ---- the victim: objects of another user that must stay out of reach ---- */

/*
 * The victim stays root, so the fuzzer cannot signal it: it lives until
 * the fuzzer closes *hold (or dies).
 */
static pid_t victim_start(const struct fz_driver *drv, uint64_t seed,
			  int *hold)
{
	int pipefd[2], ctl[2];
	pid_t pid;
	char c;

	if (pipe(pipefd))
		return -1;
	if (pipe(ctl)) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		struct fz v = { .drv = drv, .rng = seed ^ 0x5eed };

		close(pipefd[0]);
		close(ctl[1]);
		v.arena = mmap(NULL, FZ_ARENA_PAGES * drv->page,
			       PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (v.arena == MAP_FAILED || fz_open(&v))
			_exit(1);
		/* a few of every ioctl's plausible calls: objects to guess */
		for (int i = 0; i < 200; i++) {
			const struct fz_ioctl *io =
				&drv->ioctls[fz_below(&v, drv->n_ioctls)];
			uint8_t arg[512] = { 0 };

			if (io->fill)
				io->fill(&v, arg);
			ioctl(v.fd, io->nr, arg);
		}
		(void)!write(pipefd[1], "r", 1);
		(void)!read(ctl[0], &c, 1);
		_exit(0);
	}
	close(ctl[0]);
	*hold = ctl[1];
	close(pipefd[1]);
	if (pid > 0 && read(pipefd[0], &c, 1) != 1)
		pid = -1;
	close(pipefd[0]);
	return pid;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * A wait with a random argument may ask for days: an alarm every 100 ms
 * (no SA_RESTART) ends any blocking call with EINTR.
 */
static void wake_blocked_calls(void)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 100000 }, { 0, 100000 } };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static int drop_privileges(uid_t uid)
{
	/* uid 0: a root-only device (ps1, myri) is fuzzed as root */
	if (geteuid() != 0 || uid == 0)
		return 0;
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
		return -errno;
	return geteuid() == 0 ? -EPERM : 0;
}

int main(int argc, char **argv)
{
	const struct fz_driver *drv = NULL;
	struct fz f = { 0 };
	uint64_t seed, ops;
	uid_t uid;
	pid_t victim = -1;
	int err, hold = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: drvfuzz tgr|ps1|myri SEED OPS [UID]\n");
		return 2;
	}
	for (unsigned int i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++)
		if (!strcmp(argv[1], drivers[i]->name))
			drv = drivers[i];
	if (!drv) {
		fprintf(stderr, "drvfuzz: no table for driver %s\n", argv[1]);
		return 2;
	}
	seed = strtoull(argv[2], NULL, 0);
	ops = strtoull(argv[3], NULL, 0);
	uid = arg_or(argc, argv, 4, 65534);
	f.drv = drv;
	f.rng = seed * 0x9e3779b97f4a7c15ull + 1;
	if (geteuid() == 0)
		victim = victim_start(drv, seed, &hold);
	err = drop_privileges(uid);
	if (err) {
		printf("FAIL drvfuzz: cannot become uid %u: %s\n", (unsigned)uid,
		       strerror(-err));
		return 1;
	}
	f.arena = mmap(NULL, FZ_ARENA_PAGES * drv->page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (f.arena == MAP_FAILED || fz_open(&f)) {
		printf("FAIL drvfuzz: open %s as uid %u: %s\n", drv->dev,
		       (unsigned)getuid(), strerror(errno));
		return 1;
	}
	fault_catch(SIGBUS);
	fault_catch(SIGSEGV);
	signal(SIGPIPE, SIG_IGN);
	wake_blocked_calls();
	for (uint64_t i = 0; i < ops; i++) {
		uint32_t r = fz_below(&f, 100);

		if (r < 45)
			op_ioctl(&f);
		else if (r < 60)
			op_random_ioctl(&f);
		else if (r < 85)
			op_mmap(&f);
		else if (r < 99)
			op_rw(&f);
		else
			op_reopen(&f);
		if (n_maps && fz_below(&f, 8) == 0)
			fz_unmap_one(fz_below(&f, n_maps));
	}
	while (n_maps)
		fz_unmap_one(0);
	close(f.fd);
	if (victim > 0) {
		close(hold);
		waitpid(victim, NULL, 0);
	}
	printf("%s drvfuzz %s: %llu ops, seed %llu, uid %u: %lu ioctls (%lu "
	       "ok), %lu random ioctl numbers, %lu mmaps (%lu ok, %lu faults "
	       "on touch), %lu read/write/poll, %lu reopens\n",
	       failures ? "FAIL" : "ok  ", drv->name, (unsigned long long)ops,
	       (unsigned long long)seed, (unsigned)getuid(), cnt_ioctl,
	       cnt_ioctl_ok, cnt_rnd_ioctl, cnt_mmap, cnt_mmap_ok, cnt_faults,
	       cnt_rw, cnt_reopen);
	return failures ? 1 : 0;
}
