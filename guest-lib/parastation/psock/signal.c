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
 *
 * A handler that comes while its thread holds psock_lock() waits until
 * the lock is given up: it may call the library (send() is
 * async-signal-safe), which would wait for the lock for ever, and must
 * not see the library half way through a change.  Ours blocks the signal
 * in the context it returns to and queues it again; psock_unlock()
 * unblocks it, and the kernel delivers it then.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <ucontext.h>

#include "psock.h"

#define API __attribute__((visibility("default")))

/* Counted in the handler: initial-exec TLS takes no lock to reach. */
static __thread struct psock_intr got
	__attribute__((tls_model("initial-exec")));
/* psock_lock() calls of this thread not yet given back; the signals
 * whose handlers wait for that */
static __thread int held __attribute__((tls_model("initial-exec")));
static __thread sigset_t deferred __attribute__((tls_model("initial-exec")));
static __thread bool any_deferred __attribute__((tls_model("initial-exec")));

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

/* Raised by what the thread just did (a fault): it must run now. */
static bool synchronous(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
	       sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS;
}

/* Blocked where the handler returns to, and pending again: psock_unlock()
 * unblocks it.  Two system calls, only when a signal meets the lock. */
static void defer(int sig, siginfo_t *si, ucontext_t *uc)
{
	sigset_t one;

	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_BLOCK, &one, NULL);	/* SA_NODEFER: not yet */
	sigaddset(&uc->uc_sigmask, sig);
	sigaddset(&deferred, sig);
	any_deferred = true;
	syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), sig,
		si);
}

void psock_signals_held(void)
{
	held++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void psock_signals_free(void)
{
	sigset_t run;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (--held || !any_deferred)
		return;
	/* what comes from here on runs at once (held is 0) */
	run = deferred;
	sigemptyset(&deferred);
	any_deferred = false;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_sigmask(SIG_UNBLOCK, &run, NULL);	/* they run now */
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a;
	int err = errno;

	program_handler(sig, &a);
	/* SA_RESETHAND: the kernel's SIG_DFL is in place by now */
	if (held && uc && !synchronous(sig) && catches(&a) &&
	    !(a.sa_flags & SA_RESETHAND)) {
		defer(sig, si, uc);
		errno = err;
		return;
	}
	got.all++;
	if (!(a.sa_flags & SA_RESTART))
		got.norestart++;
	errno = err;
	if (!catches(&a))
		return;
	if (a.sa_flags & SA_SIGINFO) {
		a.sa_sigaction(sig, si, uc);
	} else {
		/* the kernel passes all three: some handlers read them */
		void (*three)(int, siginfo_t *, void *) =
			(void (*)(int, siginfo_t *, void *))(void (*)(void))
			a.sa_handler;

		three(sig, si, uc);
	}
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
	     act->sa_sigaction == on_signal) || getpid() != own_pid)
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
