/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets across exec().
 *
 * exec keeps the process (its pid, so the port stays its own in the
 * node's pool, with what is queued for it) and the descriptors without
 * FD_CLOEXEC (the kernel sockets), but not the library's memory.  Before
 * the exec we receive everything that came, and write the connections of
 * the descriptors that survive, with their unread data, to a memfd that
 * survives too; PSOCK_EXEC=FD in the new image's environment names it.
 * The NIC's descriptor stays open across the exec, so that the board is
 * not reset under the port for want of users, and the new image's
 * library (psock_exec_resume(), from its constructor) takes the port
 * back with ps_port_resume() and closes it.
 *
 * A new image without this library (a static program, or LD_PRELOAD
 * gone) cannot read connections that were on ports.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "psock.h"

#define API __attribute__((visibility("default")))
#define EXEC_ENV	"PSOCK_EXEC"
#define EXEC_MAGIC	0x58455350u	/* "PSEX" */

struct exec_head {
	uint32_t magic;
	uint32_t conn_size;	/* sizeof(struct psock_conn): the same library */
	int32_t port_id;
	int32_t nic_fd;		/* kept open across the exec */
	char nic[8];		/* PS_HAL of the port */
	uint32_t nconns;
	uint32_t nfds;
	uint8_t port_shared;
};

struct exec_chunk {
	uint64_t len, off;
	uint16_t src_node, src_port;
	uint8_t src_lo;
};

struct exec_fd {
	int32_t fd;
	uint32_t id;
};

static bool put(int fd, const void *p, size_t len)
{
	while (len) {
		ssize_t n = syscall(SYS_write, fd, p, len);

		if (n <= 0)
			return false;
		p = (const char *)p + n;
		len -= n;
	}
	return true;
}

static bool get(int fd, void *p, size_t len)
{
	while (len) {
		ssize_t n = syscall(SYS_read, fd, p, len);

		if (n <= 0)
			return false;
		p = (char *)p + n;
		len -= n;
	}
	return true;
}

static bool survives(int fd)
{
	int f = sys_fcntl(fd, F_GETFD, 0);

	return f >= 0 && !(f & FD_CLOEXEC);
}

/* c (may be NULL) has a descriptor that survives the exec */
static bool kept(const struct psock_conn *c)
{
	for (int fd = 0; c && fd < psock_fd_limit(); fd++)
		if (psock_get(fd) == c && survives(fd))
			return true;
	return false;
}

static bool write_conn(int mfd, const struct psock_conn *c)
{
	uint32_t n = 0;

	for (struct psock_chunk *k = c->head; k; k = k->next)
		n++;
	if (!put(mfd, c, sizeof(*c)) || !put(mfd, &n, sizeof(n)))
		return false;
	for (struct psock_chunk *k = c->head; k; k = k->next) {
		struct exec_chunk e = { .len = k->len, .off = k->off,
					.src_node = k->src_node,
					.src_port = k->src_port,
					.src_lo = k->src_lo };

		if (!put(mfd, &e, sizeof(e)) || !put(mfd, k->data, k->len))
			return false;
	}
	return true;
}

/* The state in a memfd that survives exec; -1 when there is none.  Returns
 * with the lock held when it made one: no other thread may receive or send
 * until the exec (exec_undo() gives it back if the exec fails). */
static int exec_save(void)
{
	struct exec_head h = { .magic = EXEC_MAGIC,
			       .conn_size = sizeof(struct psock_conn) };
	ps_port_t *port;
	int mfd;

	psock_lock();
	psock_pump();		/* everything out of the pool, into chunks */
	port = psock_port_now();
	if (!port) {
		psock_unlock();
		return -1;
	}
	h.port_id = ps_port_id(port);
	h.nic_fd = ps_port_poll_fd(port);
	strncpy(h.nic, ps_port_nic(port), sizeof(h.nic) - 1);
	h.port_shared = psock_port_shared();
	for (int fd = 0; fd < psock_fd_limit(); fd++)
		if (psock_get(fd) && survives(fd))
			h.nfds++;
	for (uint32_t i = 0; i < psock_conn_limit(); i++)
		h.nconns += kept(psock_conn_at(i));
	mfd = memfd_create("psock-exec", 0);
	if (mfd < 0 || !put(mfd, &h, sizeof(h)))
		goto fail;
	for (uint32_t i = 0; i < psock_conn_limit(); i++)
		if (kept(psock_conn_at(i)) && !write_conn(mfd, psock_conn_at(i)))
			goto fail;
	for (int fd = 0; fd < psock_fd_limit(); fd++) {
		struct exec_fd e = { .fd = fd };

		if (!psock_get(fd) || !survives(fd))
			continue;
		e.id = psock_get(fd)->id;
		if (!put(mfd, &e, sizeof(e)))
			goto fail;
	}
	/* the NIC stays open across the exec: the board keeps its user */
	sys_fcntl(h.nic_fd, F_SETFD, 0);
	lseek(mfd, 0, SEEK_SET);
	return mfd;
fail:
	psock_say("exec: connections not kept: %s", strerror(errno));
	if (mfd >= 0)
		sys_close(mfd);
	psock_unlock();
	return -1;
}

/* The exec failed: we go on as before. */
static void exec_undo(int mfd)
{
	int e = errno;
	ps_port_t *port = psock_port_now();

	if (port)
		sys_fcntl(ps_port_poll_fd(port), F_SETFD, FD_CLOEXEC);
	sys_close(mfd);
	psock_unlock();
	errno = e;
}

static struct psock_conn *read_conn(int mfd)
{
	struct psock_conn *c = malloc(sizeof(*c));
	uint32_t n;

	if (!c || !get(mfd, c, sizeof(*c)) || !get(mfd, &n, sizeof(n)) ||
	    c->id >= (1u << 20)) {
		free(c);
		return NULL;
	}
	c->head = c->tail = NULL;
	c->refs = 0;
	c->opts_gen = 0;	/* another image: ask the kernel */
	while (n--) {
		struct exec_chunk e;
		struct psock_chunk *k;

		if (!get(mfd, &e, sizeof(e)) || e.len > PSOCK_WINDOW * 4 ||
		    e.off > e.len || !(k = psock_chunk_new(e.len)))
			goto fail;
		if (!get(mfd, k->data, e.len)) {
			psock_chunk_done(k);
			goto fail;
		}
		k->off = e.off;
		k->src_node = e.src_node;
		k->src_port = e.src_port;
		k->src_lo = e.src_lo;
		if (c->tail)
			c->tail->next = k;
		else
			c->head = k;
		c->tail = k;
	}
	return c;
fail:
	while (c->head) {
		struct psock_chunk *k = c->head;

		c->head = k->next;
		psock_chunk_done(k);
	}
	free(c);
	return NULL;
}

void psock_exec_resume(void)
{
	const char *env = getenv(EXEC_ENV);
	struct exec_head h;
	struct stat st;
	ps_port_t *port;
	int mfd = -1, pid = 0;

	if (!env)
		return;
	/* ours only if this process wrote it (not a grandchild's, after an
	 * image without the library), and a memfd still */
	if (sscanf(env, "%d:%d", &pid, &mfd) != 2 || pid != getpid() ||
	    mfd < 0 || fstat(mfd, &st) || !S_ISREG(st.st_mode)) {
		unsetenv(EXEC_ENV);
		return;
	}
	unsetenv(EXEC_ENV);
	if (!get(mfd, &h, sizeof(h)) || h.magic != EXEC_MAGIC ||
	    h.conn_size != sizeof(struct psock_conn)) {
		psock_say("exec: no state in memfd %d", mfd);
		sys_close(mfd);
		return;
	}
	h.nic[sizeof(h.nic) - 1] = 0;
	setenv("PS_HAL", h.nic, 1);	/* the same NIC as before */
	psock_lock();
	port = ps_port_resume(h.port_id);
	sys_close(h.nic_fd);
	if (!port) {
		psock_say("exec: port %d not ours any more: %s", h.port_id,
			  strerror(errno));
		goto out;
	}
	psock_port_resumed(port, h.port_shared);
	for (uint32_t i = 0; i < h.nconns; i++) {
		struct psock_conn *c = read_conn(mfd);

		if (!c || !psock_conn_place(c)) {
			psock_say("exec: a connection is lost");
			free(c);
			goto out;
		}
	}
	for (uint32_t i = 0; i < h.nfds; i++) {
		struct exec_fd e;

		if (!get(mfd, &e, sizeof(e)))
			break;
		if (psock_conn_at(e.id))
			psock_fd_set(e.fd, psock_conn_at(e.id));
	}
	psock_say("exec: port %d and %u connections kept", h.port_id,
		  h.nconns);
out:
	psock_unlock();
	sys_close(mfd);
}

/* envp with EXEC_ENV=mfd in place of any EXEC_ENV it has; NULL no memory */
static char **env_with(char *const envp[], int mfd, char *var, size_t size)
{
	size_t n = 0, k = 0;
	char **e;

	while (envp && envp[n])
		n++;
	e = malloc((n + 2) * sizeof(*e));
	if (!e)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(envp[i], EXEC_ENV "=", sizeof(EXEC_ENV)))
			e[k++] = envp[i];
	snprintf(var, size, "%s=%d:%d", EXEC_ENV, getpid(), mfd);
	e[k++] = var;
	e[k] = NULL;
	return e;
}

typedef int exec_fn(const void *what, char *const argv[], char *const envp[]);

static int exec_kept(exec_fn *fn, const void *what, char *const argv[],
		     char *const envp[])
{
	char var[48], **e;
	int mfd, ret;

	/* a vfork child would leave the lock and the state of its parent,
	 * whose memory it shares, as an exec leaves them: it keeps nothing */
	if (psock_vfork_child())
		return fn(what, argv, envp);
	/* handlers deferred meanwhile run (the lock given up) and the state
	 * is saved again: they may have used the library */
	while ((mfd = exec_save()) >= 0 && psock_lock_deferred())
		exec_undo(mfd);
	if (mfd < 0)
		return fn(what, argv, envp);
	e = env_with(envp, mfd, var, sizeof(var));
	if (!e) {
		exec_undo(mfd);
		errno = ENOMEM;
		return -1;
	}
	psock_lock_exec(true);
	ret = fn(what, argv, e);
	psock_lock_exec(false);
	free(e);
	exec_undo(mfd);
	return ret;
}

static int by_path(const void *path, char *const argv[], char *const envp[])
{
	return syscall(SYS_execve, path, argv, envp);
}

static int by_name(const void *file, char *const argv[], char *const envp[])
{
	static int (*real)(const char *, char *const[], char *const[]);

	if (!real)
		real = dlsym(RTLD_NEXT, "execvpe");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	return real(file, argv, envp);	/* the PATH search, then execve */
}

static int by_fd(const void *fd, char *const argv[], char *const envp[])
{
	return syscall(SYS_execveat, *(const int *)fd, "", argv, envp,
		       AT_EMPTY_PATH);
}

API int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_kept(by_path, path, argv, envp);
}

API int execv(const char *path, char *const argv[])
{
	return exec_kept(by_path, path, argv, environ);
}

API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_kept(by_name, file, argv, envp);
}

API int execvp(const char *file, char *const argv[])
{
	return exec_kept(by_name, file, argv, environ);
}

API int fexecve(int fd, char *const argv[], char *const envp[])
{
	return exec_kept(by_fd, &fd, argv, envp);
}

/* execl and friends: the arguments into an array first (arg0 NULL: an
 * empty argv); execle's envp follows the NULL that ends them */
static char **args_of(const char *arg0, va_list ap, char *const **envp)
{
	size_t n = 0;
	char **argv;
	va_list aq;

	if (arg0) {
		va_copy(aq, ap);
		for (n = 1; va_arg(aq, char *); n++)
			;
		va_end(aq);
	}
	argv = malloc((n + 1) * sizeof(*argv));
	if (!argv)
		return NULL;
	if (n)
		argv[0] = (char *)arg0;
	for (size_t i = 1; i < n; i++)
		argv[i] = va_arg(ap, char *);
	argv[n] = NULL;
	if (n)
		(void)va_arg(ap, char *);
	if (envp)
		*envp = va_arg(ap, char *const *);
	return argv;
}

#define EXECL(name, fn, env_in_args)					\
API int name(const char *what, const char *arg0, ...)			\
{									\
	char *const *envp = environ;					\
	va_list ap;							\
	char **argv;							\
	int ret;							\
									\
	va_start(ap, arg0);						\
	argv = args_of(arg0, ap, env_in_args ? &envp : NULL);		\
	va_end(ap);							\
	if (!argv) {							\
		errno = ENOMEM;						\
		return -1;						\
	}								\
	ret = exec_kept(fn, what, argv, envp);				\
	free(argv);							\
	return ret;							\
}

EXECL(execl, by_path, false)
EXECL(execlp, by_name, false)
EXECL(execle, by_path, true)
