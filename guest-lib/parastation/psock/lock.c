/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: the library's lock, and the signal handlers that
 * wait for it.
 *
 * One lock per process guards the library's state.  A handler of the
 * program's that comes while its thread holds the lock runs once the
 * thread gives it up: it may call the library (send() is
 * async-signal-safe), which would wait for the lock for ever, and must
 * not find the library half way through a change.  So the lock word
 * holds its owner's thread id, taken and given in one atomic step: a
 * handler knows exactly whether its thread holds it (a thread that only
 * waits for it runs its handlers at once).  Ours then blocks the signal
 * in the context it returns to and queues it again; psock_unlock()
 * unblocks it, and the kernel delivers it then, with its siginfo.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "psock.h"

uint32_t psock_lock_word;	/* 0 free, else the owner's tid (| WAITERS) */

__thread uint32_t psock_tid __attribute__((tls_model("initial-exec")));
/* any_deferred || n_reset_kept: psock_unlock() has work */
__thread bool psock_unlock_due __attribute__((tls_model("initial-exec")));
/* signals whose handlers wait for psock_unlock(), blocked and pending */
static __thread sigset_t deferred __attribute__((tls_model("initial-exec")));
static __thread bool any_deferred __attribute__((tls_model("initial-exec")));
/* exec: nothing waits for a lock that the new image does not have */
static __thread bool no_defer __attribute__((tls_model("initial-exec")));
/*
 * SA_RESETHAND handlers deferred: the kernel has put SIG_DFL in their
 * place, so a signal queued again would take that; the library runs them
 * itself at psock_unlock(), without the context (NULL).  Beyond these
 * many at once, one runs at once.
 */
#define RESET_KEPT	4
static __thread struct reset_kept {
	int sig;
	siginfo_t info;
	struct sigaction act;
} reset_kept[RESET_KEPT] __attribute__((tls_model("initial-exec")));
static __thread int n_reset_kept __attribute__((tls_model("initial-exec")));

static uint32_t self(void)
{
	if (!psock_tid)
		psock_tid = (uint32_t)syscall(SYS_gettid);
	return psock_tid;
}

static void futex(uint32_t *word, int op, uint32_t val)
{
	syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

/* errno kept: a futex wait fails with EAGAIN or EINTR, and the caller
 * may be about to return the errno of its own call */
void psock_lock_slow(void)
{
	uint32_t me = self(), v = 0;
	int err = errno;

	if (__atomic_compare_exchange_n(&psock_lock_word, &v, me, false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	for (;;) {
		v = __atomic_load_n(&psock_lock_word, __ATOMIC_RELAXED);
		if (!v) {
			/* others may sleep still: the unlock wakes one */
			if (__atomic_compare_exchange_n(&psock_lock_word, &v,
							me | PSOCK_LOCK_WAITERS,
							false, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED)) {
				errno = err;
				return;
			}
			continue;
		}
		if (!(v & PSOCK_LOCK_WAITERS) &&
		    !__atomic_compare_exchange_n(&psock_lock_word, &v,
						 v | PSOCK_LOCK_WAITERS, false,
						 __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			continue;
		futex(&psock_lock_word, FUTEX_WAIT, v | PSOCK_LOCK_WAITERS);
	}
}

/* The SA_RESETHAND handlers deferred, each with its mask, as the kernel
 * would run it (and its own signal blocked unless SA_NODEFER). */
static void run_reset_kept(void)
{
	while (n_reset_kept) {
		struct reset_kept k = reset_kept[--n_reset_kept];
		sigset_t mask = k.act.sa_mask, was;

		if (!(k.act.sa_flags & SA_NODEFER))
			sigaddset(&mask, k.sig);
		pthread_sigmask(SIG_BLOCK, &mask, &was);
		psock_signal_run(k.sig, &k.info, NULL, &k.act);
		pthread_sigmask(SIG_SETMASK, &was, NULL);
	}
}

/* The signals deferred and queued again: unblocked, they run now. */
static void run_deferred(void)
{
	sigset_t run = deferred;

	sigemptyset(&deferred);
	any_deferred = false;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_sigmask(SIG_UNBLOCK, &run, NULL);
}

void psock_unlock_slow(uint32_t was)
{
	if (was & PSOCK_LOCK_WAITERS)
		futex(&psock_lock_word, FUTEX_WAKE, 1);
	/* what comes from here on runs at once: the lock is not ours */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	psock_unlock_due = false;
	if (n_reset_kept)
		run_reset_kept();
	if (any_deferred)
		run_deferred();
}

void psock_lock_forked(void)
{
	uint32_t me = (uint32_t)syscall(SYS_gettid);

	/* The parent's thread held the lock at the fork.  It is the child's
	 * now (its own id), so that a handler that comes before the unlock
	 * is deferred, not run half way through psock_forked_child(). */
	psock_tid = me;
	__atomic_store_n(&psock_lock_word, me, __ATOMIC_RELAXED);
	n_reset_kept = 0;	/* the parent's signals, not the child's */
}

/* Raised by what the thread just did (a fault, abort()): run it now. */
static bool synchronous(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
	       sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS ||
	       sig == SIGABRT;
}

bool psock_lock_defers(int sig, siginfo_t *si, void *uc,
		       const struct sigaction *act)
{
	ucontext_t *ctx = uc;
	sigset_t one, was;
	uint32_t owner;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	owner = __atomic_load_n(&psock_lock_word, __ATOMIC_RELAXED) &
		~PSOCK_LOCK_WAITERS;
	if (no_defer || !ctx || synchronous(sig) || owner != self())
		return false;
	if (act->sa_flags & SA_RESETHAND) {
		if (n_reset_kept == RESET_KEPT)
			return false;
		reset_kept[n_reset_kept].sig = sig;
		reset_kept[n_reset_kept].info = *si;
		reset_kept[n_reset_kept].act = *act;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		n_reset_kept++;
		psock_unlock_due = true;
		STAT(ST_SIG_DEFERRED);
		return true;
	}
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_BLOCK, &one, &was);	/* SA_NODEFER: not yet */
	/* the real id: a fork child's cache is the parent's until
	 * psock_lock_forked() */
	if (syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), sig,
		    si)) {
		/* not queued (RLIMIT_SIGPENDING): it runs now, not never */
		pthread_sigmask(SIG_SETMASK, &was, NULL);
		return false;
	}
	sigaddset(&ctx->uc_sigmask, sig);
	sigaddset(&deferred, sig);
	any_deferred = true;
	psock_unlock_due = true;
	STAT(ST_SIG_DEFERRED);
	return true;
}

bool psock_lock_deferred(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return any_deferred || n_reset_kept;
}

void psock_lock_exec(bool execing)
{
	no_defer = execing;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!execing)
		return;
	/* deferred since psock_lock_deferred(): the new image would keep
	 * them blocked, with its default actions; they run before it */
	if (n_reset_kept)
		run_reset_kept();
	if (any_deferred)
		run_deferred();
}
