/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fault that a check expects: SIGBUS from a mapping the driver took
 * away or a remote access that failed (or SIGSEGV). fault_catch(sig) makes
 * the signal note its code and address and jump back to fault_jmp, which
 * the check sets with sigsetjmp(fault_jmp, 1) just before the access;
 * sigsetjmp then returns the signal's number. (sigsetjmp must be called
 * in the frame it returns to, so it is not wrapped here.)
 */
#ifndef VC_GUEST_FAULT_H
#define VC_GUEST_FAULT_H

#include <setjmp.h>
#include <signal.h>
#include <string.h>

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_code;	/* si_code: BUS_ADRERR, ... */
static void *volatile fault_addr;		/* si_addr */

static inline void fault_jump(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	fault_code = si->si_code;
	fault_addr = si->si_addr;
	siglongjmp(fault_jmp, sig);
}

static inline void fault_catch(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_jump;
	sa.sa_flags = SA_SIGINFO;
	sigaction(sig, &sa, NULL);
}

#endif /* VC_GUEST_FAULT_H */
