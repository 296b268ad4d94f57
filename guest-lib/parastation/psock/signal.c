/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: which signals interrupted a wait.
 *
 * Our waits are not all system calls: a spin or a stall on the NIC does
 * not end when a signal's handler runs, as the kernel's sleeps do
 * (EINTR).  So the program's handlers run behind one of ours, which
 * counts what this thread got; a wait that sees the count move ends with
 * EINTR, or goes on where the handler asked for SA_RESTART and the call
 * is one the kernel restarts (signal(7)).  sigaction() and signal() are
 * ours for that; a query returns the program's handler.
 * A handler that comes while its thread holds the library's lock runs
 * after (lock.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "psock.h"

#define API __attribute__((visibility("default")))

/* Counted in the handler: initial-exec TLS takes no lock to reach. */
static __thread struct psock_intr got
	__attribute__((tls_model("initial-exec")));

/*
 * The program's handler for each signal (SIG_DFL: none of its own), in
 * two slots: a change writes the other one, then moves ver on, so a
 * handler on another thread that copied a slot meanwhile copies again.
 */
static struct sigaction slot[_NSIG][2];
static unsigned int ver[_NSIG];
static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;

static int (*libc_sigaction)(int, const struct sigaction *,
			     struct sigaction *);

static void program_handler(int sig, struct sigaction *a)
{
	unsigned int v;

	do {
		v = __atomic_load_n(&ver[sig], __ATOMIC_ACQUIRE);
		memcpy(a, &slot[sig][v & 1], sizeof(*a));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&ver[sig], __ATOMIC_RELAXED) != v);
}

/* With set_lock held. */
static void set_program_handler(int sig, const struct sigaction *a)
{
	unsigned int v = ver[sig] + 1;

	if (a) {
		slot[sig][v & 1] = *a;
	} else {
		memset(&slot[sig][v & 1], 0, sizeof(slot[sig][v & 1]));
		slot[sig][v & 1].sa_handler = SIG_DFL;
	}
	__atomic_store_n(&ver[sig], v, __ATOMIC_RELEASE);
}

/* A handler of the program's, not SIG_DFL or SIG_IGN (by its value:
 * SA_SIGINFO beside them still means the default or ignoring). */
static bool catches(const struct sigaction *a)
{
	return a->sa_handler != SIG_IGN && a->sa_handler != SIG_DFL;
}

void psock_signal_run(int sig, siginfo_t *si, void *uc,
		      const struct sigaction *a)
{
	int err = errno;

	got.all++;
	if (!(a->sa_flags & SA_RESTART))
		got.norestart++;
	errno = err;
	if (!catches(a))
		return;
	if (a->sa_flags & SA_SIGINFO) {
		a->sa_sigaction(sig, si, uc);
	} else {
		/* the kernel passes all three: some handlers read them */
		void (*three)(int, siginfo_t *, void *) =
			(void (*)(int, siginfo_t *, void *))(void (*)(void))
			a->sa_handler;

		three(sig, si, uc);
	}
	/* one that runs as the lock is given up comes after the call set
	 * errno (a handler should keep it, not all do) */
	errno = err;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a;
	int err = errno;

	program_handler(sig, &a);
	if (catches(&a) && psock_lock_defers(sig, si, uc, &a)) {
		errno = err;
		return;
	}
	psock_signal_run(sig, si, uc, &a);
}

void psock_intr_mark(struct psock_intr *m)
{
	*m = got;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

int psock_intr_since(const struct psock_intr *m)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (got.norestart != m->norestart)
		return PSOCK_INTR;
	return got.all != m->all ? PSOCK_INTR_RESTART : 0;
}

void psock_wait_begin(struct psock_wait_sig *w, const sigset_t *mask)
{
	w->mask = mask;
	if (mask)
		pthread_sigmask(SIG_BLOCK, mask, &w->saved);
	psock_intr_mark(&w->intr);
}

void psock_wait_end(const struct psock_wait_sig *w)
{
	int err = errno;

	if (w->mask)
		pthread_sigmask(SIG_SETMASK, &w->saved, NULL);
	errno = err;
}

static pid_t own_pid;	/* a vfork child shares our table: not its own */

bool psock_vfork_child(void)
{
	return getpid() != own_pid;
}

static void forked_child(void)
{
	pthread_mutex_init(&set_lock, NULL);	/* held by a thread we lost */
	own_pid = getpid();
}

__attribute__((constructor)) static void signals_init(void)
{
	libc_sigaction = dlsym(RTLD_NEXT, "sigaction");
	own_pid = getpid();
	pthread_atfork(NULL, NULL, forked_child);
}

/* The kernel's answer about ours, as the program's handler would give it. */
static void as_program(struct sigaction *old, const struct sigaction *prog)
{
	old->sa_sigaction = prog->sa_sigaction;
	if (!(prog->sa_flags & SA_SIGINFO))
		old->sa_flags &= ~SA_SIGINFO;
}

API int sigaction(int sig, const struct sigaction *act,
		  struct sigaction *old)
{
	struct sigaction ours, prev;
	sigset_t all, mask;
	bool known = sig > 0 && sig < _NSIG, wrap;
	int ret, err;

	if (!libc_sigaction)
		libc_sigaction = dlsym(RTLD_NEXT, "sigaction");
	if (!libc_sigaction) {
		errno = ENOSYS;
		return -1;
	}
	/* ours given back to us (sigset() and siginterrupt() see the
	 * kernel's), or a vfork child: the kernel's, the table untouched */
	if ((act && known && (act->sa_flags & SA_SIGINFO) &&
	     act->sa_sigaction == on_signal) || psock_vfork_child())
		return libc_sigaction(sig, act, old);
	wrap = act && known && catches(act);
	if (wrap) {
		ours = *act;
		ours.sa_sigaction = on_signal;
		/* SA_RESETHAND stays: the kernel's reset puts SIG_DFL in
		 * place of ours, and a query says so */
		ours.sa_flags |= SA_SIGINFO;
	}
	/* no handler of this thread may run while it holds the lock */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &mask);
	pthread_mutex_lock(&set_lock);
	if (known)
		program_handler(sig, &prev);
	/* the program's before ours: a signal between finds it */
	if (wrap)
		set_program_handler(sig, act);
	ret = libc_sigaction(sig, wrap ? &ours : act, old);
	err = errno;
	if (ret && wrap)
		set_program_handler(sig, &prev);
	else if (!ret && act && !wrap && known)
		set_program_handler(sig, NULL);
	if (!ret && old && (old->sa_flags & SA_SIGINFO) &&
	    old->sa_sigaction == on_signal)
		as_program(old, &prev);
	pthread_mutex_unlock(&set_lock);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	errno = err;
	return ret;
}

/* glibc's signal(): BSD semantics (SA_RESTART, the handler stays). */
API sighandler_t signal(int sig, sighandler_t h)
{
	struct sigaction a = { .sa_handler = h, .sa_flags = SA_RESTART },
			 old;

	if (h == SIG_ERR || sig <= 0 || sig >= _NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&a.sa_mask);
	sigaddset(&a.sa_mask, sig);
	if (sigaction(sig, &a, &old))
		return SIG_ERR;
	return old.sa_handler;
}

API sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return signal(sig, h);
}

/* System V semantics: reset on delivery, not blocked in the handler */
API sighandler_t sysv_signal(int sig, sighandler_t h)
{
	struct sigaction a = { .sa_handler = h,
			       .sa_flags = SA_RESETHAND | SA_NODEFER },
			 old;

	if (h == SIG_ERR || sig <= 0 || sig >= _NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&a.sa_mask);
	if (sigaction(sig, &a, &old))
		return SIG_ERR;
	return old.sa_handler;
}

/* What <signal.h> calls signal() without _DEFAULT_SOURCE (-std=c99). */
API sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return sysv_signal(sig, h);
}
