/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: a connection's set-up and tear-down (wire.h has
 * the protocol).
 *
 * A stream socket that may reach a peer of ours is bound to a marker
 * port, so that the server knows a client of ours; the server writes a
 * HELLO with its ports address first on the kernel stream, and a client
 * that reads one switches its direction to ports (send.c).  The
 * descriptor the program holds stays the kernel socket of the
 * connection.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "psock.h"
#include "wire.h"

static bool peer_node_of(int fd, int *node, bool marked_only)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	in_addr_t a;
	int port_no;

	if (getpeername(fd, (struct sockaddr *)&ss, &len) ||
	    !psock_ipv4_of((struct sockaddr *)&ss, len, &a, &port_no))
		return false;
	if (marked_only && (port_no < PSOCK_MARK_LO || port_no > PSOCK_MARK_HI))
		return false;
	*node = psock_node_at(a);
	return *node >= 0;
}

static uint16_t *port_field(struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return &((struct sockaddr_in *)a)->sin_port;
	if (a->ss_family == AF_INET6)
		return &((struct sockaddr_in6 *)a)->sin6_port;
	return NULL;
}

static bool is_stream(int fd)
{
	int type = 0;
	socklen_t tlen = sizeof(type);

	return !getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) &&
	       type == SOCK_STREAM;
}

/* Bind fd to address a with a free marker port; false if none is free. */
static bool bind_marker(int fd, struct sockaddr_storage *a, socklen_t len)
{
	unsigned int start = (unsigned int)getpid() * 7919u +
			     (unsigned int)psock_ms_now();
	uint16_t *p = port_field(a);

	for (unsigned int i = 0; p && i <= PSOCK_MARK_HI - PSOCK_MARK_LO; i++) {
		*p = htons(PSOCK_MARK_LO + (start + i) %
			   (PSOCK_MARK_HI - PSOCK_MARK_LO + 1));
		if (!syscall(SYS_bind, fd, (struct sockaddr *)a, len))
			return true;
		if (errno != EADDRINUSE)
			break;
	}
	psock_say("no marker port free (%s): connection stays on the kernel",
		  strerror(errno));
	return false;
}

int psock_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct sockaddr_storage a;
	uint16_t *p;

	if (psock_udp_bind(fd, addr, len))
		return 1;
	if (!addr || len < sizeof(struct sockaddr_in) || len > sizeof(a))
		return 0;
	memcpy(&a, addr, len);
	p = port_field(&a);
	/* "any port" may as well be a marker: then connect() is ours */
	if (!p || *p || !is_stream(fd) || !psock_port() ||
	    (a.ss_family == AF_INET6 && len < sizeof(struct sockaddr_in6)))
		return 0;
	return bind_marker(fd, &a, len) ? 1 : 0;
}

bool psock_want_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct sockaddr_storage me;
	socklen_t mlen = sizeof(me);
	int node, port_no;
	uint16_t *p;
	in_addr_t to;

	if (!psock_ipv4_of(addr, len, &to, &port_no) || !is_stream(fd))
		return false;
	node = psock_node_at(to);
	if (node < 0 || getsockname(fd, (struct sockaddr *)&me, &mlen) ||
	    !(p = port_field(&me)) || !psock_port())
		return false;
	/* bound by us (psock_bind) already; the app's own port: the kernel's */
	if (*p)
		return ntohs(*p) >= PSOCK_MARK_LO && ntohs(*p) <= PSOCK_MARK_HI;
	return bind_marker(fd, &me, mlen);
}

void psock_connected(int fd)
{
	struct psock_conn *c;

	if (psock_get(fd))
		psock_close(fd);
	c = psock_conn_new(PSOCK_CLIENT);
	if (!c)
		return;
	c->state = PSOCK_UNDECIDED;
	if (!psock_fd_set(fd, c))
		psock_conn_free(c);
}

void psock_accepted(int fd)
{
	struct psock_conn *c;
	int node;

	if (!peer_node_of(fd, &node, true) || !psock_port())
		return;
	psock_local_peer(node);
	c = psock_conn_new(PSOCK_SERVER);
	if (!c)
		return;
	/* written by the process that first uses the connection: a server
	 * that accepts, then forks a child to serve it, names the child */
	c->state = PSOCK_HELLO_DUE;
	if (!psock_fd_set(fd, c)) {
		psock_conn_free(c);
		return;
	}
	psock_say("conn %u: accepted from node %d", c->id, node);
}

/* A server's HELLO, with the port of the process that writes it. */
static void hello(int fd, struct psock_conn *c)
{
	struct psock_hello h = { .magic = PSOCK_MAGIC };

	c->state = PSOCK_OURS;
	if (!psock_port() || c->id >= PSOCK_CONN_IDS) {
		c->state = PSOCK_KERNEL;	/* no HELLO: the client stays too */
		return;
	}
	strncpy(h.nic, ps_port_nic(psock_port_ours), sizeof(h.nic) - 1);
	h.node = ps_port_node(psock_port_ours);
	h.port = ps_port_id(psock_port_ours);
	h.conn = c->id;
	h.nonce = c->nonce;
	/* the first bytes of the stream, so there is room: all or nothing */
	if (sys_send(fd, &h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    sizeof(h))
		c->state = PSOCK_KERNEL;
}

void psock_decide(int fd, struct psock_conn *c)
{
	struct psock_hello h;
	ssize_t n;
	int node;

	if (c->state == PSOCK_HELLO_DUE)
		hello(fd, c);
	if (c->state != PSOCK_UNDECIDED)
		return;
	n = sys_recv(fd, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR || errno == ENOTCONN))
		return;
	if (n > 0 && !memcmp(h.magic, PSOCK_MAGIC_ANY,
			     (size_t)n < strlen(PSOCK_MAGIC_ANY) ?
			     (size_t)n : strlen(PSOCK_MAGIC_ANY))) {
		if ((size_t)n < sizeof(h))
			return;		/* the rest is on its way */
		sys_recv(fd, &h, sizeof(h), MSG_DONTWAIT);
		c->state = PSOCK_OURS;
		if (memcmp(h.magic, PSOCK_MAGIC, sizeof(h.magic))) {
			psock_say("conn %u: the server runs another version (%.8s): kernel",
				  c->id, h.magic);
			c->state = PSOCK_KERNEL;
			return;
		}
		if (!psock_port() || c->id >= PSOCK_CONN_IDS) {
			c->state = PSOCK_KERNEL;	/* never SWITCH: nor does
						 * the server */
			return;
		}
		if (!peer_node_of(fd, &node, false) || node != h.node ||
		    h.port >= PS_PORTS_MAX) {
			psock_say("conn %u: bad HELLO; reset", c->id);
			c->reset = true;
			return;
		}
		if (strncmp(h.nic, ps_port_nic(psock_port_ours), sizeof(h.nic))) {
			/* never switch: the server stays on the kernel too */
			psock_say("conn %u: the server uses %.8s, not %s: kernel",
			    c->id, h.nic, ps_port_nic(psock_port_ours));
			c->state = PSOCK_KERNEL;
			return;
		}
		c->peer_known = true;
		c->peer_node = h.node;
		psock_local_peer(h.node);
		c->peer_port = h.port;
		c->peer_conn = h.conn;
		c->peer_nonce = h.nonce;
		psock_say("conn %u: server node %u port %u speaks ports", c->id,
		    h.node, h.port);
		psock_switch_tx(c);
		return;
	}
	/* anything else first (or an error, or EOF): not one of ours */
	c->state = PSOCK_KERNEL;
	psock_say("conn %u: the server is not ours: kernel", c->id);
}

/* ---- tear-down ---- */

/*
 * A client that closes before it read its server's HELLO: the HELLO is
 * the library's, not the program's, so it is read off first.  Unread
 * bytes make the kernel's close a reset (RST), where the program, which
 * read all its server sent, closes with a FIN: the server's Open MPI
 * then found its accepted connection gone (getpeername: ENOTCONN).
 */
static void hello_drop(int fd)
{
	struct psock_hello h;
	ssize_t n = sys_recv(fd, &h, sizeof(h), MSG_PEEK | MSG_DONTWAIT);

	if (n > 0 && !memcmp(h.magic, PSOCK_MAGIC_ANY,
			     (size_t)n < strlen(PSOCK_MAGIC_ANY) ?
			     (size_t)n : strlen(PSOCK_MAGIC_ANY)))
		sys_recv(fd, &h, n, MSG_DONTWAIT);
}

void psock_close(int fd)
{
	struct psock_conn *c = psock_get(fd);

	if (!c)
		return;
	psock_fd_set(fd, NULL);
	if (--c->refs > 0) {
		if (c->kfd == fd)	/* another descriptor of it, then */
			c->kfd = psock_fd_of(c);
		return;
	}
	if (c->state == PSOCK_UNDECIDED && !c->shared)
		hello_drop(fd);
	/* another process may hold it still: its end is the kernel's FIN */
	if (c->state != PSOCK_KERNEL && c->state != PSOCK_INHERITED &&
	    !c->shared && c->tx_state == PSOCK_TX_PORTS && !c->reset) {
		psock_pump();
		psock_msg_send(c, PSOCK_FIN, c->tx_sent, NULL, 0, 0);
	}
	psock_say("conn %u: closed (sent %llu+%llu, got %llu+%llu)", c->id,
	    (unsigned long long)c->tx_kernel, (unsigned long long)c->tx_sent,
	    (unsigned long long)c->rx_kernel, (unsigned long long)c->rx_got);
	psock_conn_free(c);
}

