/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: messages in over ports, each handed to its
 * connection (or UDP socket); a reader's next DATA straight into its
 * buffer.
 */
#define _GNU_SOURCE
#include <string.h>

#include "psock.h"
#include "wire.h"

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
		if (!c || c->nonce != m.dnonce || c->state == PSOCK_KERNEL ||
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
	if (!c || c->nonce != m.dnonce || c->state == PSOCK_KERNEL)
		return;		/* closed since: what was on its way is lost */
	if (m.type == PSOCK_SWITCH) {
		c->peer_known = true;
		c->peer_node = from;
		c->peer_port = fport;
		c->peer_conn = m.sconn;
		c->peer_nonce = m.snonce;
		c->rx_limit = m.count;
		c->rx_state = c->rx_kernel < c->rx_limit ?
			      PSOCK_RX_KERNEL_LEFT : PSOCK_RX_PORTS;
		psock_switch_tx(c);
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
		c->kernel_woke = true;	/* its kernel FIN may be in: look */
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

	if (psock_port_heir)
		psock_claim();
	if (!psock_port_ours)
		return 0;
	if (psock_owed_conns)
		psock_owed_send();
	/* we go on after a fork: the child may not adopt */
	if (psock_port_state == PSOCK_PORT_FORKED) {
		ps_port_touch(psock_port_ours);
		psock_port_state = PSOCK_PORT_SHARED;
	}
	/* ps_port_quiet() is cheaper than a receive that finds nothing */
	while (!(c && c->rx_bytes) && !d.got &&
	       (arrived || !ps_port_quiet(psock_port_ours)) &&
	       (n = ps_port_recv(psock_port_ours, &from, &fport, psock_msgbuf,
				 sizeof(psock_msgbuf), 0)) >= 0) {
		arrived = false;
		STAT(ST_MSG_IN);
		dispatch(from, fport, psock_msgbuf, n, &d);
	}
	return d.got;
}

void psock_pump_arrived(void)
{
	if (psock_port_heir || psock_port_state == PSOCK_PORT_FORKED)
		psock_pump();
	else if (psock_port_ours &&
		 ps_port_arrived(psock_port_ours))	/* ask the NIC once */
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
