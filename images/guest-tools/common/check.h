/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One "ok   ..." or "FAIL ..." line per check: the cluster scripts grep
 * for the two words, and a program's exit status follows the count of
 * failures. For ps1test, myritest, pstest, psstress, tgrcheck and
 * tgrbench (tgrtest has its own ok()/fail() lines).
 */
#ifndef VC_GUEST_CHECK_H
#define VC_GUEST_CHECK_H

#include <stdio.h>

/*
 * Failed checks. Static, one per file: every program that counts checks
 * makes them all in the file that includes this (tgrtool.c, which the
 * tgr tools share, makes none).
 */
static int fails;

#define CHECK(cond, ...)						\
	do {								\
		int _ok = !!(cond);	/* evaluated once */		\
		printf(_ok ? "ok   " : "FAIL ");			\
		fails += !_ok;						\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		fflush(stdout);						\
	} while (0)

#endif /* VC_GUEST_CHECK_H */
