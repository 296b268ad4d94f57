/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The driver test tools' kernel-log check (ps1test, myritest, tgrtest dmesg):
 * print the lines that say a driver misbehaved (warnings, oopses, hung
 * tasks, lockdep, DMA-API) and count them.
 */
#ifndef _VC_KERNEL_LOG_H
#define _VC_KERNEL_LOG_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>

/* The number of such lines, or -1 when the log cannot be read. */
static inline int kernel_log_warnings(void)
{
	static const char *const bad[] = {
		"WARNING:", "BUG:", "Oops", "Call Trace", "sleeping function",
		"corruption", "refcount_t", "nobody cared", "general protection",
		"INFO: task", "possible circular locking", "DMA-API",
	};
	int len = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *log, *line, *save;
	unsigned int i;
	int hits = 0;

	log = calloc(1, len > 0 ? len + 1 : 1);
	if (!log)
		return -1;
	len = klogctl(3, log, len);	/* SYSLOG_ACTION_READ_ALL */
	if (len < 0) {
		perror("klogctl");
		free(log);
		return -1;
	}
	log[len] = 0;
	for (line = strtok_r(log, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			if (strstr(line, bad[i])) {
				printf("dmesg: %s\n", line);
				hits++;
				break;
			}
	free(log);
	return hits;
}

#endif /* _VC_KERNEL_LOG_H */
