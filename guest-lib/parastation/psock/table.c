/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: the tables.  Connections by id (the id the peer
 * names in every message), and by descriptor (what the program holds; a
 * dup names the same connection).  psock_get() may be called without the
 * lock: a table that grows is published whole, and the old one stays.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "psock.h"

static struct psock_conn **conns;	/* by id */
static uint32_t nconns;
struct psock_conn **psock_fdmap;	/* by descriptor (psock_get()) */
int psock_nfdmap;

uint32_t psock_conn_limit(void)
{
	return nconns;
}

struct psock_conn *psock_conn_at(uint32_t id)
{
	return id < nconns ? conns[id] : NULL;
}

int psock_fd_limit(void)
{
	return psock_nfdmap;
}

int psock_fd_of(const struct psock_conn *c)
{
	for (int i = 0; i < psock_nfdmap; i++)
		if (psock_fdmap[i] == c)
			return i;
	return -1;
}

static bool conns_grow(uint32_t id)
{
	uint32_t n = nconns ? nconns : 16;
	struct psock_conn **t;

	while (n <= id)
		n *= 2;
	if (n == nconns)
		return true;
	t = realloc(conns, n * sizeof(*t));
	if (!t)
		return false;
	memset(t + nconns, 0, (n - nconns) * sizeof(*t));
	conns = t;
	nconns = n;
	return true;
}

bool psock_conn_place(struct psock_conn *c)
{
	if (!conns_grow(c->id) || conns[c->id])
		return false;
	conns[c->id] = c;
	return true;
}

struct psock_conn *psock_conn_new(int role)
{
	struct psock_conn *c = calloc(1, sizeof(*c));
	uint32_t i;

	if (!c)
		return NULL;
	for (i = 0; i < nconns && conns[i]; i++)
		;
	if (!conns_grow(i)) {
		free(c);
		return NULL;
	}
	if (getrandom(&c->nonce, sizeof(c->nonce), GRND_NONBLOCK) !=
	    sizeof(c->nonce))
		c->nonce = (uint32_t)(psock_ms_now() * 0x9e3779b97f4a7c15ull) ^
			   getpid();
	c->id = i;
	c->role = role;
	conns[i] = c;
	return c;
}

void psock_conn_free(struct psock_conn *c)
{
	struct psock_chunk *k;

	while ((k = c->head)) {
		c->head = k->next;
		psock_chunk_done(k);
	}
	conns[c->id] = NULL;
	free(c);
}

bool psock_fd_set(int fd, struct psock_conn *c)
{
	if (fd < 0)
		return false;
	if (fd >= psock_nfdmap) {
		int n = fd < 64 ? 128 : fd * 2;
		struct psock_conn **t = calloc(n, sizeof(*t));

		if (!t)
			return false;
		if (psock_nfdmap)
			memcpy(t, psock_fdmap, psock_nfdmap * sizeof(*t));
		/* the old table stays: a thread may still read it without
		 * the lock (at most as much again as the last one) */
		__atomic_store_n(&psock_fdmap, t, __ATOMIC_RELEASE);
		__atomic_store_n(&psock_nfdmap, n, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&psock_fdmap[fd], c, __ATOMIC_RELEASE);
	if (c && !c->refs++)
		c->kfd = fd;
	return true;
}

/* The UDP socket of ours bound to port udp_port, or NULL. */
struct psock_conn *psock_udp_find(uint16_t udp_port)
{
	for (uint32_t i = 0; i < nconns; i++)
		if (conns[i] && conns[i]->dgram &&
		    conns[i]->udp.port == udp_port)
			return conns[i];
	return NULL;
}

void psock_dup(int fd, int newfd)
{
	struct psock_conn *c = psock_get(fd);

	if (c && newfd != fd)
		psock_fd_set(newfd, c);
}
