/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: connections (wire.h has the protocol).
 *
 * A process opens one ports port, on its first connection that can use
 * one.  Every message on it is ours: a header naming the connection, then
 * stream bytes.  The descriptor the program holds stays the kernel socket
 * of the connection; this file keeps, per connection, which way each
 * direction goes, the bytes that came over ports and the send window.
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

#define MAX_NODES	1024

static ps_port_t *port;		/* ours, opened on first use */
static bool port_failed;	/* no NIC (or PS_SOCK=0): the kernel's */
static ps_port_t *heir;		/* the parent's, ours once it has gone */
static int64_t heir_ms;		/* since (fork) */
static bool port_shared;	/* we forked while holding port */
static bool touch_due;		/* ... and have not used it since */
static bool local_peer;		/* a peer on this node: port does not stall */
static int port_waiters;	/* threads in psock_port_wait(): the port
				 * stays open at exit for them */
static in_addr_t node_addr[MAX_NODES];	/* IPv4 of nodeN, network order */
static unsigned int hosts_nodes;
static bool hosts_read;
/* one message in or out at a time, under the lock */
static uint8_t msgbuf[PS_PORT_MSG_MAX];

void psock_say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, fd;

	const struct psock_options *o = psock_options();

	if (!o->debug)
		return;
	n = snprintf(line, sizeof(line), "psock[%d]: ", getpid());
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* a file, for daemons, whose stderr is gone: opened each time, since
	 * a daemon closes every descriptor it does not know */
	fd = o->debug_file ? open(o->debug_file, O_WRONLY | O_APPEND | O_CREAT |
			       O_CLOEXEC, 0644) : 2;
	if (fd < 0)
		return;
	/* one write, so lines do not mix; not our write(), which takes the
	 * lock our caller may hold (fd 2 may be a socket of ours) */
	(void)!syscall(SYS_write, fd, line, n);
	if (fd != 2)
		sys_close(fd);
}

/* ---- the cluster's addresses: "A.B.C.D nodeN" lines of /etc/hosts ---- */

static void read_hosts(void)
{
	char line[256], name[64], addr[64];
	unsigned int n;
	FILE *f;

	hosts_read = true;
	f = fopen(psock_options()->hosts, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct in_addr a;
		char *p = line;
		int used;

		if (sscanf(p, "%63s%n", addr, &used) != 1 || addr[0] == '#' ||
		    inet_pton(AF_INET, addr, &a) != 1)
			continue;
		for (p += used; sscanf(p, "%63s%n", name, &used) == 1;
		     p += used) {
			char end;

			if (sscanf(name, "node%u%c", &n, &end) == 1 &&
			    n < MAX_NODES) {
				node_addr[n] = a.s_addr;
				if (n + 1 > hosts_nodes)
					hosts_nodes = n + 1;
			}
		}
	}
	fclose(f);
}

/* The node with IPv4 address a (network order), or -1. */
int psock_node_of(in_addr_t a)
{
	if (!hosts_read)
		read_hosts();
	for (unsigned int n = 0; n < hosts_nodes; n++)
		if (node_addr[n] == a && a)
			return n;
	return -1;
}

in_addr_t psock_node_addr(unsigned int node)
{
	if (!hosts_read)
		read_hosts();
	return node < hosts_nodes ? node_addr[node] : 0;
}

/* ---- our port ---- */

/* The port our parent left: ours, with its connections, once it exits. */
bool psock_claim(void)
{
	if (!heir)
		return false;
	if (ps_port_adopt(heir)) {
		if (errno == EBUSY &&
		    psock_ms_now() - heir_ms < PSOCK_ADOPT_MS)
			return true;	/* the parent lives: later */
		ps_port_t *gone = heir;

		psock_say("port %d stays our parent's: %s", ps_port_id(heir),
			  strerror(errno));
		heir = NULL;	/* first: psock_own_fd() lets close() go */
		ps_port_forget(gone);
		return false;
	}
	port = heir;
	heir = NULL;
	for (uint32_t i = 0; i < psock_conn_limit(); i++)
		if (psock_conn_at(i))
			psock_conn_at(i)->inherited = false;
	psock_say("port %d adopted: our parent has gone", ps_port_id(port));
	return false;
}

ps_port_t *psock_port(void)
{
	if (port || port_failed)
		return port;
	if (heir) {
		psock_claim();
		if (port)
			return port;
		if (heir) {	/* one port per process: ours, from now on */
			ps_port_t *gone = heir;

			psock_say("port %d stays our parent's", ps_port_id(heir));
			heir = NULL;
			ps_port_forget(gone);
		}
	}
	if (psock_options()->off) {
		port_failed = true;
		return NULL;
	}
	port = ps_port_open(PS_PORT_ANY);
	/* PS_HAL unset: the ParaStation board, else the Myrinet card (a
	 * cluster's nodes all have the same, so both ends choose alike) */
	if (!port && errno == ENODEV && !getenv("PS_HAL")) {
		setenv("PS_HAL", "myri", 1);	/* children choose the same */
		port = ps_port_open(PS_PORT_ANY);
		if (!port)
			unsetenv("PS_HAL");
	}
	if (!port) {
		psock_say("no ports (%s): sockets stay on the kernel",
			  strerror(errno));
		port_failed = true;
	} else {
		psock_say("port %d on node %u (%s)", ps_port_id(port),
			  ps_port_node(port), ps_port_nic(port));
	}
	return port;
}

ps_port_t *psock_port_now(void)
{
	return port;
}

bool psock_port_shared(void)
{
	return port_shared;
}

void psock_port_resumed(ps_port_t *p, bool shared)
{
	port = p;
	port_shared = shared;
	psock_say("port %d on node %u (%s), kept across exec", ps_port_id(p),
		  ps_port_node(p), ps_port_nic(p));
}

bool psock_own_fd(int fd)
{
	return fd >= 0 &&
	       ((port && (fd == ps_port_poll_fd(port) ||
			  fd == ps_port_bell_fd(port))) ||
		(heir && (fd == ps_port_poll_fd(heir) ||
			  fd == ps_port_bell_fd(heir))));
}

int psock_bell_fd(void)
{
	return port ? ps_port_bell_fd(port) : -1;
}

int psock_nic_fd(void)
{
	return port ? ps_port_poll_fd(port) : -1;
}

bool psock_nic_sleep(bool *watch_nic)
{
	int err = errno;	/* after a poll() that was interrupted: EINTR */
	int watch = 1;
	bool queued = false;

	psock_lock();
	if (port)
		queued = ps_port_sleep(port, &watch);
	psock_unlock();
	*watch_nic = watch;
	errno = err;
	return queued;
}

bool psock_nic_watches(void)
{
	bool watch;

	psock_lock();
	watch = !port || ps_port_watches(port);
	psock_unlock();
	return watch;
}

int psock_sleep_ms(bool watch_nic)
{
	return port ? ps_port_sleep_ms(port, watch_nic) : PS_PORT_POLL_MS;
}

void psock_nic_awake(bool watch_nic, bool rung)
{
	int err = errno;

	psock_lock();
	if (port)
		ps_port_awake(port, watch_nic, rung);
	psock_unlock();
	errno = err;
}

bool psock_port_spins(void)
{
	bool ok;

	psock_lock();
	ok = port && !local_peer && ps_port_watches(port);
	psock_unlock();
	return ok;
}

bool psock_port_stirs(int looks)
{
	bool got = false;

	psock_lock();
	for (int i = 0; i < looks && port && !got; i++)
		got = ps_port_arrived(port);
	psock_unlock();
	return got;
}

bool psock_port_wait(int timeout_ms)
{
	ps_port_t *p = port;
	bool got;

	if (!p)
		return false;
	/* the ports layer lets threads share a port; ours may send, and a
	 * signal handler too, while this one waits */
	port_waiters++;
	psock_unlock();
	got = ps_port_wait(p, timeout_ms) > 0;
	psock_lock();
	port_waiters--;
	return got;
}

/* After fork, in the parent: the child holds our connections too. */
void psock_forked_parent(void)
{
	port_shared = port != NULL;
	touch_due = port_shared;
	for (uint32_t i = 0; i < psock_conn_limit(); i++)
		if (psock_conn_at(i))
			psock_conn_at(i)->shared = true;
}

void psock_forked_child(void)
{
	/* the port and its messages stay the parent's while it lives
	 * (a daemon's parent exits: then we adopt them, psock_claim()) */
	if (port) {
		heir = port;
		heir_ms = psock_ms_now();
	}
	port = NULL;
	port_waiters = 0;	/* the parent's threads */
	port_failed = false;
	port_shared = false;
	touch_due = false;
	local_peer = false;
	/* a client still waiting for its HELLO, and a server that has not
	 * written its HELLO yet, go on with a port of their own; the others'
	 * peers send to the parent's port */
	for (uint32_t i = 0; i < psock_conn_limit(); i++) {
		struct psock_conn *c = psock_conn_at(i);

		if (!c)
			continue;
		c->shared = true;
		if (!c->kernel_only &&
		    (c->dgram ? c->udp_port != 0 : c->peer_known ||
		     (c->role == PSOCK_SERVER && !c->hello_due)))
			c->inherited = heir != NULL;
	}
}

/* ---- messages over ports ---- */

/* The message in msgbuf found no room at the peer's node: wait while
 * the peer's process holds its end of the connection. */
static __attribute_noinline__ int msg_send_slow(struct psock_conn *c,
						size_t len)
{
	int64_t ended = 0;

	do {
		struct pollfd k = { .fd = c->kfd, .events = POLLRDHUP };

		STAT(ST_SEND_SLOW);
		if (c->dgram)
			return -1;	/* a datagram without room is lost */
		if (errno == ETIMEDOUT && sys_poll(&k, 1, 0) >= 0 &&
		    !(k.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)))
			continue;
		if (errno == ETIMEDOUT && !ended)
			ended = psock_ms_now();
		if (errno == ETIMEDOUT && psock_ms_now() - ended < PSOCK_GONE_MS)
			continue;
		psock_say("conn %u: send to node %u port %d: %s", c->id,
		    c->peer_node, c->peer_port, errno == ETIMEDOUT ?
		    "the peer is gone" : strerror(errno));
		c->reset = true;
		return -1;
	} while (ps_port_send_timed(port, c->peer_node, c->peer_port, msgbuf,
				    len, PSOCK_SEND_LOOK_MS));
	return 0;
}

/* The len bytes in msgbuf to c's peer. */
static __always_inline int msg_out(struct psock_conn *c, size_t len)
{
	STAT(ST_MSG_OUT);
	if (!ps_port_send_timed(port, c->peer_node, c->peer_port, msgbuf, len,
				c->dgram ? 0 : PSOCK_SEND_LOOK_MS))
		return 0;
	return msg_send_slow(c, len);
}

/* DATA's header, struct psock_msg up to sconn, written as one word */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&
	       PSOCK_DATA_HDR == 8 && offsetof(struct psock_msg, type) == 0 &&
	       offsetof(struct psock_msg, dconn) == 2 &&
	       offsetof(struct psock_msg, dnonce) == 4,
	       "the DATA header is one little-endian word");

static void put_data_hdr(const struct psock_conn *c)
{
	uint64_t h = PSOCK_DATA | (uint64_t)(uint16_t)c->peer_conn << 16 |
		     (uint64_t)c->peer_nonce << 32;

	memcpy(msgbuf, &h, sizeof(h));
}

int psock_msg_send(struct psock_conn *c, uint8_t type, uint64_t count,
		    const struct iovec *iov, int iovcnt, size_t len)
{
	struct psock_msg m = {
		.type = type, .dconn = c->peer_conn, .dnonce = c->peer_nonce,
		.sconn = c->id, .snonce = c->nonce, .count = count,
	};
	size_t off = sizeof(m);

	if (type == PSOCK_DATA) {
		put_data_hdr(c);
		off = PSOCK_DATA_HDR;
	} else {
		memcpy(msgbuf, &m, sizeof(m));
	}
	for (int i = 0; i < iovcnt && len; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(msgbuf + off, iov[i].iov_base, n);
		off += n;
		len -= n;
	}
	return msg_out(c, off);
}

int psock_data_send(struct psock_conn *c, const void *buf, size_t len)
{
	put_data_hdr(c);
	psock_copy(msgbuf + PSOCK_DATA_HDR, buf, len);
	return msg_out(c, PSOCK_DATA_HDR + len);
}

/* Our direction moves to ports: the peer reads tx_kernel bytes first. */
static void switch_tx(struct psock_conn *c)
{
	if (c->tx_ports || psock_msg_send(c, PSOCK_SWITCH, c->tx_kernel, NULL, 0, 0))
		return;
	c->tx_ports = true;
	psock_alive_start(c);
	psock_say("conn %u: sends over ports after %llu kernel bytes", c->id,
	    (unsigned long long)c->tx_kernel);
	if (c->fin_sent)	/* shut down before: nothing will follow */
		psock_msg_send(c, PSOCK_FIN, 0, NULL, 0, 0);
}

/* One chunk of SPARE_DATA bytes, made once, carries small messages in
 * turn while it is free: a malloc() and a free() per message cost more
 * than the copy.  Others have room for their bytes only. */
#define SPARE_DATA	256
static struct psock_chunk *spare;
static bool spare_free;

struct psock_chunk *psock_chunk_new(size_t len)
{
	struct psock_chunk *k;

	if (len <= SPARE_DATA && !spare) {
		spare = malloc(sizeof(*spare) + SPARE_DATA);
		spare_free = spare != NULL;
	}
	if (len <= SPARE_DATA && spare_free) {
		k = spare;
		spare_free = false;
	} else {
		k = malloc(sizeof(*k) + len);
	}
	if (k)
		*k = (struct psock_chunk){ .len = len };
	return k;
}

bool psock_chunk_add(struct psock_conn *c, const uint8_t *data, size_t len,
		     uint16_t src_node, uint16_t src_port)
{
	struct psock_chunk *k = psock_chunk_new(len);

	if (!k)
		return false;
	k->src_node = src_node;
	k->src_port = src_port;
	memcpy(k->data, data, len);
	if (c->tail)
		c->tail->next = k;
	else
		c->head = k;
	c->tail = k;
	c->rx_bytes += len;
	return true;
}

void psock_chunk_done(struct psock_chunk *k)
{
	if (k == spare)
		spare_free = true;
	else
		free(k);
}

static void take_data(struct psock_conn *c, const uint8_t *data, size_t len)
{
	if (!len)
		return;
	if (c->rx_bytes + len > PSOCK_WINDOW || c->fin_got) {
		psock_say("conn %u: peer broke the window; reset", c->id);
		c->reset = true;
		return;
	}
	if (!psock_chunk_add(c, data, len, 0, 0)) {
		c->reset = true;
		return;
	}
	c->rx_got += len;
}

/* A reader's buffer that its connection's next DATA may go straight
 * into (psock_pump_into()) */
struct direct {
	const struct psock_conn *c;
	void *buf;
	size_t room, got;
};

static void dispatch(unsigned int from, int fport, const uint8_t *buf,
		     size_t len, struct direct *d)
{
	struct psock_msg m;
	struct psock_conn *c;

	if (len < PSOCK_DATA_HDR)
		return;
	memcpy(&m, buf, PSOCK_DATA_HDR);
	if (m.type == PSOCK_DATA) {
		c = psock_conn_at(m.dconn);
		if (!c || c->nonce != m.dnonce || c->kernel_only ||
		    !c->peer_known || from != c->peer_node ||
		    fport != c->peer_port)
			return;
		buf += PSOCK_DATA_HDR;
		len -= PSOCK_DATA_HDR;
		/* in order: only while nothing of c's waits in chunks */
		if (d && c == d->c && len && len <= d->room && !c->rx_bytes &&
		    !c->fin_got) {
			psock_copy(d->buf, buf, len);
			d->got = len;
			c->rx_got += len;
			return;
		}
		c->news_in++;
		take_data(c, buf, len);
		return;
	}
	if (len < sizeof(m))
		return;
	memcpy(&m, buf, sizeof(m));
	if (m.type == PSOCK_DGRAM) {
		psock_udp_in(from, fport, m.sconn, m.dconn, m.count,
			     buf + sizeof(m), len - sizeof(m));
		return;
	}
	c = psock_conn_at(m.dconn);
	if (!c || c->nonce != m.dnonce || c->kernel_only)
		return;		/* closed since: what was on its way is lost */
	if (m.type == PSOCK_SWITCH) {
		c->peer_known = true;
		c->peer_node = from;
		c->peer_port = fport;
		c->peer_conn = m.sconn;
		c->peer_nonce = m.snonce;
		c->rx_switch = true;
		c->rx_limit = m.count;
		switch_tx(c);
		c->news_in++;
		c->news_out++;
		return;
	}
	if (!c->peer_known || from != c->peer_node || fport != c->peer_port ||
	    m.sconn != c->peer_conn || m.snonce != c->peer_nonce)
		return;
	switch (m.type) {
	case PSOCK_WIN:
		if (m.count > c->tx_acked && m.count <= c->tx_sent)
			c->tx_acked = m.count;
		c->news_out++;
		break;
	case PSOCK_FIN:
		c->fin_got = true;
		c->news_in++;
		break;
	case PSOCK_RST:
		c->reset = true;
		c->news_in++;
		c->news_out++;
		break;
	}
}

size_t psock_pump_into(const struct psock_conn *c, void *buf, size_t room,
		       bool arrived)
{
	struct direct d = { .c = c, .buf = buf, .room = buf ? room : 0 };
	unsigned int from = 0;	/* set by every take that succeeds */
	int fport = 0;
	ssize_t n;

	if (heir)
		psock_claim();
	if (!port)
		return 0;
	if (touch_due) {	/* we go on after a fork: the child may not adopt */
		ps_port_touch(port);
		touch_due = false;
	}
	/* the quiet look is cheaper than a take that finds nothing */
	while (!(c && c->rx_bytes) && !d.got &&
	       (arrived || !ps_port_quiet(port)) &&
	       (n = ps_port_recv(port, &from, &fport, msgbuf, sizeof(msgbuf),
				 0)) >= 0) {
		arrived = false;
		STAT(ST_MSG_IN);
		dispatch(from, fport, msgbuf, n, &d);
	}
	return d.got;
}

void psock_pump_arrived(void)
{
	if (heir || touch_due)
		psock_pump();
	else if (port && ps_port_arrived(port))	/* no second look */
		psock_pump_into(NULL, NULL, 0, true);
}

void psock_pump_for(const struct psock_conn *c)
{
	psock_pump_into(c, NULL, 0, false);
}

void psock_pump(void)
{
	psock_pump_into(NULL, NULL, 0, false);
}

/* ---- set-up ---- */

/* IPv4 address and port of sa (IPv4, or IPv4-mapped IPv6); false else. */
bool psock_ipv4_of(const struct sockaddr *sa, socklen_t len, in_addr_t *a,
		    int *port_no)
{
	const struct sockaddr_in *v4 = (const void *)sa;
	const struct sockaddr_in6 *v6 = (const void *)sa;

	if (sa && len >= sizeof(*v4) && sa->sa_family == AF_INET) {
		*a = v4->sin_addr.s_addr;
		*port_no = ntohs(v4->sin_port);
		return true;
	}
	if (sa && len >= sizeof(*v6) && sa->sa_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
		memcpy(a, &v6->sin6_addr.s6_addr[12], sizeof(*a));
		*port_no = ntohs(v6->sin6_port);
		return true;
	}
	return false;
}

void psock_local_peer(unsigned int node)
{
	if (local_peer || !port || node != ps_port_node(port))
		return;
	/* our peer shares our CPU: spinning on the NIC would hold it off */
	ps_port_stall(port, 0);
	local_peer = true;
	psock_say("a peer on this node: waits sleep at once");
}

int psock_node_at(in_addr_t a)
{
	bool local = psock_options()->local;
	int node;

	/* the kernel's loopback is the faster local path on these guests
	 * (docs/psock.md); PS_SOCK_LOCAL=1 takes the node's pool instead */
	if ((ntohl(a) >> 24) == 127)	/* loopback: this node */
		node = local && psock_port() ? (int)ps_port_node(port) : -1;
	else
		node = psock_node_of(a);
	if (node >= 0 && !local && psock_port() &&
	    (unsigned int)node == ps_port_node(port))
		return -1;
	return node;
}

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
	c->undecided = true;
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
	c->hello_due = true;
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

	c->hello_due = false;
	if (!psock_port() || c->id >= PSOCK_CONN_IDS) {
		c->kernel_only = true;	/* no HELLO: the client stays too */
		return;
	}
	strncpy(h.nic, ps_port_nic(port), sizeof(h.nic) - 1);
	h.node = ps_port_node(port);
	h.port = ps_port_id(port);
	h.conn = c->id;
	h.nonce = c->nonce;
	/* the first bytes of the stream, so there is room: all or nothing */
	if (sys_send(fd, &h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    sizeof(h))
		c->kernel_only = true;
}

void psock_decide(int fd, struct psock_conn *c)
{
	struct psock_hello h;
	ssize_t n;
	int node;

	if (c->hello_due)
		hello(fd, c);
	if (!c->undecided)
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
		c->undecided = false;
		if (memcmp(h.magic, PSOCK_MAGIC, sizeof(h.magic))) {
			psock_say("conn %u: the server runs another version (%.8s): kernel",
				  c->id, h.magic);
			c->kernel_only = true;
			return;
		}
		if (!psock_port() || c->id >= PSOCK_CONN_IDS) {
			c->kernel_only = true;	/* never SWITCH: nor does
						 * the server */
			return;
		}
		if (!peer_node_of(fd, &node, false) || node != h.node ||
		    h.port >= PS_PORTS_MAX) {
			psock_say("conn %u: bad HELLO; reset", c->id);
			c->reset = true;
			return;
		}
		if (strncmp(h.nic, ps_port_nic(port), sizeof(h.nic))) {
			/* never switch: the server stays on the kernel too */
			psock_say("conn %u: the server uses %.8s, not %s: kernel",
			    c->id, h.nic, ps_port_nic(port));
			c->kernel_only = true;
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
		switch_tx(c);
		return;
	}
	/* anything else first (or an error, or EOF): not one of ours */
	c->undecided = false;
	c->kernel_only = true;
	psock_say("conn %u: the server is not ours: kernel", c->id);
}

/* ---- tear-down ---- */

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
	/* another process may hold it still: its end is the kernel's FIN */
	if (!c->kernel_only && !c->inherited && !c->shared && c->tx_ports &&
	    !c->fin_sent && !c->reset) {
		psock_pump();
		psock_msg_send(c, PSOCK_FIN, c->tx_sent, NULL, 0, 0);
	}
	psock_say("conn %u: closed (sent %llu+%llu, got %llu+%llu)", c->id,
	    (unsigned long long)c->tx_kernel, (unsigned long long)c->tx_sent,
	    (unsigned long long)c->rx_kernel, (unsigned long long)c->rx_got);
	psock_conn_free(c);
}

/* At exit: FIN for every connection still open, then the port. */
unsigned long psock_stats[ST_N];

__attribute__((destructor)) static void psock_exit(void)
{
	psock_say("stats: poll %lu (slept %lu, on the NIC %lu, on the "
		  "doorbell alone %lu, kernel not asked %lu, spun %lu, in "
		  "vain %lu), epoll %lu "
		  "(slept %lu), messages in %lu, out %lu, slow sends %lu, "
		  "read waits %lu, signals put off %lu, stalls of a spinner "
		  "%lu (in epoll_wait %lu)", psock_stats[ST_POLL],
		  psock_stats[ST_POLL_SLEEP], psock_stats[ST_POLL_NIC],
		  psock_stats[ST_POLL_BELL], psock_stats[ST_POLL_UNASKED],
		  psock_stats[ST_POLL_SPIN], psock_stats[ST_POLL_SPUN],
		  psock_stats[ST_EPOLL], psock_stats[ST_EPOLL_SLEEP],
		  psock_stats[ST_MSG_IN], psock_stats[ST_MSG_OUT],
		  psock_stats[ST_SEND_SLOW], psock_stats[ST_RECV_WAIT],
		  psock_stats[ST_SIG_DEFERRED], psock_stats[ST_IDLE_STALL],
		  psock_stats[ST_IDLE_STALL_EPOLL]);
	psock_lock();
	for (int fd = 0; fd < psock_fd_limit(); fd++)
		if (psock_get(fd))
			psock_close(fd);
	/* a child may adopt it (psock_claim()); a thread that waits on it
	 * still uses it (the pool frees a dead process's port) */
	if (port && !port_shared && !port_waiters) {
		ps_port_t *p = port;

		port = NULL;
		ps_port_close(p);
	}
	port = NULL;
	psock_unlock();
}
