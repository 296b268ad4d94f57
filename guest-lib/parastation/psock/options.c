/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: the settings, from the PS_SOCK* variables of the
 * environment (docs/psock.md lists them), read together on first use.
 *
 * PS_HAL is not among them: it is the ports library's (hal.c), and
 * port.c sets it for the children when it picks the NIC.  PSOCK_EXEC is
 * no setting either: exec.c hands the connections to the next image in
 * it.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "psock.h"

struct psock_options psock_opt;
bool psock_opt_read;

/* Set and not "0". */
static bool on(const char *v)
{
	return v && *v && strcmp(v, "0");
}

void psock_options_read(void)
{
	const char *off = getenv("PS_SOCK");
	const char *debug = getenv("PS_SOCK_DEBUG");
	const char *hosts = getenv("PS_SOCK_HOSTS");
	const char *spin = getenv("PS_SOCK_SPIN_US");
	const char *gap = getenv("PS_SOCK_IDLE_GAP_US");

	psock_opt.off = off && !strcmp(off, "0");
	psock_opt.debug = on(debug);
	psock_opt.debug_file = psock_opt.debug && *debug == '/' ? debug : NULL;
	psock_opt.hosts = hosts && *hosts ? hosts : "/etc/hosts";
	psock_opt.local = on(getenv("PS_SOCK_LOCAL"));
	psock_opt.spin_max_us = spin ? atoi(spin) : PSOCK_SPIN_US_DEFAULT;
	if (psock_opt.spin_max_us < 0)
		psock_opt.spin_max_us = 0;
	psock_opt.idle_gap_us = gap && atoi(gap) >= 0 ? atoi(gap) :
			       PSOCK_IDLE_GAP_US_DEFAULT;
	__atomic_store_n(&psock_opt_read, true, __ATOMIC_RELEASE);
}
