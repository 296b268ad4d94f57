/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: UDP.
 *
 * A datagram socket of ours is the kernel's UDP socket, bound to a marker
 * port that names its process's ports port (wire.h: PSOCK_UDP_MARK), so
 * a sender knows where to send from the address alone.  A datagram from a
 * socket of ours to a marker port on another cluster node goes over
 * ports; everything else, and whatever comes from elsewhere, stays on the
 * kernel.  A reader gets both: first what came over ports, then the
 * kernel's.  UDP may lose and reorder, so a datagram that finds no room
 * (at the receiving node, or in the receiving socket's queue) is dropped.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "psock.h"
#include "wire.h"

/*
 * Where a UDP socket of another node was last heard from: its process's
 * ports port may differ from the one its marker names (a child that
 * inherited the socket sends from its own).  Answers go there.
 */
#define HEARD_MAX	256
static struct heard {
	uint16_t node, udp_port, ports_port;
	bool used;
} heard[HEARD_MAX];
static unsigned int heard_next;

static int heard_port(unsigned int node, uint16_t udp_port)
{
	for (int i = 0; i < HEARD_MAX; i++)
		if (heard[i].used && heard[i].node == node &&
		    heard[i].udp_port == udp_port)
			return heard[i].ports_port;
	return PSOCK_UDP_PORT_OF(udp_port);
}

static void heard_from(unsigned int node, uint16_t udp_port, int ports_port)
{
	struct heard *h = NULL;

	for (int i = 0; i < HEARD_MAX && !h; i++)
		if (heard[i].used && heard[i].node == node &&
		    heard[i].udp_port == udp_port)
			h = &heard[i];
	if (!h)		/* the oldest entry makes room */
		h = &heard[heard_next++ % HEARD_MAX];
	*h = (struct heard){ .node = node, .udp_port = udp_port,
			     .ports_port = ports_port, .used = true };
}

static bool is_dgram(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);

	return !getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) &&
	       type == SOCK_DGRAM;
}

static bool is_mark(int port_no)
{
	return port_no >= PSOCK_MARK_LO &&
	       port_no < PSOCK_UDP_MARK(PS_PORTS_MAX, 0);
}

/* Bind fd (address a) to a free marker of our port; make it ours. */
static int bind_ours(int fd, struct sockaddr_storage *a, socklen_t len)
{
	ps_port_t *port = psock_port();
	uint16_t *p = a->ss_family == AF_INET
		      ? &((struct sockaddr_in *)a)->sin_port
		      : &((struct sockaddr_in6 *)a)->sin6_port;
	struct psock_conn *c;

	if (!port)
		return 0;
	for (int k = 0; k < PSOCK_UDP_PER_PORT; k++) {
		uint16_t mark = PSOCK_UDP_MARK(ps_port_id(port), k);

		*p = htons(mark);
		if (syscall(SYS_bind, fd, (struct sockaddr *)a, len)) {
			if (errno == EADDRINUSE)
				continue;
			return 0;
		}
		c = psock_conn_new(PSOCK_SERVER);
		if (!c)
			return 1;	/* bound all the same: the kernel's */
		c->dgram = true;
		c->udp.port = mark;
		if (!psock_fd_set(fd, c))
			psock_conn_free(c);
		psock_say("udp %u: bound, ports port %d", mark,
			  ps_port_id(port));
		return 1;
	}
	psock_say("no UDP marker free for port %d: the kernel's",
		  ps_port_id(port));
	return 0;
}

int psock_udp_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct sockaddr_storage a;

	if (!addr || len < sizeof(struct sockaddr_in) || len > sizeof(a) ||
	    (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) ||
	    (addr->sa_family == AF_INET6 &&
	     len < sizeof(struct sockaddr_in6)))
		return 0;
	memcpy(&a, addr, len);
	if ((a.ss_family == AF_INET ? ((struct sockaddr_in *)&a)->sin_port
				    : ((struct sockaddr_in6 *)&a)->sin6_port) ||
	    !is_dgram(fd))
		return 0;
	return bind_ours(fd, &a, len);
}

void psock_udp_maybe(int fd, const struct sockaddr *to, socklen_t len)
{
	struct sockaddr_storage me;
	socklen_t mlen = sizeof(me);
	in_addr_t a;
	int port_no;

	/* only for a marker on another node, and a socket not bound yet */
	if (!psock_ipv4_of(to, len, &a, &port_no) || !is_mark(port_no) ||
	    psock_node_at(a) < 0 || !is_dgram(fd) ||
	    getsockname(fd, (struct sockaddr *)&me, &mlen) ||
	    (me.ss_family == AF_INET ? ((struct sockaddr_in *)&me)->sin_port
				     : ((struct sockaddr_in6 *)&me)->sin6_port))
		return;
	bind_ours(fd, &me, mlen);
}

void psock_udp_connect(struct psock_conn *c, const struct sockaddr *to,
		       socklen_t len)
{
	int port_no = 0;

	c->udp.peer = 0;
	if (to && to->sa_family != AF_UNSPEC &&
	    psock_ipv4_of(to, len, &c->udp.peer, &port_no))
		c->udp.peer_port = port_no;
}

ssize_t psock_udp_send(int fd, struct psock_conn *c, const struct iovec *iov,
		       int iovcnt, int flags, const struct sockaddr *to,
		       socklen_t tolen)
{
	ps_port_t *port;
	struct psock_conn peer = { 0 };
	in_addr_t a = c->udp.peer;
	int port_no = c->udp.peer_port, node;
	size_t len = 0;

	/* while our parent has the port its marker names: the kernel */
	if (c->state == PSOCK_INHERITED)
		psock_claim();
	port = c->state == PSOCK_INHERITED ? NULL : psock_port();
	if (to && !psock_ipv4_of(to, tolen, &a, &port_no))
		a = 0;
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	node = a && port ? psock_node_at(a) : -1;
	if (!port || node < 0 || !is_mark(port_no) || len > PSOCK_DGRAM_MAX) {
		struct msghdr m = { .msg_name = (void *)to,
				    .msg_namelen = to ? tolen : 0,
				    .msg_iov = (struct iovec *)iov,
				    .msg_iovlen = iovcnt };

		return sys_sendmsg(fd, &m, flags);
	}
	/* a datagram may be lost: no room there now, and it is */
	psock_local_peer(node);
	peer.peer_node = node;
	peer.peer_port = heard_port(node, port_no);
	peer.peer_conn = port_no;
	peer.id = c->udp.port;
	peer.kfd = fd;
	if (psock_msg_send(&peer, PSOCK_DGRAM, a, iov, iovcnt, len))
		c->udp.dropped++;
	return len;
}

void psock_udp_in(unsigned int node, int fport, uint16_t src, uint16_t dst,
		  in_addr_t sent_to,
		  const uint8_t *data, size_t len)
{
	struct psock_conn *c = psock_udp_find(dst);

	heard_from(node, src, fport);
	psock_local_peer(node);
	if (!c || (c->udp.peer && (psock_node_at(c->udp.peer) != (int)node ||
				   c->udp.peer_port != src)))
		return;		/* a connected socket takes only its peer's */
	if (!c->udp.heard) {	/* once per socket, for PS_SOCK_DEBUG */
		c->udp.heard = true;
		psock_say("udp %u: datagrams over ports, the first from node %u",
			  c->udp.port, node);
	}
	if (c->rx_bytes + len > PSOCK_UDP_QUEUE ||
	    !psock_chunk_add(c, data, len, node, src)) {
		c->udp.dropped++;
	} else {	/* the source the kernel would give: loopback to loopback */
		c->tail->src_lo = (ntohl(sent_to) >> 24) == 127;
		c->news_in++;
	}
}

static void fill_from(int fd, const struct psock_chunk *k,
		      struct sockaddr *from, socklen_t *fromlen)
{
	struct sockaddr_storage me;
	socklen_t mlen = sizeof(me);
	struct sockaddr_storage a = { 0 };
	socklen_t alen;

	/* in the socket's own family, as the kernel gives it */
	if (!getsockname(fd, (struct sockaddr *)&me, &mlen) &&
	    me.ss_family == AF_INET6) {
		struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&a;
		in_addr_t ip = k->src_lo ? htonl(INADDR_LOOPBACK) :
			       psock_node_addr(k->src_node);

		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(k->src_port);
		v6->sin6_addr.s6_addr[10] = 0xff;
		v6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&v6->sin6_addr.s6_addr[12], &ip, sizeof(ip));
		alen = sizeof(*v6);
	} else {
		struct sockaddr_in *v4 = (struct sockaddr_in *)&a;

		v4->sin_family = AF_INET;
		v4->sin_port = htons(k->src_port);
		v4->sin_addr.s_addr = k->src_lo ? htonl(INADDR_LOOPBACK) :
				      psock_node_addr(k->src_node);
		alen = sizeof(*v4);
	}
	memcpy(from, &a, *fromlen < alen ? *fromlen : alen);
	*fromlen = alen;
}

ssize_t psock_udp_recv(int fd, struct psock_conn *c, const struct iovec *iov,
		       int iovcnt, int flags, struct sockaddr *from,
		       socklen_t *fromlen)
{
	int64_t deadline = 0;	/* of SO_RCVTIMEO (psock_sleep()) */

	for (;;) {
		struct psock_chunk *k;
		struct msghdr m = { .msg_name = from,
				    .msg_namelen = fromlen ? *fromlen : 0,
				    .msg_iov = (struct iovec *)iov,
				    .msg_iovlen = iovcnt };
		size_t got = 0;
		ssize_t n;

		psock_pump();
		if ((k = c->head)) {
			for (int i = 0; i < iovcnt && got < k->len; i++) {
				size_t part = k->len - got < iov[i].iov_len
					      ? k->len - got : iov[i].iov_len;

				memcpy(iov[i].iov_base, k->data + got, part);
				got += part;
			}
			if (from && fromlen)
				fill_from(fd, k, from, fromlen);
			n = flags & MSG_TRUNC ? (ssize_t)k->len : (ssize_t)got;
			if (!(flags & MSG_PEEK)) {
				c->head = k->next;
				if (!c->head)
					c->tail = NULL;
				c->rx_bytes -= k->len;
				psock_chunk_done(k);
			}
			return n;
		}
		n = sys_recvmsg(fd, &m, flags | MSG_DONTWAIT);
		if (n >= 0 || errno != EAGAIN) {
			if (n >= 0 && fromlen)
				*fromlen = m.msg_namelen;
			return n;
		}
		if (psock_nonblocking(fd, c, flags) || psock_sleep(fd, c, POLLIN, &deadline))
			return -1;
	}
}

short psock_udp_events(struct psock_conn *c, short events, short *watch,
		       short *pass)
{
	/* the kernel's datagrams and room to send, and ours on top */
	*watch = events;
	*pass = events | POLLERR | POLLHUP;
	return (events & POLLIN) && c->head ? POLLIN : 0;
}
