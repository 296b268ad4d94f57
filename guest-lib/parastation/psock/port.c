/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: our ports port, opened on first use, and the
 * parent's after fork (ours once the parent has gone); the waits on the
 * NIC and the port's doorbell; at exit, the connections ended and the
 * port closed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "psock.h"

ps_port_t *psock_port_ours;
ps_port_t *psock_port_heir;
enum psock_port_state psock_port_state;
static int64_t heir_ms;		/* since (fork) */
static bool local_peer;		/* a peer on this node: port does not stall */
static int port_waiters;	/* threads in psock_port_wait(): the port
				 * stays open at exit for them */

/* The port our parent left: ours, with its connections, once it exits. */
bool psock_claim(void)
{
	if (!psock_port_heir)
		return false;
	if (ps_port_adopt(psock_port_heir)) {
		if (errno == EBUSY &&
		    psock_ms_now() - heir_ms < PSOCK_ADOPT_MS)
			return true;	/* the parent lives: later */
		ps_port_t *gone = psock_port_heir;

		psock_say("port %d stays our parent's: %s",
			  ps_port_id(psock_port_heir),
			  strerror(errno));
		/* first: psock_own_fd() lets close() go */
		psock_port_heir = NULL;
		ps_port_forget(gone);
		return false;
	}
	psock_port_ours = psock_port_heir;
	psock_port_heir = NULL;
	psock_port_state = PSOCK_PORT_OWN;
	for (uint32_t i = 0; i < psock_conn_limit(); i++)
		if (psock_conn_at(i) &&
		    psock_conn_at(i)->state == PSOCK_INHERITED)
			psock_conn_at(i)->state = PSOCK_OURS;
	psock_say("port %d adopted: our parent has gone",
		  ps_port_id(psock_port_ours));
	return false;
}

ps_port_t *psock_port(void)
{
	if (psock_port_state != PSOCK_PORT_UNOPENED)
		return psock_port_ours;
	if (psock_port_heir) {
		psock_claim();
		if (psock_port_ours)
			return psock_port_ours;
		/* one port per process: ours, from now on */
		if (psock_port_heir) {
			ps_port_t *gone = psock_port_heir;

			psock_say("port %d stays our parent's",
				  ps_port_id(psock_port_heir));
			psock_port_heir = NULL;
			ps_port_forget(gone);
		}
	}
	if (psock_options()->off) {
		psock_port_state = PSOCK_PORT_NONE;
		return NULL;
	}
	psock_port_ours = ps_port_open(PS_PORT_ANY);
	/* PS_HAL unset: the ParaStation board, else the Myrinet card (a
	 * cluster's nodes all have the same, so both ends choose alike) */
	if (!psock_port_ours && errno == ENODEV && !getenv("PS_HAL")) {
		setenv("PS_HAL", "myri", 1);	/* children choose the same */
		psock_port_ours = ps_port_open(PS_PORT_ANY);
		if (!psock_port_ours)
			unsetenv("PS_HAL");
	}
	if (!psock_port_ours) {
		psock_say("no ports (%s): sockets stay on the kernel",
			  strerror(errno));
		psock_port_state = PSOCK_PORT_NONE;
	} else {
		psock_port_state = PSOCK_PORT_OWN;
		psock_say("port %d on node %u (%s)", ps_port_id(psock_port_ours),
			  ps_port_node(psock_port_ours),
			  ps_port_nic(psock_port_ours));
	}
	return psock_port_ours;
}

ps_port_t *psock_port_now(void)
{
	return psock_port_ours;
}

bool psock_port_shared(void)
{
	return psock_port_state == PSOCK_PORT_FORKED ||
	       psock_port_state == PSOCK_PORT_SHARED;
}

void psock_port_resumed(ps_port_t *p, bool shared)
{
	psock_port_ours = p;
	psock_port_state = shared ? PSOCK_PORT_SHARED : PSOCK_PORT_OWN;
	psock_say("port %d on node %u (%s), kept across exec", ps_port_id(p),
		  ps_port_node(p), ps_port_nic(p));
}

bool psock_own_fd(int fd)
{
	return fd >= 0 &&
	       ((psock_port_ours && (fd == ps_port_poll_fd(psock_port_ours) ||
			  fd == ps_port_bell_fd(psock_port_ours))) ||
		(psock_port_heir && (fd == ps_port_poll_fd(psock_port_heir) ||
			  fd == ps_port_bell_fd(psock_port_heir))));
}

int psock_bell_fd(void)
{
	return psock_port_ours ? ps_port_bell_fd(psock_port_ours) : -1;
}

int psock_nic_fd(void)
{
	return psock_port_ours ? ps_port_poll_fd(psock_port_ours) : -1;
}

bool psock_nic_sleep(bool *watch_nic)
{
	int err = errno;	/* after a poll() that was interrupted: EINTR */
	int watch = 1;
	bool queued = false;

	psock_lock();
	if (psock_port_ours)
		queued = ps_port_sleep(psock_port_ours, &watch);
	psock_unlock();
	*watch_nic = watch;
	errno = err;
	return queued;
}

bool psock_nic_watches(void)
{
	bool watch;

	psock_lock();
	watch = !psock_port_ours || ps_port_watches(psock_port_ours);
	psock_unlock();
	return watch;
}

int psock_sleep_ms(bool watch_nic)
{
	return psock_port_ours ? ps_port_sleep_ms(psock_port_ours, watch_nic) :
				 PS_PORT_POLL_MS;
}

void psock_nic_awake(bool watch_nic, bool rung)
{
	int err = errno;

	psock_lock();
	if (psock_port_ours)
		ps_port_awake(psock_port_ours, watch_nic, rung);
	psock_unlock();
	errno = err;
}

bool psock_port_spins(void)
{
	bool ok;

	psock_lock();
	ok = psock_port_ours && !local_peer && ps_port_watches(psock_port_ours);
	psock_unlock();
	return ok;
}

bool psock_port_arrived_within(int tries)
{
	bool got = false;

	psock_lock();
	for (int i = 0; i < tries && psock_port_ours && !got; i++)
		got = ps_port_arrived(psock_port_ours);
	psock_unlock();
	return got;
}

bool psock_port_wait(int timeout_ms)
{
	ps_port_t *p = psock_port_ours;
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
	if (psock_port_ours)
		psock_port_state = PSOCK_PORT_FORKED;
	for (uint32_t i = 0; i < psock_conn_limit(); i++)
		if (psock_conn_at(i))
			psock_conn_at(i)->shared = true;
}

void psock_forked_child(void)
{
	/* the port and its messages stay the parent's while it lives
	 * (a daemon's parent exits: then we adopt them, psock_claim()) */
	if (psock_port_ours) {
		psock_port_heir = psock_port_ours;
		heir_ms = psock_ms_now();
	}
	psock_port_ours = NULL;
	port_waiters = 0;	/* the parent's threads */
	psock_port_state = PSOCK_PORT_UNOPENED;
	local_peer = false;
	/* a client still waiting for its HELLO, and a server that has not
	 * written its HELLO yet, go on with a port of their own; the others'
	 * peers send to the parent's port */
	for (uint32_t i = 0; i < psock_conn_limit(); i++) {
		struct psock_conn *c = psock_conn_at(i);

		if (!c)
			continue;
		c->shared = true;
		if (c->state != PSOCK_KERNEL &&
		    (c->dgram ? c->udp.port != 0 : c->peer_known ||
		     (c->role == PSOCK_SERVER &&
		      c->state != PSOCK_HELLO_DUE)))
			c->state = psock_port_heir ? PSOCK_INHERITED :
						     PSOCK_OURS;
	}
}

void psock_local_peer(unsigned int node)
{
	if (local_peer || !psock_port_ours ||
	    node != ps_port_node(psock_port_ours))
		return;
	/* our peer shares our CPU: spinning on the NIC would hold it off */
	ps_port_stall(psock_port_ours, 0);
	local_peer = true;
	psock_say("a peer on this node: waits sleep at once");
}

/* At exit: FIN for every connection still open, then the port. */
__attribute__((destructor)) static void psock_exit(void)
{
	psock_say_stats();
	psock_lock();
	for (int fd = 0; fd < psock_fd_limit(); fd++)
		if (psock_get(fd))
			psock_close(fd);
	/* a child may adopt it (psock_claim()); a thread that waits on it
	 * still uses it (the pool frees a dead process's port) */
	if (psock_port_state == PSOCK_PORT_OWN && psock_port_ours &&
	    !port_waiters) {
		ps_port_t *p = psock_port_ours;

		psock_port_ours = NULL;
		ps_port_close(p);
	}
	/* a socket call after this (another destructor's) opens one again */
	psock_port_ours = NULL;
	psock_port_state = PSOCK_PORT_UNOPENED;
	psock_unlock();
}
