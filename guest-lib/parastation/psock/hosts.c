/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: the cluster's addresses, from the "A.B.C.D nodeN"
 * lines of /etc/hosts (or PS_SOCK_HOSTS), and which node the NIC reaches
 * an address on.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "psock.h"

#define MAX_NODES	1024

static in_addr_t node_addr[MAX_NODES];	/* IPv4 of nodeN, network order */
static unsigned int hosts_nodes;
static bool hosts_read;

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

int psock_node_at(in_addr_t a)
{
	bool local = psock_options()->local;
	int node;

	/* the kernel's loopback is the faster local path on these guests
	 * (docs/psock.md); PS_SOCK_LOCAL=1 takes the node's pool instead */
	if ((ntohl(a) >> 24) == 127)	/* loopback: this node */
		node = local && psock_port() ?
		       (int)ps_port_node(psock_port_ours) : -1;
	else
		node = psock_node_of(a);
	if (node >= 0 && !local && psock_port() &&
	    (unsigned int)node == ps_port_node(psock_port_ours))
		return -1;
	return node;
}
