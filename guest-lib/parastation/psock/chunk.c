/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: the chunks that hold what came over ports until
 * the program reads it.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "psock.h"

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
