/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: messages out over ports (wire.h has them), and
 * the switch of our direction from the kernel stream to ports.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "psock.h"
#include "wire.h"

/* One message in or out at a time, under the lock: dispatch.c receives
 * into it too. */
uint8_t psock_msgbuf[PS_PORT_MSG_MAX];

/* The message in psock_msgbuf found no room at the peer's node: wait while
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
	} while (ps_port_send_timed(psock_port_ours, c->peer_node, c->peer_port,
				    psock_msgbuf, len, PSOCK_SEND_CHECK_MS));
	return 0;
}

/* The len bytes in psock_msgbuf to c's peer. */
static __always_inline int msg_out(struct psock_conn *c, size_t len)
{
	STAT(ST_MSG_OUT);
	if (!ps_port_send_timed(psock_port_ours, c->peer_node, c->peer_port,
				psock_msgbuf, len,
				c->dgram ? 0 : PSOCK_SEND_CHECK_MS))
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

	memcpy(psock_msgbuf, &h, sizeof(h));
}

/* The header of a message of type other than DATA from c to its peer */
static struct psock_msg msg_header(const struct psock_conn *c, uint8_t type,
				   uint64_t count)
{
	return (struct psock_msg){
		.type = type, .dconn = c->peer_conn, .dnonce = c->peer_nonce,
		.sconn = c->id, .snonce = c->nonce, .count = count,
	};
}

int psock_msg_send(struct psock_conn *c, uint8_t type, uint64_t count,
		    const struct iovec *iov, int iovcnt, size_t len)
{
	struct psock_msg m = msg_header(c, type, count);
	size_t off = sizeof(m);

	if (type == PSOCK_DATA) {
		put_data_hdr(c);
		off = PSOCK_DATA_HDR;
	} else {
		memcpy(psock_msgbuf, &m, sizeof(m));
	}
	for (int i = 0; i < iovcnt && len; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(psock_msgbuf + off, iov[i].iov_base, n);
		off += n;
		len -= n;
	}
	return msg_out(c, off);
}

int psock_data_send(struct psock_conn *c, const void *buf, size_t len)
{
	put_data_hdr(c);
	psock_copy(psock_msgbuf + PSOCK_DATA_HDR, buf, len);
	return msg_out(c, PSOCK_DATA_HDR + len);
}

unsigned int psock_owed_conns;

static void owe(struct psock_conn *c, uint8_t what)
{
	if (!(c->owed & what))
		STAT(ST_OWED);
	if (!c->owed)
		psock_owed_conns++;
	c->owed |= what;
}

static void paid(struct psock_conn *c, uint8_t what)
{
	c->owed &= ~what;
}

/*
 * A message of the library's own to c's peer, without waiting for room
 * there (enum psock_owed): qperf's client, reading the port its server's
 * child sent, waited for room for its SWITCH at a node whose processes
 * were in accept() and waitpid(), which waited for the client.  false:
 * not sent (no room yet, or c is reset).
 */
static bool ctl_send(struct psock_conn *c, uint8_t type, uint64_t count)
{
	struct psock_msg m = msg_header(c, type, count);

	if (!ps_port_send_timed(psock_port_ours, c->peer_node, c->peer_port,
				&m, sizeof(m), PS_PORT_NO_WAIT)) {
		STAT(ST_MSG_OUT);
		return true;
	}
	if (errno != ETIMEDOUT) {
		psock_say("conn %u: send to node %u port %d: %s", c->id,
		    c->peer_node, c->peer_port, strerror(errno));
		c->reset = true;
	}
	return false;
}

/* Our direction moves to ports: the peer reads tx_kernel bytes first. */
void psock_switch_tx(struct psock_conn *c)
{
	bool shut = c->tx_state == PSOCK_TX_KERNEL_SHUT;

	if (psock_tx_on_ports(c) || c->reset)
		return;
	if (!ctl_send(c, PSOCK_SWITCH, c->tx_kernel)) {
		if (!c->reset)	/* till then our bytes go on the kernel */
			owe(c, PSOCK_OWED_SWITCH);
		return;
	}
	paid(c, PSOCK_OWED_SWITCH);
	c->tx_state = shut ? PSOCK_TX_PORTS_SHUT : PSOCK_TX_PORTS;
	psock_alive_start(c);
	psock_say("conn %u: sends over ports after %llu kernel bytes", c->id,
	    (unsigned long long)c->tx_kernel);
	if (shut)	/* shut down before: nothing will follow */
		psock_msg_send(c, PSOCK_FIN, 0, NULL, 0, 0);
}

void psock_win_send(struct psock_conn *c)
{
	if (!c->peer_known || c->reset)
		return;
	if (ctl_send(c, PSOCK_WIN, c->rx_used)) {
		c->rx_win = c->rx_used;
		paid(c, PSOCK_OWED_WIN);
	} else if (!c->reset) {
		owe(c, PSOCK_OWED_WIN);
	}
}

/* From the pump: what is owed, again; the count is made anew, so that
 * connections closed meanwhile drop out of it. */
void psock_owed_send(void)
{
	unsigned int still = 0;

	for (uint32_t id = 0; id < psock_conn_limit(); id++) {
		struct psock_conn *c = psock_conn_at(id);

		if (!c || !c->owed)
			continue;
		if (c->reset || c->state == PSOCK_KERNEL) {
			c->owed = 0;
			continue;
		}
		if (c->state == PSOCK_INHERITED) {	/* once adopted */
			still++;
			continue;
		}
		if (c->owed & PSOCK_OWED_SWITCH)
			psock_switch_tx(c);
		if ((c->owed & PSOCK_OWED_WIN) && !c->reset)
			psock_win_send(c);
		still += !!c->owed;
	}
	psock_owed_conns = still;
}
