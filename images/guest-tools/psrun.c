// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * psrun [--hal ps1|myri] PROGRAM [ARG...]: run an unmodified program with
 * ParaStation sockets (LD_PRELOAD of /usr/lib/libpsock.so, docs/psock.md).
 * Its TCP connections to other cluster nodes then go over the NIC; the
 * rest stays on the kernel.  The environment passes on to its children.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PSOCK_LIB "/usr/lib/libpsock.so"

static int usage(void)
{
	fprintf(stderr, "usage: psrun [--hal ps1|myri] PROGRAM [ARG...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *lib = getenv("PSOCK_LIB"), *old = getenv("LD_PRELOAD");
	int i = 1;
	char *pre;

	if (i + 1 < argc && !strcmp(argv[i], "--hal")) {
		if (strcmp(argv[i + 1], "ps1") && strcmp(argv[i + 1], "myri")) {
			fprintf(stderr, "psrun: --hal takes ps1 or myri, not "
				"'%s'\n", argv[i + 1]);
			return 2;
		}
		setenv("PS_HAL", argv[i + 1], 1);
		i += 2;
	}
	if (i >= argc || argv[i][0] == '-')
		return usage();
	if (!lib || !*lib)
		lib = PSOCK_LIB;
	if (access(lib, R_OK)) {
		fprintf(stderr, "psrun: %s: %s\n", lib, strerror(errno));
		return 127;
	}
	if (asprintf(&pre, old && *old ? "%s:%s" : "%s", lib, old) < 0)
		return 127;
	setenv("LD_PRELOAD", pre, 1);
	execvp(argv[i], argv + i);
	fprintf(stderr, "psrun: %s: %s\n", argv[i], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
