// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * psocktest: the socket calls that programs rely on, between two nodes,
 * so that one run on the kernel and one under psrun (ParaStation sockets,
 * docs/psock.md) can be compared line by line: every line prints only
 * what the kernel's semantics fix (return values, errno names, byte
 * counts, checksums), never addresses, ports or times.
 *
 *   psocktest server PORT             serve cases until killed ("death"
 *                                     ends it)
 *   psocktest client HOST PORT [CASE...]
 *
 * Cases: echo bulk nonblock peek halfclose iov poll dup names errors
 * refused epoll fork bound udp opts exec daemon death idle signal threads
 * nodedeath sigstorm spin earlyclose timewait forkserve (the default:
 * all but death, idle and nodedeath).
 * "fork": the server forks a child to serve what it accepts
 * on PORT + 2, before either touches the connection (a forking server's
 * usual way).  "exec": a child of the client execs this program
 * ("psocktest exec-child FD") in the middle of a connection.  "daemon": a
 * child of the client forks in the middle of a connection and exits; its
 * child goes on.  "idle": the client holds a connection and sleeps in
 * poll() on it and its stdin until stdin ends (tests/cluster/psock.sh
 * counts its wakes beside a busy program).  "threads": a thread blocked
 * in a read while another writes on the same socket.  "nodedeath": the
 * server writes 100 bytes and waits for ever; the client reads them, says
 * so, and waits for the end (tests/cluster/psock.sh restarts the server's
 * node meanwhile).  "sigstorm": a thread signals the main one, one
 * signal at a time, while it echoes small writes.  "spin": the client
 * waits for each echo in poll() and epoll_wait() without a timeout, over
 * and over, as Open MPI's progress loop does.  "earlyclose": the client
 * closes a connection without reading anything (its server wrote
 * nothing); the server then reads the end and asks getpeername(), and
 * says what it got on a second connection.  "timewait": connections
 * that end in each way a program ends one (see enum tw_mode); each side
 * then reads its kernel's state of the connection in /proc/net/tcp: the
 * side that closed first keeps TIME_WAIT.  "forkserve": FORKSERVE_ROUNDS
 * times, a request on a new connection (to PORT + 4) that the server's
 * child serves as qperf's does: the parent, which has not touched it,
 * closes its copy and waits for the child, the
 * child sends the port of a new listener and waits in accept() for the
 * client's data connection (both outside the library while the client
 * reads).  A case starts with
 * one byte, its number, which the client writes before it reads
 * anything.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/check.h"
#include "common/clock.h"

static const char *const cases[] = {
	"echo", "bulk", "nonblock", "peek", "halfclose", "iov", "poll", "dup",
	"names", "errors", "refused", "epoll", "fork", "bound", "udp", "opts",
	"exec", "daemon", "death", "idle", "signal", "threads", "nodedeath",
	"sigstorm", "spin", "earlyclose", "timewait", "forkserve",
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))
#define BULK (4u << 20)

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "0";
	case EAGAIN: return "EAGAIN";
	case EBADF: return "EBADF";
	case ENOTSOCK: return "ENOTSOCK";
	case ENOTCONN: return "ENOTCONN";
	case EPIPE: return "EPIPE";
	case ECONNRESET: return "ECONNRESET";
	case ECONNREFUSED: return "ECONNREFUSED";
	case EINPROGRESS: return "EINPROGRESS";
	case EINVAL: return "EINVAL";
	case ENOPROTOOPT: return "ENOPROTOOPT";
	case EMSGSIZE: return "EMSGSIZE";
	default: return strerror(e);
	}
}

static uint8_t pat(size_t i, unsigned int seed)
{
	return (uint8_t)(i * 131 + seed * 7 + (i >> 8));
}

static void fill(uint8_t *b, size_t n, size_t at, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(at + i, seed);
}

static int read_all(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r <= 0)
			return r == 0 ? 0 : -1;
		got += r;
	}
	return 1;
}

static int write_all(int fd, const void *buf, size_t n)
{
	size_t put = 0;

	while (put < n) {
		ssize_t w = write(fd, (const char *)buf + put, n - put);

		if (w <= 0)
			return -1;
		put += w;
	}
	return 0;
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- the server's side of each case ---- */

static void serve_echo(int fd)
{
	static uint8_t buf[300000];
	uint32_t len;

	while (read_all(fd, &len, 4) == 1 && len && len <= sizeof(buf) &&
	       read_all(fd, buf, len) == 1)
		write_all(fd, buf, len);
}

static void serve_bulk(int fd)
{
	static uint8_t buf[65536];
	uint64_t sum = 0, got = 0;
	size_t i;

	while (got < BULK) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r <= 0)
			return;
		for (i = 0; i < (size_t)r; i++)
			sum = sum * 31 + buf[i];
		got += r;
	}
	write_all(fd, &sum, sizeof(sum));
	for (got = 0; got < BULK; got += sizeof(buf)) {
		fill(buf, sizeof(buf), got, 3);
		if (write_all(fd, buf, sizeof(buf)))
			return;
	}
}

/* up to the largest IPv4 datagram (65535 - 20 - 8 bytes) */
#define UDP_MAX	65507
static const size_t udp_sizes[] = { 1, 100, 1400, 8000, 60000, UDP_MAX };
#define UDP_SIZES (sizeof(udp_sizes) / sizeof(udp_sizes[0]))

/* udp: a socket on any port, named over the stream; echo each datagram */
static void serve_udp(int fd)
{
	static uint8_t buf[65536];
	struct sockaddr_in a = { .sin_family = AF_INET }, from;
	socklen_t len = sizeof(a);
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	uint16_t port;

	if (u < 0 || bind(u, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(u, (struct sockaddr *)&a, &len))
		return;
	port = a.sin_port;
	write_all(fd, &port, sizeof(port));
	for (size_t k = 0; k < UDP_SIZES; k++) {
		struct pollfd p = { .fd = u, .events = POLLIN };
		ssize_t n;

		len = sizeof(from);
		if (poll(&p, 1, 10000) != 1)
			break;
		n = recvfrom(u, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			     &len);
		if (n < 0)
			break;
		sendto(u, buf, n, 0, (struct sockaddr *)&from, len);
	}
	read_all(fd, buf, 1);
	close(u);
}

static void serve_peer_names(int fd)
{
	struct sockaddr_storage a[2], mine, theirs;
	socklen_t l = sizeof(mine), l2 = sizeof(theirs);
	uint8_t same;

	if (read_all(fd, a, sizeof(a)) != 1)
		return;
	getsockname(fd, (struct sockaddr *)&mine, &l);
	getpeername(fd, (struct sockaddr *)&theirs, &l2);
	/* the client's own name is our peer; its peer name is our name */
	same = !memcmp(&a[0], &theirs, l2) && !memcmp(&a[1], &mine, l);
	write_all(fd, &same, 1);
}

/*
 * earlyclose: the first connection's client closes without reading; what
 * a read and getpeername() then say is written on the second.
 */
static void serve_early_close(int fd)
{
	static char report[96];
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	uint8_t b;
	ssize_t n;
	int rn, rp;

	if (report[0]) {
		write_all(fd, report, sizeof(report));
		report[0] = 0;
		return;
	}
	msleep(400);
	n = read(fd, &b, 1);
	rn = n < 0 ? errno : 0;
	rp = getpeername(fd, (struct sockaddr *)&a, &len) ? errno : 0;
	snprintf(report, sizeof(report), "read %zd %s, getpeername %s", n,
		 err_name(rn), err_name(rp));
}

/*
 * timewait: the ways a connection ends.  The kernel keeps TIME_WAIT on
 * the side whose FIN went first; a server that has it cannot bind its
 * port again at once without SO_REUSEADDR.
 */
enum tw_mode {
	TW_CLIENT_CLOSE,	/* the client closes, then the server */
	TW_SERVER_CLOSE,	/* the server closes, then the client */
	TW_SHUTDOWN,		/* the client shuts down its side first */
	TW_EXIT,		/* a client process exits without close() */
	TW_FORKED,		/* the client's child, sharing it, closes last */
	TW_BOTH,		/* both close as soon as they have the byte */
	TW_MODES,
	TW_REPORT = 255,	/* the server's states of the earlier ones */
};

static const char *const tw_names[TW_MODES] = {
	"the client closes first", "the server closes first",
	"the client shuts down first", "the client exits without close",
	"the client's forked child closes last", "both close at once",
};

#define TW_STATE_LEN	16

/* A connection as /proc/net/tcp names it: local, then remote */
struct tw_tuple {
	uint32_t addr[2];
	uint16_t port[2];
};

static int tw_tuple_of(int fd, struct tw_tuple *t)
{
	struct sockaddr_in a[2];
	socklen_t l0 = sizeof(a[0]), l1 = sizeof(a[1]);

	if (getsockname(fd, (struct sockaddr *)&a[0], &l0) ||
	    getpeername(fd, (struct sockaddr *)&a[1], &l1))
		return -1;
	for (int i = 0; i < 2; i++) {
		t->addr[i] = a[i].sin_addr.s_addr;
		t->port[i] = ntohs(a[i].sin_port);
	}
	return 0;
}

/* The kernel's state of t (a /proc/net/tcp code), 0 if it has none */
static unsigned int tw_state_now(const struct tw_tuple *t)
{
	FILE *f = fopen("/proc/net/tcp", "r");
	char line[256];
	unsigned int st = 0, la, lp, ra, rp, s;

	if (!f)
		return 0;
	while (!st && fgets(line, sizeof(line), f))
		if (sscanf(line, " %*u: %x:%x %x:%x %x", &la, &lp, &ra, &rp,
			   &s) == 5 && la == t->addr[0] && lp == t->port[0] &&
		    ra == t->addr[1] && rp == t->port[1])
			st = s;
	fclose(f);
	return st;
}

/* Its state once the end has settled: TIME_WAIT or gone ("closed"), or
 * where it stuck after 5 s */
static const char *tw_state(const struct tw_tuple *t)
{
	static const char *const names[] = {
		"closed", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1",
		"FIN_WAIT2", "TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK",
		"LISTEN", "CLOSING",
	};
	unsigned int st = 0;

	for (int i = 0; i < 250; i++) {
		st = tw_state_now(t);
		if (st == 0 || st == 6)
			break;
		msleep(20);
	}
	return st < sizeof(names) / sizeof(names[0]) ? names[st] : "?";
}

static void serve_timewait(int fd)
{
	static struct tw_tuple seen[TW_MODES];
	static bool have[TW_MODES];
	char report[TW_MODES][TW_STATE_LEN] = { { 0 } };
	uint8_t m, b;

	if (read_all(fd, &m, 1) != 1)
		return;
	if (m == TW_REPORT) {
		for (int i = 0; i < TW_MODES; i++)
			snprintf(report[i], TW_STATE_LEN, "%s",
				 have[i] ? tw_state(&seen[i]) : "none");
		write_all(fd, report, sizeof(report));
		memset(have, 0, sizeof(have));
		return;
	}
	if (m >= TW_MODES)
		return;
	have[m] = !tw_tuple_of(fd, &seen[m]);
	write_all(fd, "k", 1);
	if (m == TW_SERVER_CLOSE || m == TW_BOTH)
		return;			/* serve() closes it */
	while (read(fd, &b, 1) > 0)	/* the client's end first */
		;
}

static void serve(int fd, unsigned int c)
{
	uint8_t buf[4096];
	ssize_t n;

	switch (c) {
	case 0:
		serve_echo(fd);
		break;
	case 1:
		serve_bulk(fd);
		break;
	case 2:		/* nonblock: answer "go" with 5 bytes */
		if (read_all(fd, buf, 2) == 1)
			write_all(fd, "hello", 5);
		break;
	case 3:		/* peek: 10 bytes, a pause, 90 more */
		fill(buf, 100, 0, 4);
		write_all(fd, buf, 10);
		msleep(300);
		write_all(fd, buf + 10, 90);
		read_all(fd, buf, 1);
		break;
	case 4: {	/* halfclose: count to EOF, answer, close */
		uint32_t got = 0;

		while ((n = read(fd, buf, sizeof(buf))) > 0)
			got += n;
		fill(buf, 500, got, 5);
		write_all(fd, buf, 500);
		break;
	}
	case 5:		/* iov: echo 4014 bytes */
		if (read_all(fd, buf, 4014) == 1)
			write_all(fd, buf, 4014);
		break;
	case 6:		/* poll, epoll: "s" asks for one byte */
	case 11:
		while (read_all(fd, buf, 1) == 1 && buf[0] == 's') {
			msleep(100);
			write_all(fd, "x", 1);
		}
		break;
	case 16:	/* exec: 3000 bytes first, then as dup */
		fill(buf, 3000, 0, 11);
		write_all(fd, buf, 3000);
		/* fall through */
	case 7:		/* dup, bound, opts, daemon, idle: echo until EOF */
	case 13:
	case 15:
	case 17:
	case 19:
	case 20:	/* signal */
	case 21:	/* threads */
	case 23:	/* sigstorm */
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			write_all(fd, buf, n);
		break;
	case 24:	/* spin: echo each write after a pause */
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			msleep(2);
			write_all(fd, buf, n);
		}
		break;
	case 8:
		serve_peer_names(fd);
		break;
	case 14:
		serve_udp(fd);
		break;
	case 22:	/* nodedeath: 100 bytes, then wait for the end */
		fill(buf, 100, 0, 22);
		write_all(fd, buf, 100);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		break;
	case 25:	/* earlyclose: its report on the next connection */
		serve_early_close(fd);
		break;
	case 26:
		serve_timewait(fd);
		break;
	case 18:	/* death: 100 bytes, then this process dies */
		fill(buf, 100, 0, 6);
		write_all(fd, buf, 100);
		msleep(200);
		_exit(3);
	}
}

static int listener(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port) };
	int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);

	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 16)) {
		perror("psocktest server");
		exit(1);
	}
	return s;
}

/* forkserve: as qperf's server, a child per request; see the top */
#define FORKSERVE_ROUNDS	200
#define FORKSERVE_WRITES	16

static void serve_forkserve(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	uint8_t buf[512];
	uint16_t port;
	int l, d = -1;
	pid_t pid = fork();

	if (pid == 0) {
		l = listener(0);
		if (read_all(fd, buf, 1) == 1 &&
		    !getsockname(l, (struct sockaddr *)&a, &len)) {
			port = a.sin_port;
			if (!write_all(fd, &port, sizeof(port)))
				d = accept(l, NULL, NULL);
		}
		close(l);
		for (int i = 0; d >= 0 && i < FORKSERVE_WRITES; i++)
			if (read_all(d, buf, sizeof(buf)) != 1 ||
			    write_all(d, buf, sizeof(buf)))
				break;
		while (d >= 0 && read(d, buf, 1) > 0)	/* its end */
			;
		_exit(0);
	}
	close(fd);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* "fork": a child serves the new connection (echo), the parent closes */
static void serve_forked(int fd)
{
	uint8_t buf[4096], c;
	ssize_t n;

	if (fork() == 0) {
		if (read_all(fd, &c, 1) == 1)
			while ((n = read(fd, buf, sizeof(buf))) > 0)
				write_all(fd, buf, n);
		_exit(0);
	}
}

static __attribute__((noreturn)) void server(int port)
{
	struct pollfd l[3] = { { .fd = listener(port), .events = POLLIN },
			       { .fd = listener(port + 2), .events = POLLIN },
			       { .fd = listener(port + 4), .events = POLLIN } };

	signal(SIGCHLD, SIG_IGN);	/* the "fork" case's children */
	printf("listening on %d\n", port);
	fflush(stdout);
	for (;;) {
		int fd;
		uint8_t c;

		if (poll(l, 3, -1) < 1)
			continue;
		if (l[2].revents) {	/* forkserve: unread, to a child */
			fd = accept(l[2].fd, NULL, NULL);
			if (fd >= 0)
				serve_forkserve(fd);	/* closes it */
			continue;
		}
		if (l[1].revents) {
			fd = accept(l[1].fd, NULL, NULL);
			if (fd >= 0) {
				serve_forked(fd);
				close(fd);
			}
			continue;
		}
		fd = accept(l[0].fd, NULL, NULL);
		if (fd < 0)
			continue;
		if (read_all(fd, &c, 1) == 1 && c < NCASES)
			serve(fd, c);
		close(fd);
	}
}

/* ---- the client's side ---- */

static struct sockaddr_in peer;

static int dial(unsigned int c, int flags)
{
	int fd = socket(AF_INET, SOCK_STREAM | flags, 0);
	struct sockaddr_in to = peer;
	uint8_t b = c;

	if (fd < 0)
		return -1;
	if (!strcmp(cases[c], "fork"))
		to.sin_port = htons(ntohs(peer.sin_port) + 2);
	if (!strcmp(cases[c], "forkserve"))
		to.sin_port = htons(ntohs(peer.sin_port) + 4);
	if (connect(fd, (struct sockaddr *)&to, sizeof(to)) &&
	    errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	if (!flags && write_all(fd, &b, 1)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void case_echo(int fd)
{
	static const uint32_t sizes[] = { 1, 7, 492, 493, 4096, 65536, 65537,
					  300000 };
	static uint8_t out[300000], in[300000];
	size_t bytes = 0, bad = 0;

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t n = sizes[k];

		fill(out, n, k, 1);
		if (write_all(fd, &n, 4) || write_all(fd, out, n) ||
		    read_all(fd, in, n) != 1 || memcmp(in, out, n))
			bad++;
		bytes += n;
	}
	CHECK(!bad, "echo: 8 sizes from 1 to 300000 bytes, %zu bytes, %zu "
	      "wrong", bytes, bad);
}

static void case_bulk(int fd)
{
	static uint8_t buf[65536];
	uint64_t sum = 0, theirs = 0;
	size_t got = 0, bad = 0;

	for (size_t at = 0; at < BULK; at += sizeof(buf)) {
		fill(buf, sizeof(buf), at, 2);
		for (size_t i = 0; i < sizeof(buf); i++)
			sum = sum * 31 + buf[i];
		if (write_all(fd, buf, sizeof(buf)))
			break;
	}
	CHECK(read_all(fd, &theirs, 8) == 1 && theirs == sum,
	      "bulk: 4 MiB to the server, its checksum matches");
	while (got < BULK) {
		ssize_t r = read(fd, buf, 1000);	/* odd reads */

		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++)
			bad += buf[i] != pat(got + i, 3);
		got += r;
	}
	CHECK(got == BULK && !bad, "bulk: 4 MiB from the server in reads of "
	      "1000 bytes, %zu wrong", bad);
}

static void case_nonblock(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int r = connect(fd, (struct sockaddr *)&peer, sizeof(peer));
	int e = r ? errno : 0, soerr = -1;
	socklen_t l = sizeof(soerr);
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	uint8_t b = 2;
	char buf[8];
	ssize_t n;

	CHECK(r == -1 && e == EINPROGRESS, "nonblock: connect: %d %s", r,
	      err_name(e));
	r = poll(&p, 1, 10000);
	CHECK(r == 1 && (p.revents & POLLOUT), "nonblock: poll POLLOUT: %d",
	      r);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l);
	CHECK(soerr == 0, "nonblock: SO_ERROR %d", soerr);
	write_all(fd, &b, 1);
	n = recv(fd, buf, sizeof(buf), 0);
	e = n < 0 ? errno : 0;
	CHECK(n == -1 && e == EAGAIN, "nonblock: recv with nothing there: "
	      "%zd %s", n, err_name(e));
	write(fd, "go", 2);
	p.events = POLLIN;
	r = poll(&p, 1, 10000);
	n = recv(fd, buf, sizeof(buf), 0);
	CHECK(r == 1 && n == 5 && !memcmp(buf, "hello", 5),
	      "nonblock: poll POLLIN %d, then recv %zd bytes", r, n);
	close(fd);
}

static void case_peek(int fd)
{
	uint8_t buf[100], want[100];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	fill(want, 100, 0, 4);
	poll(&p, 1, 10000);
	msleep(50);
	n = recv(fd, buf, sizeof(buf), MSG_PEEK);
	CHECK(n == 10 && !memcmp(buf, want, 10), "peek: MSG_PEEK sees the "
	      "first %zd bytes", n);
	n = recv(fd, buf, sizeof(buf), MSG_WAITALL);
	CHECK(n == 100 && !memcmp(buf, want, 100), "peek: MSG_WAITALL waits "
	      "for all: %zd bytes", n);
	write_all(fd, "k", 1);
}

static void case_halfclose(int fd)
{
	uint8_t buf[1000], want[500];
	ssize_t n, got = 0;
	int e;

	fill(buf, sizeof(buf), 0, 9);
	write_all(fd, buf, sizeof(buf));
	CHECK(shutdown(fd, SHUT_WR) == 0, "halfclose: shutdown(SHUT_WR)");
	n = send(fd, buf, 10, MSG_NOSIGNAL);
	e = n < 0 ? errno : 0;
	CHECK(n == -1 && e == EPIPE, "halfclose: send after it: %zd %s", n,
	      err_name(e));
	while ((n = read(fd, buf + got, sizeof(buf) - got)) > 0)
		got += n;
	fill(want, 500, 1000, 5);
	CHECK(n == 0 && got == 500 && !memcmp(buf, want, 500),
	      "halfclose: the answer, %zd bytes, then EOF (%zd)", got, n);
}

static void case_iov(int fd)
{
	static uint8_t a[1], b[13], c[4000], x[5], y[3000], z[1009];
	struct iovec out[3] = { { a, 1 }, { b, 13 }, { c, 4000 } };
	struct iovec in[3] = { { x, 5 }, { y, 3000 }, { z, 1009 } };
	uint8_t all[4014], back[4014];
	ssize_t n, got = 0;

	fill(a, 1, 0, 7);
	fill(b, 13, 1, 7);
	fill(c, 4000, 14, 7);
	fill(all, 4014, 0, 7);
	n = writev(fd, out, 3);
	CHECK(n == 4014, "iov: writev of 1 + 13 + 4000 bytes: %zd", n);
	while (got < 4014 && (n = readv(fd, in, 3)) > 0) {
		memcpy(back + got, x, n < 5 ? n : 5);
		if (n > 5)
			memcpy(back + got + 5, y, n - 5 < 3000 ? n - 5 : 3000);
		if (n > 3005)
			memcpy(back + got + 3005, z, n - 3005);
		got += n;
		if (got < 4014)		/* the rest lands at the start */
			break;
	}
	if (got < 4014)
		got += read_all(fd, back + got, 4014 - got) == 1 ? 4014 - got : 0;
	CHECK(got == 4014 && !memcmp(all, back, 4014),
	      "iov: readv into 5 + 3000 + 1009 bytes gets them back");
}

/*
 * The socket has a byte to read; the pipe gets one.  Repeated looks
 * without a wait, as a program that spins does, report the pipe too: the
 * library may leave the kernel out while the socket is ready, for a while
 * (docs/psock.md, "Waiting"), never for good.
 */
static void both_ready(int fd, int pipefd[2])
{
	struct pollfd p[2] = { { .fd = pipefd[0], .events = POLLIN },
			       { .fd = fd, .events = POLLIN } };
	struct timeval tv = { 0, 0 };
	int calls, r = 0, seen = 0;
	fd_set rs;
	char b;

	/* the same set asked once before: the library may leave the
	 * kernel out of the looks that follow */
	r = poll(p, 2, 0);
	write(pipefd[1], "p", 1);
	for (calls = 1; calls <= 1000 && r != 2; calls++) {
		r = poll(p, 2, 0);
		if (r < 0 || !(p[1].revents & POLLIN))
			break;
		if (r != 2)
			usleep(1000);
	}
	CHECK(r == 2 && p[0].revents == POLLIN && p[1].revents == POLLIN,
	      "poll: the pipe and the socket ready: looks without a wait report both, the pipe within 1000");
	read(pipefd[0], &b, 1);
	FD_ZERO(&rs);
	FD_SET(fd, &rs);
	FD_SET(pipefd[0], &rs);
	select((fd > pipefd[0] ? fd : pipefd[0]) + 1, &rs, NULL, NULL, &tv);
	write(pipefd[1], "p", 1);
	for (calls = 1; calls <= 1000 && seen != 2; calls++) {
		FD_ZERO(&rs);
		FD_SET(fd, &rs);
		FD_SET(pipefd[0], &rs);
		tv = (struct timeval){ 0, 0 };
		r = select((fd > pipefd[0] ? fd : pipefd[0]) + 1, &rs, NULL,
			   NULL, &tv);
		if (r < 0 || !FD_ISSET(fd, &rs))
			break;
		seen = r;
		if (r != 2)
			usleep(1000);
	}
	CHECK(seen == 2 && FD_ISSET(pipefd[0], &rs) && !tv.tv_usec,
	      "select: the same with a timeout of 0, which stays 0");
	read(pipefd[0], &b, 1);
}

static void case_poll(int fd)
{
	struct pollfd p[2] = { { .events = POLLIN }, { .fd = fd,
						       .events = POLLIN } };
	int pipefd[2], r;
	struct timeval tv = { 0, 50000 };
	fd_set rs;
	char b;

	if (pipe(pipefd))
		return;
	p[0].fd = pipefd[0];
	r = poll(p, 2, 0);
	CHECK(r == 0, "poll: a pipe and the socket, nothing ready: %d", r);
	write(pipefd[1], "p", 1);
	r = poll(p, 2, 1000);
	CHECK(r == 1 && p[0].revents == POLLIN && !p[1].revents,
	      "poll: the pipe written: %d ready, pipe %#x socket %#x", r,
	      p[0].revents, p[1].revents);
	read(pipefd[0], &b, 1);
	write_all(fd, "s", 1);
	r = poll(p, 2, 5000);
	CHECK(r == 1 && !p[0].revents && p[1].revents == POLLIN,
	      "poll: the server wrote: %d ready, pipe %#x socket %#x", r,
	      p[0].revents, p[1].revents);
	read(fd, &b, 1);
	FD_ZERO(&rs);
	FD_SET(fd, &rs);
	FD_SET(pipefd[0], &rs);
	r = select((fd > pipefd[0] ? fd : pipefd[0]) + 1, &rs, NULL, NULL,
		   &tv);
	CHECK(r == 0 && tv.tv_sec == 0 && tv.tv_usec == 0,
	      "select: nothing within 50 ms: %d, the time left is 0", r);
	write_all(fd, "s", 1);
	FD_SET(fd, &rs);
	FD_SET(pipefd[0], &rs);
	tv.tv_sec = 5;
	r = select((fd > pipefd[0] ? fd : pipefd[0]) + 1, &rs, NULL, NULL,
		   &tv);
	CHECK(r == 1 && FD_ISSET(fd, &rs) && !FD_ISSET(pipefd[0], &rs),
	      "select: the socket is ready: %d", r);
	both_ready(fd, pipefd);
	read(fd, &b, 1);
	write_all(fd, "q", 1);
	close(pipefd[0]);
	close(pipefd[1]);
}

static void case_epoll(int fd)
{
	struct epoll_event ev, got[4];
	int ep = epoll_create1(EPOLL_CLOEXEC), pipefd[2], r;
	char b, two[2];

	if (ep < 0 || pipe(pipefd))
		return;
	ev = (struct epoll_event){ .events = EPOLLIN, .data.u64 = 7 };
	epoll_ctl(ep, EPOLL_CTL_ADD, pipefd[0], &ev);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.u64 = 9 };
	r = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	CHECK(r == 0, "epoll: add the socket and a pipe: %d", r);
	r = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	CHECK(r == -1 && errno == EEXIST, "epoll: add it twice: %s",
	      err_name(errno));
	r = epoll_wait(ep, got, 4, 0);
	CHECK(r == 0, "epoll: nothing ready: %d", r);
	write(pipefd[1], "p", 1);
	r = epoll_wait(ep, got, 4, 1000);
	CHECK(r == 1 && got[0].data.u64 == 7, "epoll: the pipe: %d", r);
	read(pipefd[0], &b, 1);
	write_all(fd, "s", 1);
	r = epoll_wait(ep, got, 4, 5000);
	CHECK(r == 1 && got[0].data.u64 == 9 && got[0].events == EPOLLIN,
	      "epoll: the socket, its data kept: %d", r);
	r = epoll_wait(ep, got, 4, 0);
	CHECK(r == 1, "epoll: level-triggered, again while unread: %d", r);
	read(fd, &b, 1);
	ev = (struct epoll_event){ .events = EPOLLIN | EPOLLET, .data.u64 = 10 };
	epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
	write_all(fd, "s", 1);
	r = epoll_wait(ep, got, 4, 5000);
	CHECK(r == 1 && got[0].data.u64 == 10 && got[0].events == EPOLLIN,
	      "epoll: edge-triggered, the socket: %d", r);
	r = epoll_wait(ep, got, 4, 0);
	CHECK(r == 0, "epoll: edge-triggered, not again while unread: %d", r);
	write_all(fd, "s", 1);
	r = epoll_wait(ep, got, 4, 5000);
	CHECK(r == 1 && got[0].data.u64 == 10,
	      "epoll: edge-triggered, again for new bytes, the old unread: %d",
	      r);
	r = read_all(fd, two, 2);
	r = r == 1 ? epoll_wait(ep, got, 4, 100) : -2;
	CHECK(r == 0, "epoll: edge-triggered, read to the end, then nothing: %d",
	      r);
	ev = (struct epoll_event){ .events = EPOLLIN | EPOLLONESHOT,
				   .data.u64 = 11 };
	epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
	write_all(fd, "s", 1);
	r = epoll_wait(ep, got, 4, 5000);
	CHECK(r == 1 && got[0].data.u64 == 11, "epoll: one-shot: %d", r);
	r = epoll_wait(ep, got, 4, 100);
	CHECK(r == 0, "epoll: one-shot, not again: %d", r);
	read(fd, &b, 1);
	r = epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	r |= epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL) == -1 && errno == ENOENT
		     ? 0 : 1;
	CHECK(r == 0, "epoll: delete, then ENOENT");
	write_all(fd, "q", 1);
	close(ep);
	close(pipefd[0]);
	close(pipefd[1]);
}

static void case_fork(int fd)
{
	static uint8_t out[100000], in[100000];
	int bad = 0;

	for (int k = 0; k < 3; k++) {
		fill(out, sizeof(out), k, 8);
		if (write_all(fd, out, sizeof(out)) ||
		    read_all(fd, in, sizeof(in)) != 1 ||
		    memcmp(in, out, sizeof(out)))
			bad++;
	}
	CHECK(!bad, "fork: a child of the server echoes 3 x 100000 bytes, "
	      "%d wrong", bad);
}

/* bound: the client binds to any address and port 0 first, as MPI does */
static void case_bound(void)
{
	struct sockaddr_in any = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0), r;
	uint8_t b = 13, out[1000], in[1000];

	r = bind(fd, (struct sockaddr *)&any, sizeof(any));
	CHECK(r == 0, "bound: bind to any address, port 0: %d", r);
	r = connect(fd, (struct sockaddr *)&peer, sizeof(peer));
	fill(out, sizeof(out), 0, 10);
	CHECK(r == 0 && !write_all(fd, &b, 1) &&
	      !write_all(fd, out, sizeof(out)) &&
	      read_all(fd, in, sizeof(in)) == 1 && !memcmp(in, out, sizeof(in)),
	      "bound: connect, then 1000 bytes echoed");
	close(fd);
}

static void case_udp(int fd)
{
	static uint8_t out[65536], in[65536];
	struct sockaddr_in any = { .sin_family = AF_INET }, to = peer, from;
	int u = socket(AF_INET, SOCK_DGRAM, 0), bad = 0, other = 0;
	uint16_t port;

	if (read_all(fd, &port, sizeof(port)) != 1 ||
	    bind(u, (struct sockaddr *)&any, sizeof(any))) {
		CHECK(0, "udp: set-up");
		return;
	}
	to.sin_port = port;
	for (size_t k = 0; k < UDP_SIZES; k++) {
		struct pollfd p = { .fd = u, .events = POLLIN };
		socklen_t len = sizeof(from);
		ssize_t n;

		fill(out, udp_sizes[k], k, 11);
		sendto(u, out, udp_sizes[k], 0, (struct sockaddr *)&to,
		       sizeof(to));
		n = poll(&p, 1, 10000) == 1
		    ? recvfrom(u, in, sizeof(in), 0, (struct sockaddr *)&from,
			       &len) : -1;
		bad += n != (ssize_t)udp_sizes[k] ||
		       memcmp(in, out, udp_sizes[k]);
		other += n < 0 || len != sizeof(from) ||
			 from.sin_addr.s_addr != to.sin_addr.s_addr ||
			 from.sin_port != port;
	}
	CHECK(!bad && !other, "udp: %zu datagrams of 1 to %d bytes echoed, "
	      "%d wrong, %d from elsewhere", UDP_SIZES, UDP_MAX, bad, other);
	errno = 0;
	CHECK(sendto(u, out, UDP_MAX + 1, 0, (struct sockaddr *)&to,
		     sizeof(to)) == -1 && errno == EMSGSIZE,
	      "udp: %d bytes, one more than IPv4 carries: %s", UDP_MAX + 1,
	      err_name(errno));
	write_all(fd, "q", 1);
	close(u);
}

static void case_dup(int fd)
{
	int d = dup(fd), d2 = 40;
	char buf[16];
	ssize_t n;

	close(fd);
	write_all(d, "abc", 3);
	n = read(d, buf, sizeof(buf));
	CHECK(n == 3 && !memcmp(buf, "abc", 3), "dup: the copy works after "
	      "the original is closed: %zd", n);
	CHECK(dup2(d, d2) == d2, "dup2 onto descriptor 40");
	close(d);
	write_all(d2, "defg", 4);
	n = read(d2, buf, sizeof(buf));
	CHECK(n == 4 && !memcmp(buf, "defg", 4), "dup2: the new one works: "
	      "%zd", n);
	n = fcntl(d2, F_DUPFD_CLOEXEC, 50);
	close(d2);
	write_all(n, "h", 1);
	CHECK(read(n, buf, 1) == 1 && buf[0] == 'h', "fcntl(F_DUPFD_CLOEXEC) "
	      "gives %s", n >= 50 ? "50 or more" : "less than 50");
	close(n);
}

static void case_names(int fd)
{
	struct sockaddr_storage a[2];
	socklen_t l = sizeof(a[0]), l2 = sizeof(a[1]);
	uint8_t same = 0;

	memset(a, 0, sizeof(a));
	getsockname(fd, (struct sockaddr *)&a[0], &l);
	getpeername(fd, (struct sockaddr *)&a[1], &l2);
	write_all(fd, a, sizeof(a));
	CHECK(read_all(fd, &same, 1) == 1 && same,
	      "names: getsockname and getpeername agree with the server's");
}

static void case_errors(void)
{
	int p[2], s = socket(AF_INET, SOCK_STREAM, 0);
	char b;
	ssize_t n;

	n = read(-1, &b, 1);
	CHECK(n == -1 && errno == EBADF, "errors: read(-1): %s",
	      err_name(errno));
	if (pipe(p))
		return;
	n = recv(p[0], &b, 1, MSG_DONTWAIT);
	CHECK(n == -1 && errno == ENOTSOCK, "errors: recv on a pipe: %s",
	      err_name(errno));
	n = shutdown(s, SHUT_WR);
	CHECK(n == -1 && errno == ENOTCONN, "errors: shutdown, not "
	      "connected: %s", err_name(errno));
	close(p[0]);
	close(p[1]);
	close(s);
	CHECK(close(s) == -1 && errno == EBADF, "errors: close twice: %s",
	      err_name(errno));
}

static void case_refused(void)
{
	struct sockaddr_in a = peer;
	int fd = socket(AF_INET, SOCK_STREAM, 0), r, e;

	a.sin_port = htons(ntohs(peer.sin_port) + 1);
	r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	e = r ? errno : 0;
	CHECK(r == -1 && e == ECONNREFUSED, "refused: %d %s", r, err_name(e));
	close(fd);
}

/* Read what is there without waiting; whether the stream ended. */
static bool drain(int fd, uint8_t *buf, size_t room, ssize_t *got)
{
	ssize_t n;

	while ((size_t)*got < room && (n = read(fd, buf + *got,
						 room - *got)) > 0)
		*got += n;
	return (size_t)*got < room && (n == 0 || (n < 0 && errno == ECONNRESET));
}

/*
 * death: the server writes 100 bytes and dies.  The client waits in an
 * edge-triggered epoll_wait, reads without waiting, and is away 500 ms
 * after each read that found nothing: the end, once seen by a read that
 * could not report it yet (the library's grace for bytes still on their
 * way), must still come as an edge.
 */
static void case_death(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	uint8_t buf[200], want[100];
	int ep = epoll_create1(EPOLL_CLOEXEC);
	ssize_t got = 0;
	bool end = false;

	fill(want, 100, 0, 6);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) ||
	    fcntl(fd, F_SETFL, O_NONBLOCK))
		return;
	for (int i = 0; i < 20 && !end; i++) {
		if (epoll_wait(ep, &ev, 1, 5000) != 1)
			break;		/* an edge lost */
		end = drain(fd, buf, sizeof(buf), &got);
		if (!end) {
			msleep(500);
			end = drain(fd, buf, sizeof(buf), &got);
		}
		if (!end)
			msleep(500);
	}
	close(ep);
	CHECK(got == 100 && !memcmp(buf, want, 100) && end,
	      "death: 100 bytes, then the server dies: EOF or ECONNRESET, each come as an edge");
}

/* idle: asleep on the connection and stdin; nothing comes until stdin
 * ends */
static void case_idle(int fd)
{
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
			       { .fd = 0, .events = POLLIN } };
	int r;

	do
		r = poll(p, 2, -1);
	while (r < 0 && errno == EINTR);
	CHECK(r == 1 && !p[0].revents && p[1].revents,
	      "idle: asleep until stdin ended, the connection quiet");
}

/* 100 bytes to the echo and back, blocking reads (after which the
 * library holds the file's flags as the kernel said them) */
static bool echoed(int fd, int seed)
{
	uint8_t out[100], in[100];

	fill(out, sizeof(out), 0, seed);
	return !write_all(fd, out, sizeof(out)) &&
	       read_all(fd, in, sizeof(in)) == 1 &&
	       !memcmp(in, out, sizeof(in));
}

static int64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* opts: the options and descriptor flags programs set, read back */
static void case_opts(int fd)
{
	int one = 1, v = 0, fl = fcntl(fd, F_GETFL), r, n = -1;
	struct timeval tv = { 0, 300000 };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	socklen_t l = sizeof(v);
	uint8_t out[100], in[100];
	int64_t t0;
	char b;

	CHECK(!setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) &&
	      !getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &l) && v == 1,
	      "opts: TCP_NODELAY set and read back");
	CHECK(!setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) &&
	      !getsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &v, &l) && v == 1,
	      "opts: SO_REUSEADDR set and read back");
	v = 65536;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v));
	getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &l);
	CHECK(v >= 65536, "opts: SO_SNDBUF 65536 reads back as %d", v);
	v = 65536;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &l);
	CHECK(v >= 65536, "opts: SO_RCVBUF 65536 reads back as %d", v);
	CHECK(!getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l) && v == SOCK_STREAM,
	      "opts: SO_TYPE is SOCK_STREAM");
	CHECK(!getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &l) && v == 0,
	      "opts: SO_ERROR is 0");
	r = getsockopt(fd, IPPROTO_TCP, 12345, &v, &l);
	CHECK(r == -1 && errno == ENOPROTOOPT, "opts: an unknown option: %s",
	      err_name(errno));
	/* each change of the flags right after blocking reads */
	CHECK(echoed(fd, 14), "opts: blocking, 100 bytes echoed");
	r = fcntl(fd, F_SETFL, fl | O_NONBLOCK) ? -2 : (int)read(fd, &b, 1);
	CHECK(r == -1 && errno == EAGAIN && (fcntl(fd, F_GETFL) & O_NONBLOCK),
	      "opts: O_NONBLOCK by fcntl, nothing to read: %s",
	      err_name(errno));
	fcntl(fd, F_SETFL, fl);
	CHECK(echoed(fd, 15), "opts: blocking after fcntl, 100 bytes echoed");
	one = 1;
	r = ioctl(fd, FIONBIO, &one) ? -2 : (int)read(fd, &b, 1);
	CHECK(r == -1 && errno == EAGAIN,
	      "opts: O_NONBLOCK by ioctl FIONBIO, nothing to read: %s",
	      err_name(errno));
	one = 0;
	ioctl(fd, FIONBIO, &one);
	/* FIONREAD: nothing, then some of the 100 bytes on their way back */
	r = ioctl(fd, FIONREAD, &v) ? -1 : v;
	fill(out, sizeof(out), 0, 16);
	if (!r && !write_all(fd, out, sizeof(out)) && poll(&p, 1, 10000) == 1)
		n = ioctl(fd, FIONREAD, &v) ? -1 : v;
	CHECK(r == 0 && n >= 1 && n <= 100 &&
	      read_all(fd, in, sizeof(in)) == 1 && !memcmp(in, out, sizeof(in)),
	      "opts: FIONREAD 0, then 1 to 100 of 100 bytes echoed, which "
	      "blocking reads get");
	t0 = ms_now();
	r = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ? -2 :
	    (int)read(fd, &b, 1);
	CHECK(r == -1 && errno == EAGAIN && ms_now() - t0 >= 250,
	      "opts: SO_RCVTIMEO 300 ms, nothing to read: %s after its time",
	      err_name(errno));
	tv.tv_usec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	CHECK(echoed(fd, 13), "opts: blocking again, 100 bytes echoed");
	/* the library watches the peer with keepalives of its own: the
	 * program reads back what it set */
	l = sizeof(v);
	r = getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, &l);
	one = 77;
	n = setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &one, sizeof(one));
	l = sizeof(one);
	one = 0;
	n |= getsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &one, &l);
	CHECK(!r && !v && !n && one == 77,
	      "opts: SO_KEEPALIVE reads 0 as set; TCP_KEEPIDLE 77 reads back 77");
	CHECK(!fcntl(fd, F_SETFD, FD_CLOEXEC) &&
	      (fcntl(fd, F_GETFD) & FD_CLOEXEC), "opts: FD_CLOEXEC set and read back");
}

/* exec: the connection, with bytes on their way, in the next image */
static int exec_child(int fd)
{
	static uint8_t in[3000], want[3000], out[700], back[700];
	char b;
	bool ok;

	fill(want, sizeof(want), 0, 11);
	ok = read_all(fd, in + 1000, 2000) == 1 &&
	     !memcmp(in + 1000, want + 1000, 2000);
	fill(out, 500, 0, 12);
	ok = ok && read_all(fd, back, 500) == 1 && !memcmp(back, out, 500);
	fill(out, sizeof(out), 1, 12);
	ok = ok && !write_all(fd, out, sizeof(out)) &&
	     read_all(fd, back, sizeof(back)) == 1 &&
	     !memcmp(back, out, sizeof(out));
	ok = ok && !shutdown(fd, SHUT_WR) && read(fd, &b, 1) == 0;
	CHECK(ok, "exec: the next image reads the 2000 + 500 bytes on their "
	      "way, 700 more are echoed, then EOF");
	return fails ? 1 : 0;
}

static void case_exec(unsigned int c)
{
	uint8_t in[1000], want[1000], out[500];
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		int fd = dial(c, 0);
		char num[16];

		fill(want, sizeof(want), 0, 11);
		fill(out, sizeof(out), 0, 12);
		if (fd < 0 || read_all(fd, in, sizeof(in)) != 1 ||
		    memcmp(in, want, sizeof(in)) ||
		    write_all(fd, out, sizeof(out)))
			_exit(3);
		msleep(100);	/* the echo comes back meanwhile */
		snprintf(num, sizeof(num), "%d", fd);
		execl("/proc/self/exe", "psocktest", "exec-child", num,
		      (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "exec: the child read 1000 bytes, sent 500, exec'd, and the "
	      "next image passed");
}

/* daemon: a child forks mid-connection and exits; its child goes on */
static void case_daemon(unsigned int c)
{
	static uint8_t out[2000], in[2000];
	int p[2], status = -1;
	uint8_t r = 0;
	pid_t pid;

	if (pipe(p))
		return;
	pid = fork();
	if (pid == 0) {
		int fd = dial(c, 0);

		close(p[0]);
		fill(out, 1000, 0, 14);
		if (fd < 0 || write_all(fd, out, 1000) ||
		    read_all(fd, in, 1000) != 1 || memcmp(in, out, 1000))
			_exit(3);
		if (fork() == 0) {	/* the daemon */
			char b;

			fill(out, sizeof(out), 1, 14);
			r = !write_all(fd, out, sizeof(out)) &&
			    read_all(fd, in, sizeof(in)) == 1 &&
			    !memcmp(in, out, sizeof(in)) &&
			    !shutdown(fd, SHUT_WR) && read(fd, &b, 1) == 0;
			write_all(p[1], &r, 1);
			_exit(0);
		}
		_exit(0);
	}
	close(p[1]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (read(p[0], &r, 1) != 1)
		r = 0;
	close(p[0]);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && r,
	      "daemon: a child echoes 1000 bytes, forks and exits; its child "
	      "echoes 2000 more, then EOF");
}

static volatile sig_atomic_t alarms, usr1s;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* writes on the socket that the main program waits on */
static int handler_fd = -1;

static void on_alarm_send(int sig)
{
	alarms++;
	send(handler_fd, "h", 1, MSG_NOSIGNAL);
	(void)sig;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1s++;
}

static volatile sig_atomic_t info_signo;

static void on_info(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	info_signo = si && si->si_signo == sig ? sig : -1;
}

/* sig to this process once, after ms */
static timer_t signal_after(int sig, int ms)
{
	struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL,
			       .sigev_signo = sig };
	struct itimerspec it = { .it_value = { ms / 1000,
					       (ms % 1000) * 1000000L } };
	timer_t t = 0;

	if (!timer_create(CLOCK_MONOTONIC, &ev, &t))
		timer_settime(t, 0, &it, NULL);
	return t;
}

/*
 * A handler that runs while a call waits ends the wait with EINTR, or
 * with SA_RESTART lets recv go on (signal(7)); the library waits partly
 * outside the kernel, so it must see the handler run.
 */
static void case_signal(int fd)
{
	struct sigaction a = { .sa_handler = on_alarm }, u = {
		.sa_handler = on_usr1 }, q;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	sigset_t block, before, during;
	timer_t t[8];
	fd_set rs;
	ssize_t n;
	char b = 0;
	int r, e;

	write_all(fd, "a", 1);
	CHECK(read_all(fd, &b, 1) == 1 && b == 'a',
	      "signal: the connection echoes");
	sigemptyset(&a.sa_mask);
	sigemptyset(&u.sa_mask);
	sigaction(SIGALRM, &a, NULL);
	sigaction(SIGUSR1, &u, NULL);
	CHECK(!sigaction(SIGALRM, NULL, &q) && q.sa_handler == on_alarm &&
	      !(q.sa_flags & SA_RESTART),
	      "signal: sigaction() answers with the program's handler");
	t[0] = signal_after(SIGALRM, 200);
	n = recv(fd, &b, 1, 0);
	e = errno;
	CHECK(n == -1 && e == EINTR && alarms == 1,
	      "signal: a blocking recv ends with EINTR when a handler without SA_RESTART runs: %zd %s, %d handler runs",
	      n, err_name(n < 0 ? e : 0), (int)alarms);
	t[1] = signal_after(SIGALRM, 200);
	r = poll(&p, 1, -1);
	e = errno;
	CHECK(r == -1 && e == EINTR && alarms == 2,
	      "signal: poll without a timeout ends with EINTR: %d %s", r,
	      err_name(r < 0 ? e : 0));
	a.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &a, NULL);
	t[2] = signal_after(SIGALRM, 100);
	t[3] = signal_after(SIGUSR1, 400);
	n = recv(fd, &b, 1, 0);
	e = errno;
	CHECK(n == -1 && e == EINTR && alarms == 3 && usr1s == 1,
	      "signal: recv goes on through a handler with SA_RESTART, and ends at one without: %zd %s",
	      n, err_name(n < 0 ? e : 0));
	CHECK(signal(SIGUSR2, on_usr1) == SIG_DFL &&
	      signal(SIGUSR2, on_alarm) == on_usr1 &&
	      signal(SIGUSR2, SIG_DFL) == on_alarm,
	      "signal: signal() returns the handler before");
	u.sa_flags = SA_RESETHAND;
	sigaction(SIGUSR2, &u, NULL);
	raise(SIGUSR2);
	CHECK(usr1s == 2 && !sigaction(SIGUSR2, NULL, &q) &&
	      q.sa_handler == SIG_DFL,
	      "signal: SA_RESETHAND: the handler runs once, then SIG_DFL");
	q = (struct sigaction){ .sa_sigaction = on_info,
				.sa_flags = SA_SIGINFO };
	sigemptyset(&q.sa_mask);
	sigaction(SIGUSR2, &q, NULL);
	raise(SIGUSR2);
	q.sa_handler = SIG_IGN;		/* SA_SIGINFO still set */
	sigaction(SIGUSR2, &q, NULL);
	raise(SIGUSR2);
	CHECK(info_signo == SIGUSR2 && !sigaction(SIGUSR2, NULL, &q) &&
	      q.sa_handler == SIG_IGN,
	      "signal: an SA_SIGINFO handler gets its siginfo; SIG_IGN with SA_SIGINFO ignores");
	signal(SIGUSR2, SIG_DFL);
	/* ppoll and pselect: a signal blocked until their wait */
	u.sa_flags = 0;
	sigaction(SIGUSR1, &u, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &before);
	sigprocmask(SIG_SETMASK, NULL, &during);
	sigdelset(&during, SIGUSR1);
	t[4] = signal_after(SIGUSR1, 100);
	usleep(300000);
	CHECK(usr1s == 2, "signal: a blocked signal waits");
	r = ppoll(&p, 1, NULL, &during);
	e = errno;
	CHECK(r == -1 && e == EINTR && usr1s == 3,
	      "signal: ppoll lets it through: its handler, then EINTR: %d %s",
	      r, err_name(r < 0 ? e : 0));
	t[5] = signal_after(SIGUSR1, 200);
	FD_ZERO(&rs);
	FD_SET(fd, &rs);
	r = pselect(fd + 1, &rs, NULL, NULL, NULL, &during);
	e = errno;
	CHECK(r == -1 && e == EINTR && usr1s == 4,
	      "signal: pselect: one that comes during the wait ends it: %d %s",
	      r, err_name(r < 0 ? e : 0));
	/* a handler that calls send(): the library must not wait for
	 * itself, and the read restarts and gets the echo */
	sigprocmask(SIG_SETMASK, &before, NULL);
	a.sa_handler = on_alarm_send;
	a.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &a, NULL);
	handler_fd = fd;
	alarms = 0;
	t[6] = signal_after(SIGALRM, 200);
	n = recv(fd, &b, 1, 0);
	CHECK(n == 1 && b == 'h' && alarms == 1,
	      "signal: a handler sends on the socket that a blocking recv waits on (SA_RESTART): recv gets the echo: %zd",
	      n);
	/* the same from a System V handler (SA_RESETHAND | SA_NODEFER, no
	 * SA_RESTART), which the kernel resets as it runs: EINTR, then the
	 * echo is there to read */
	alarms = 0;
	sysv_signal(SIGALRM, on_alarm_send);
	t[7] = signal_after(SIGALRM, 200);
	n = recv(fd, &b, 1, 0);
	e = errno;
	r = read_all(fd, &b, 1);
	CHECK(n == -1 && e == EINTR && alarms == 1 && r == 1 && b == 'h' &&
	      signal(SIGALRM, SIG_DFL) == SIG_DFL,
	      "signal: a System V handler sends on the socket during a blocking recv: %zd %s, then the echo; reset to SIG_DFL",
	      n, err_name(n < 0 ? e : 0));
	for (int i = 0; i < 8; i++)	/* none left to fire */
		timer_delete(t[i]);
	sigprocmask(SIG_SETMASK, &before, NULL);
	signal(SIGALRM, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	write_all(fd, "b", 1);
	CHECK(read_all(fd, &b, 1) == 1 && b == 'b',
	      "signal: the connection echoes after");
}

/* threads: one blocks in a read while the other writes, as a program
 * with a reader thread does */
struct reader {
	int fd, r;
	uint8_t buf[2000];
};

static void *reader_main(void *arg)
{
	struct reader *rd = arg;

	rd->r = read_all(rd->fd, rd->buf, sizeof(rd->buf));
	return NULL;
}

static void case_threads(int fd)
{
	static struct reader rd;
	static uint8_t out[sizeof(rd.buf)];
	struct timespec until;
	pthread_t t;
	int r;

	rd.fd = fd;
	fill(out, sizeof(out), 0, 21);
	r = pthread_create(&t, NULL, reader_main, &rd);
	CHECK(!r, "threads: a reader thread: %s", strerror(r));
	if (r)
		return;
	msleep(200);		/* it waits in its read */
	for (size_t at = 0; at < sizeof(out); at += 100) {
		write_all(fd, out + at, 100);
		msleep(10);
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	r = pthread_timedjoin_np(t, NULL, &until);
	CHECK(!r && rd.r == 1 && !memcmp(rd.buf, out, sizeof(out)),
	      "threads: a thread blocked in a read gets the echo of 20 writes of 100 bytes that another thread makes meanwhile");
	if (r) {		/* the reader is stuck */
		fflush(NULL);
		_exit(1);
	}
}

/* nodedeath: the read ends, not hangs, when the peer's node goes away */
static void case_nodedeath(int fd)
{
	uint8_t in[100], want[100];
	ssize_t n;
	char b;

	fill(want, sizeof(want), 0, 22);
	CHECK(read_all(fd, in, sizeof(in)) == 1 && !memcmp(in, want, 100),
	      "nodedeath: 100 bytes; the peer's node may go now");
	n = read(fd, &b, 1);
	CHECK(n == 0 || (n < 0 && (errno == ECONNRESET || errno == ETIMEDOUT)),
	      "nodedeath: then the read ends: %zd %s", n,
	      err_name(n < 0 ? errno : 0));
}

/*
 * sigstorm: a thread sends the main one signal after signal, each once
 * the last one's handler has run, while the main one echoes small writes
 * as fast as it can: first to a handler, then to a System V style one
 * (SA_RESETHAND) that sets itself again.  Signals that come while the
 * library holds its lock run when it gives the lock up (psock/lock.c):
 * none may be lost, and a handler may call the library (each asks an
 * option of the socket), which must not be half way through a change.
 */
#define STORM_SIGNALS	1000
#define STORM_RESET	200

static volatile sig_atomic_t storm_handled;
static int storm_fd = -1;
static struct sigaction storm_act, storm_reset_act;

/* getsockopt() is async-signal-safe; the library answers this one under
 * its lock (psock/alive.c) */
static void storm_call(void)
{
	int v;
	socklen_t len = sizeof(v);

	getsockopt(storm_fd, SOL_SOCKET, SO_KEEPALIVE, &v, &len);
}

static void on_storm(int sig)
{
	storm_call();
	storm_handled++;
	(void)sig;
}

static void on_storm_reset(int sig)
{
	/* again first: the next signal comes once the count moves */
	sigaction(SIGUSR1, &storm_reset_act, NULL);
	storm_call();
	storm_handled++;
	(void)sig;
}

struct storm {
	pthread_t target;
	int sent, handled, reset_sent, reset_handled;
	bool lost, done;
};

/* count signals, each once the last has been handled (5 s each at most) */
static int storm_send(struct storm *st, int count)
{
	int sent = 0;

	for (int i = 0; i < count && !st->lost; i++) {
		int was = storm_handled;
		double end = now_s() + 5;

		pthread_kill(st->target, SIGUSR1);
		sent++;
		while (storm_handled == was && now_s() < end)
			usleep(100);
		st->lost = storm_handled == was;
	}
	return sent;
}

static void *storm_main(void *arg)
{
	struct storm *st = arg;

	st->sent = storm_send(st, STORM_SIGNALS);
	st->handled = storm_handled;
	sigaction(SIGUSR1, &storm_reset_act, NULL);
	storm_handled = 0;
	st->reset_sent = storm_send(st, STORM_RESET);
	st->reset_handled = storm_handled;
	__atomic_store_n(&st->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void case_sigstorm(int fd)
{
	static struct storm st;
	uint8_t out[64], in[64];
	int bad = 0, rounds = 0, r;
	pthread_t t;

	storm_fd = fd;
	storm_act = (struct sigaction){ .sa_handler = on_storm,
					.sa_flags = SA_RESTART };
	storm_reset_act = (struct sigaction){
		.sa_handler = on_storm_reset,
		.sa_flags = SA_RESTART | SA_RESETHAND };
	sigemptyset(&storm_act.sa_mask);
	sigemptyset(&storm_reset_act.sa_mask);
	sigaction(SIGUSR1, &storm_act, NULL);
	storm_handled = 0;
	st = (struct storm){ .target = pthread_self() };
	r = pthread_create(&t, NULL, storm_main, &st);
	CHECK(!r, "sigstorm: a signalling thread: %s", strerror(r));
	if (r)
		return;
	while (!__atomic_load_n(&st.done, __ATOMIC_ACQUIRE)) {
		size_t k = 1 + rounds % sizeof(out);

		fill(out, k, rounds, 23);
		if (write_all(fd, out, k) || read_all(fd, in, k) != 1 ||
		    memcmp(in, out, k))
			bad++;
		rounds++;
		if (bad)
			break;
	}
	pthread_join(t, NULL);
	CHECK(!st.lost && st.handled == STORM_SIGNALS &&
	      st.reset_handled == STORM_RESET && !bad && rounds > 0,
	      "sigstorm: %d signals sent during echoes, %d handled; %d to an SA_RESETHAND handler, %d handled%s; %d echoes wrong",
	      st.sent, st.handled, st.reset_sent, st.reset_handled,
	      st.lost ? " (one lost)" : "", bad);
	/* one lost but pending would kill us with SIG_DFL */
	signal(SIGUSR1, SIG_IGN);
}

/*
 * spin: the client waits for each echo by asking poll() (even rounds) or
 * epoll_wait() (odd ones) without a timeout until the connection is
 * readable, a pipe beside it; the server answers each after 2 ms.  The
 * library stalls on the NIC in such a spin (psock/wait.c): every echo must
 * still come whole, and a byte into the pipe from another thread must
 * still be seen by the spinning calls.
 */
#define SPIN_ROUNDS	200

static void *spin_pipe_write(void *arg)
{
	msleep(50);
	if (write(*(int *)arg, "p", 1) != 1)
		return arg;
	return NULL;
}

/* Ask without waiting until fd or the pipe is readable: which (1, 2). */
static int spin_for(int fd, int pipe_rd, int ep, bool use_epoll)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = pipe_rd, .events = POLLIN } };
		struct epoll_event got[2];
		int r = use_epoll ? epoll_wait(ep, got, 2, 0) : poll(p, 2, 0);

		if (r < 0 && errno != EINTR)
			return -1;
		if (r <= 0)
			continue;
		if (use_epoll)
			return got[0].data.u64 == 1 && r == 1 ? 1 : 2;
		return (p[0].revents & POLLIN) && !p[1].revents ? 1 : 2;
	}
}

/* The server's view of a connection we closed without reading. */
static void case_early_close(int fd)
{
	char report[96] = "";

	msleep(200);
	close(fd);
	fd = dial(25, 0);
	CHECK(fd >= 0 && read_all(fd, report, sizeof(report)) == 1 &&
	      !strcmp(report, "read 0 0, getpeername 0"),
	      "earlyclose: closed unread, the server reads the end: %s",
	      report[0] ? report : "no report");
	if (fd >= 0)
		close(fd);
}

static void case_spin(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 1 };
	int ep = epoll_create1(EPOLL_CLOEXEC), pipefd[2], bad = 0, round;
	uint8_t out[64], in[64];
	pthread_t t;
	char b;

	if (ep < 0 || pipe(pipefd))
		return;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	ev.data.u64 = 2;
	epoll_ctl(ep, EPOLL_CTL_ADD, pipefd[0], &ev);
	for (round = 0; round < SPIN_ROUNDS && !bad; round++) {
		size_t k = 1 + round % sizeof(out);

		fill(out, k, round, 24);
		bad = write_all(fd, out, k) ||
		      spin_for(fd, pipefd[0], ep, round & 1) != 1 ||
		      read_all(fd, in, k) != 1 || memcmp(in, out, k);
	}
	CHECK(!bad, "spin: %d echoes waited for in poll() and epoll_wait() without a timeout",
	      round);
	for (int use_epoll = 0; use_epoll < 2; use_epoll++) {
		int r = pthread_create(&t, NULL, spin_pipe_write, &pipefd[1]);
		void *failed = &r;

		if (!r) {
			r = spin_for(fd, pipefd[0], ep, use_epoll);
			pthread_join(t, &failed);
		}
		CHECK(r == 2 && !failed && read(pipefd[0], &b, 1) == 1,
		      "spin: a pipe written meanwhile wakes the spinning %s",
		      use_epoll ? "epoll_wait()" : "poll()");
	}
	close(ep);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* A timewait connection in mode m, up to the server's byte */
static int tw_dial(enum tw_mode m, struct tw_tuple *t)
{
	uint8_t b = m;
	int fd = dial(26, 0);

	if (fd < 0)
		return -1;
	if (write_all(fd, &b, 1) || read_all(fd, &b, 1) != 1 || b != 'k' ||
	    tw_tuple_of(fd, t)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Mode m on the client's side; 0 when its end went as the mode says */
static int tw_client(enum tw_mode m, struct tw_tuple *t)
{
	int pipefd[2], status, fd = -1;
	uint8_t b;
	pid_t pid;

	if (m == TW_EXIT) {	/* the child's connection: its tuple back */
		if (pipe(pipefd))
			return -1;
		pid = fork();
		if (pid == 0) {
			fd = tw_dial(m, t);
			exit(fd < 0 || write_all(pipefd[1], t, sizeof(*t)) ?
			     1 : 0);	/* fd left open */
		}
		close(pipefd[1]);
		status = pid < 0 || read_all(pipefd[0], t, sizeof(*t)) != 1;
		close(pipefd[0]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return status ? -1 : 0;
	}
	fd = tw_dial(m, t);
	if (fd < 0)
		return -1;
	switch (m) {
	case TW_SERVER_CLOSE:	/* its end, then ours */
		status = read(fd, &b, 1);
		close(fd);
		return status ? -1 : 0;
	case TW_SHUTDOWN:
		status = shutdown(fd, SHUT_WR) || read(fd, &b, 1);
		close(fd);
		return status ? -1 : 0;
	case TW_FORKED:		/* the child holds it: our close ends nothing */
		pid = fork();
		if (pid == 0) {
			msleep(300);
			close(fd);
			_exit(0);
		}
		close(fd);
		if (pid < 0)
			return -1;
		waitpid(pid, NULL, 0);
		return 0;
	default:
		close(fd);
		return 0;
	}
}

static void case_timewait(void)
{
	struct tw_tuple t[TW_MODES];
	char report[TW_MODES][TW_STATE_LEN] = { { 0 } };
	const char *mine[TW_MODES];
	bool ok[TW_MODES];
	uint8_t b = TW_REPORT;
	int fd;

	for (int m = 0; m < TW_MODES; m++)
		ok[m] = !tw_client(m, &t[m]);
	for (int m = 0; m < TW_MODES; m++)
		mine[m] = ok[m] ? tw_state(&t[m]) : "failed";
	fd = dial(26, 0);
	if (fd < 0 || write_all(fd, &b, 1) ||
	    read_all(fd, report, sizeof(report)) != 1)
		memset(report, 0, sizeof(report));
	if (fd >= 0)
		close(fd);
	for (int m = 0; m < TW_MODES; m++) {
		const char *theirs = report[m][0] ? report[m] : "no report";
		bool first_client = m != TW_SERVER_CLOSE;

		report[m][TW_STATE_LEN - 1] = 0;
		if (m == TW_BOTH) {	/* who went first is the network's */
			CHECK(ok[m] && (!strcmp(mine[m], "TIME_WAIT") ||
					!strcmp(theirs, "TIME_WAIT")),
			      "timewait: %s: TIME_WAIT on one side at least",
			      tw_names[m]);
			continue;
		}
		CHECK(ok[m] && !strcmp(first_client ? mine[m] : theirs,
				       "TIME_WAIT") &&
		      !strcmp(first_client ? theirs : mine[m], "closed"),
		      "timewait: %s: client %s, server %s", tw_names[m],
		      mine[m], theirs);
	}
}

/* One forkserve request: the port of the child's listener, then 16
 * echoes on a connection to it; 0 when all went. */
static int forkserve_once(void)
{
	struct sockaddr_in to = peer;
	uint8_t out[512], in[512];
	uint16_t port;
	int fd = dial(27, 0), d = -1, bad = 1;

	if (fd < 0)
		return -1;
	if (read_all(fd, &port, sizeof(port)) == 1) {	/* asked by dial() */
		to.sin_port = port;
		d = socket(AF_INET, SOCK_STREAM, 0);
		if (d >= 0 && !connect(d, (struct sockaddr *)&to, sizeof(to)))
			bad = 0;
	}
	for (int i = 0; !bad && i < FORKSERVE_WRITES; i++) {
		fill(out, sizeof(out), i, 27);
		bad = write_all(d, out, sizeof(out)) ||
		      read_all(d, in, sizeof(in)) != 1 ||
		      memcmp(in, out, sizeof(in));
	}
	if (d >= 0)
		close(d);
	close(fd);
	return bad ? -1 : 0;
}

static void case_forkserve(void)
{
	int round = 0;

	while (round < FORKSERVE_ROUNDS && !forkserve_once())
		round++;
	CHECK(round == FORKSERVE_ROUNDS,
	      "forkserve: %d requests, each served by a child of the server that waits in accept()",
	      round);
}

static int client(const char *host, int port, char **names, int count)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM }, *res;

	if (getaddrinfo(host, NULL, &hints, &res)) {
		fprintf(stderr, "psocktest: cannot resolve %s\n", host);
		return 2;
	}
	peer = *(struct sockaddr_in *)res->ai_addr;
	peer.sin_port = htons(port);
	freeaddrinfo(res);
	for (unsigned int c = 0; c < NCASES; c++) {
		bool want = !count && strcmp(cases[c], "death") &&
			    strcmp(cases[c], "idle") &&
			    strcmp(cases[c], "nodedeath");
		int fd = -1;

		for (int i = 0; i < count; i++)
			want |= !strcmp(names[i], cases[c]);
		if (!want)
			continue;
		if (c != 2 && c != 9 && c != 10 && c != 13 && c != 16 &&
		    c != 17 && c != 26 && c != 27) {
			fd = dial(c, 0);
			if (fd < 0) {
				CHECK(0, "%s: connect: %s", cases[c],
				      strerror(errno));
				continue;
			}
		}
		switch (c) {
		case 0: case_echo(fd); break;
		case 1: case_bulk(fd); break;
		case 2: case_nonblock(); break;
		case 3: case_peek(fd); break;
		case 4: case_halfclose(fd); break;
		case 5: case_iov(fd); break;
		case 6: case_poll(fd); break;
		case 7: case_dup(fd); fd = -1; break;
		case 8: case_names(fd); break;
		case 9: case_errors(); break;
		case 10: case_refused(); break;
		case 11: case_epoll(fd); break;
		case 12: case_fork(fd); break;
		case 13: case_bound(); break;
		case 14: case_udp(fd); break;
		case 15: case_opts(fd); break;
		case 16: case_exec(c); break;
		case 17: case_daemon(c); break;
		case 18: case_death(fd); break;
		case 19: case_idle(fd); break;
		case 20: case_signal(fd); break;
		case 21: case_threads(fd); break;
		case 22: case_nodedeath(fd); break;
		case 23: case_sigstorm(fd); break;
		case 24: case_spin(fd); break;
		case 25: case_early_close(fd); fd = -1; break;
		case 26: case_timewait(); break;
		case 27: case_forkserve(); break;
		}
		if (fd >= 0)
			close(fd);
	}
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "exec-child"))
		return exec_child(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "server"))
		server(atoi(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]), argv + 4, argc - 4);
	fprintf(stderr, "usage: psocktest server PORT\n"
		"       psocktest client HOST PORT [CASE...]\n");
	return 2;
}
