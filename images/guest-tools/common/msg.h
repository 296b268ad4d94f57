/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How the tools complain on stderr: one line, "PROG: message", so that a
 * log that mixes several programs' output says which one it was.
 */
#ifndef VC_GUEST_MSG_H
#define VC_GUEST_MSG_H

#include <stdarg.h>
#include <stdio.h>

static inline void vmsg(const char *prog, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

#endif /* VC_GUEST_MSG_H */
