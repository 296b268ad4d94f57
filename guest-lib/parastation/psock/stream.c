/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets: the stream of one connection (wire.h).
 *
 * Each direction starts on the kernel connection and moves to ports at
 * the sender's SWITCH; a reader takes exactly the bytes the SWITCH counts
 * from the kernel, then the messages that came over ports.  A writer on
 * ports keeps within the receiver's window.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "psock.h"
#include "wire.h"

static bool rx_on_kernel(const struct psock_conn *c)
{
	return c->state == PSOCK_UNDECIDED || c->rx_state != PSOCK_RX_PORTS;
}

/* Only a message over ports can change what a read finds, so a wait
 * needs to watch nothing else (psock_sleep_ports()). */
static bool rx_waits_on_port(const struct psock_conn *c)
{
	return !rx_on_kernel(c) && !c->eof_ms && !c->kernel_woke &&
	       !c->fin_got &&
	       c->state != PSOCK_INHERITED && psock_port_now();
}

/* The kernel stream after the peer's switch: only its end can come. */
static void watch_kernel_end(int fd, struct psock_conn *c)
{
	char b;
	ssize_t n;

	/* only once the kernel said something: a system call costs */
	if (c->eof_ms || c->reset || !c->kernel_woke)
		return;
	c->kernel_woke = false;
	n = sys_recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0) {
		c->eof_ms = psock_ms_now();
		if (c->fin_got)		/* the end waited for it (rx_ended()) */
			STAT(ST_END_HELD);
	} else if (n > 0) {
		psock_say("conn %u: data on the kernel after the switch; reset",
		    c->id);
		c->reset = true;
	} else if (errno != EAGAIN && errno != EINTR) {
		c->reset = true;
	}
}

bool psock_eof_pending(const struct psock_conn *c)
{
	return c->eof_ms && !c->fin_got && !c->reset &&
	       psock_ms_now() - c->eof_ms < PSOCK_EOF_GRACE_MS;
}

/*
 * Nothing more will come: the peer's FIN over ports and the end of its
 * kernel stream, or that end alone for the grace time (the peer is gone).
 * A FIN over ports overtakes the kernel's: were the end shown at once,
 * this side could close before the peer's kernel FIN arrived, and both
 * kernels would see a simultaneous close (TIME_WAIT on both sides, where
 * it belongs to the side that closed first).
 */
static bool rx_ended(int fd, struct psock_conn *c)
{
	watch_kernel_end(fd, c);
	if (c->fin_got)
		return c->eof_ms || c->reset;
	return c->eof_ms && psock_ms_now() - c->eof_ms >= PSOCK_EOF_GRACE_MS;
}

static size_t iov_total(const struct iovec *iov, int iovcnt)
{
	size_t t = 0;

	for (int i = 0; i < iovcnt; i++)
		t += iov[i].iov_len;
	return t;
}

/* The iovec from byte `skip` on, in part[]; returns its count. */
static int iov_from(const struct iovec *iov, int iovcnt, size_t skip,
		    struct iovec *part)
{
	int k = 0;

	for (int i = 0; i < iovcnt && k < UIO_MAXIOV; i++) {
		if (skip >= iov[i].iov_len) {
			skip -= iov[i].iov_len;
			continue;
		}
		part[k].iov_base = (char *)iov[i].iov_base + skip;
		part[k++].iov_len = iov[i].iov_len - skip;
		skip = 0;
	}
	return k;
}

/* The program took n bytes: the peer hears of it each quarter window. */
static inline void rx_consumed(struct psock_conn *c, size_t n)
{
	c->rx_used += n;
	if (c->rx_used - c->rx_win >= PSOCK_WINDOW / 4)
		psock_win_send(c);
}

/* Copy up to the iovec's room from the chunks; consume unless peek. */
static size_t rx_copy(struct psock_conn *c, const struct iovec *iov,
		      int iovcnt, size_t done, bool peek)
{
	struct psock_chunk *k = c->head;
	size_t koff = k ? k->off : 0, got = 0, skip = done;

	for (int i = 0; i < iovcnt && k; i++) {
		size_t room = iov[i].iov_len, at = 0;

		if (skip >= room) {
			skip -= room;
			continue;
		}
		at = skip;
		skip = 0;
		while (at < room && k) {
			size_t n = k->len - koff;

			if (n > room - at)
				n = room - at;
			memcpy((char *)iov[i].iov_base + at, k->data + koff, n);
			at += n;
			koff += n;
			got += n;
			if (koff == k->len) {
				struct psock_chunk *next = k->next;

				if (!peek) {
					c->head = next;
					if (!next)
						c->tail = NULL;
					psock_chunk_done(k);
				}
				k = next;
				koff = k ? k->off : 0;
			}
		}
	}
	if (!peek) {
		if (k)
			k->off = koff;
		c->rx_bytes -= got;
		rx_consumed(c, got);
	}
	return got;
}

/* Kernel bytes still due before the peer's switch (all if not known). */
static ssize_t rx_kernel(int fd, struct psock_conn *c,
			 const struct iovec *iov, int iovcnt, int flags)
{
	struct iovec clip[UIO_MAXIOV];
	struct msghdr m = { .msg_iov = (struct iovec *)iov,
			    .msg_iovlen = iovcnt };
	ssize_t n;

	if (c->rx_state != PSOCK_RX_KERNEL) {
		uint64_t left = c->rx_limit - c->rx_kernel;
		int k;

		for (k = 0; k < iovcnt && k < UIO_MAXIOV && left; k++) {
			clip[k] = iov[k];
			if (clip[k].iov_len > left)
				clip[k].iov_len = left;
			left -= clip[k].iov_len;
		}
		m.msg_iov = clip;
		m.msg_iovlen = k;
	}
	n = sys_recvmsg(fd, &m, (flags & ~MSG_WAITALL) | MSG_DONTWAIT);
	if (n > 0 && !(flags & MSG_PEEK)) {
		c->rx_kernel += n;
		if (c->rx_state == PSOCK_RX_KERNEL_LEFT &&
		    c->rx_kernel >= c->rx_limit)
			c->rx_state = PSOCK_RX_PORTS;
	}
	if (n == 0 && iov_total(iov, iovcnt)) {
		/* the peer's SWITCH, its data and FIN may still be on the way */
		if (!c->eof_ms)
			c->eof_ms = psock_ms_now();
		if (psock_ms_now() - c->eof_ms < PSOCK_EOF_GRACE_MS &&
		    c->rx_state == PSOCK_RX_KERNEL && !c->reset) {
			errno = EAGAIN;
			return -1;
		}
	}
	return n;
}

/*
 * The steady state of a connection's reading side: the peer's data comes
 * over ports, nothing of the kernel stream is due, and no end, reset or
 * word from the kernel socket has come.  A read into one buffer then
 * takes a fast path (recv_steady()): what recv_loop() does
 * in this state, in fewer steps, and the message straight into the
 * reader's buffer.  Every message there costs a wakeup.
 */
static __always_inline bool rx_steady(const struct psock_conn *c)
{
	return c->state == PSOCK_OURS && c->rx_state == PSOCK_RX_PORTS &&
	       !c->fin_got && !c->reset && !c->eof_ms && !c->kernel_woke &&
	       psock_port_now();
}

#define NOT_STEADY	(-2)

/* A read of up to len bytes (flags: MSG_DONTWAIT at most) while c is
 * steady and has no bytes in chunks; NOT_STEADY once that ends, for the
 * general loop. */
static ssize_t recv_steady(int fd, struct psock_conn *c, void *buf,
			   size_t len, int flags, int64_t *deadline)
{
	bool arrived = false;
	ssize_t n;

	for (;;) {
		if (!rx_steady(c) || c->rx_bytes)
			return NOT_STEADY;
		n = psock_pump_into(c, buf, len, arrived);
		if (n) {
			rx_consumed(c, n);
			return n;
		}
		if (c->rx_bytes || !rx_steady(c))
			return NOT_STEADY;
		if (psock_nonblocking(fd, c, flags)) {
			errno = EAGAIN;
			return -1;
		}
		STAT(ST_RECV_WAIT);
		n = psock_sleep_ports(fd, c, deadline);
		if (n < 0)
			return -1;	/* c may be gone (-2) */
		arrived = n;
	}
}

/* psock_recv() in every state; *deadline: of SO_RCVTIMEO (psock_sleep()) */
static __attribute_noinline__ ssize_t
recv_loop(int fd, struct psock_conn *c, const struct iovec *iov, int iovcnt,
	  size_t want, int flags, int64_t *deadline)
{
	size_t done = 0;
	bool peek = flags & MSG_PEEK, scanned = false;
	ssize_t n;

	for (;;) {
		if (!scanned)	/* the wait has just received (psock_poll) */
			psock_pump_for(c);
		scanned = false;
		psock_decide(fd, c);
		if (c->state == PSOCK_INHERITED && psock_claim())
			goto wait;
		if (c->state == PSOCK_KERNEL || c->state == PSOCK_INHERITED)
			break;
		if (!want)
			return 0;
		/* what came before a reset is still read first */
		if (rx_on_kernel(c) && c->state != PSOCK_UNDECIDED) {
			struct iovec part[UIO_MAXIOV];
			int k = iov_from(iov, iovcnt, done, part);

			n = rx_kernel(fd, c, part, k, flags);
			if (n > 0) {
				done += n;
				if (done == want || !(flags & MSG_WAITALL) ||
				    peek)
					return done;
				continue;
			}
			if (n == 0)
				return done;
			if (errno != EAGAIN)
				return done ? (ssize_t)done : -1;
		} else if (c->state != PSOCK_UNDECIDED && c->rx_bytes) {
			done += rx_copy(c, iov, iovcnt, done, peek);
			if (done == want || !(flags & MSG_WAITALL) || peek)
				return done;
			continue;
		}
		if (c->reset) {
			errno = ECONNRESET;
			return done ? (ssize_t)done : -1;
		}
		if (c->state != PSOCK_UNDECIDED && !rx_on_kernel(c) &&
		    rx_ended(fd, c)) {
			if (c->reset) {
				errno = ECONNRESET;
				return done ? (ssize_t)done : -1;
			}
			return done;
		}
wait:
		if (psock_nonblocking(fd, c, flags)) {
			if (done)
				return done;
			errno = EAGAIN;
			return -1;
		}
		STAT(ST_RECV_WAIT);
		/* psock_nonblocking() has asked for the timeout */
		scanned = !rx_waits_on_port(c);
		n = scanned ? psock_sleep(fd, c, POLLIN, deadline) :
			     psock_sleep_ports(fd, c, deadline);
		if (n < 0)
			return n == -1 && done ? (ssize_t)done : -1;
	}
	/* not ours after all (or not in this process): the kernel's */
	if (c->state == PSOCK_INHERITED) {
		errno = EOPNOTSUPP;
		return -1;
	}
	{
		struct msghdr m = { .msg_iov = (struct iovec *)iov,
				    .msg_iovlen = iovcnt };

		psock_unlock();
		n = sys_recvmsg(fd, &m, flags);
		psock_lock();
		return n;
	}
}

ssize_t psock_recv_buf(int fd, struct psock_conn *c, void *buf, size_t len,
		       int flags)
{
	struct iovec iov = { buf, len };
	int64_t deadline = 0;
	ssize_t n;

	if (len && !(flags & ~MSG_DONTWAIT)) {
		n = recv_steady(fd, c, buf, len, flags, &deadline);
		if (n != NOT_STEADY)
			return n;
	}
	return recv_loop(fd, c, &iov, 1, len, flags, &deadline);
}

ssize_t psock_recv(int fd, struct psock_conn *c, const struct iovec *iov,
		   int iovcnt, int flags)
{
	int64_t deadline = 0;

	if (iovcnt == 1)
		return psock_recv_buf(fd, c, iov[0].iov_base, iov[0].iov_len,
				      flags);
	return recv_loop(fd, c, iov, iovcnt, iov_total(iov, iovcnt), flags,
			 &deadline);
}

int psock_unread(int fd, struct psock_conn *c)
{
	int k = 0;

	psock_pump();
	psock_decide(fd, c);
	if (c->state == PSOCK_KERNEL || c->state == PSOCK_INHERITED ||
	    c->state == PSOCK_UNDECIDED || c->rx_state == PSOCK_RX_KERNEL)
		return -1;
	/* the kernel's bytes up to the switch, then ours */
	if (rx_on_kernel(c) && !syscall(SYS_ioctl, fd, FIONREAD, &k) &&
	    (uint64_t)k > c->rx_limit - c->rx_kernel)
		k = (int)(c->rx_limit - c->rx_kernel);
	return c->rx_bytes > (size_t)(INT_MAX - k) ? INT_MAX :
	       k + (int)c->rx_bytes;
}

static ssize_t epipe(int flags)
{
	if (!(flags & MSG_NOSIGNAL))
		raise(SIGPIPE);
	errno = EPIPE;
	return -1;
}

/*
 * The steady state of the sending side: on ports, no end and no reset
 * known.  A write that fits the window and one message (tx_fits()) then
 * takes a fast path: the message first, then a check of what came
 * in (a reset, a window), after the message has gone.  A reset that came just
 * before shows at the next call, as a kernel RST that crosses a write.
 */
static bool tx_steady(const struct psock_conn *c)
{
	/* an undecided client has sent no SWITCH, so is not on ports:
	 * the state test need only keep out the others */
	return c->tx_state == PSOCK_TX_PORTS && !c->reset &&
	       (c->state == PSOCK_OURS || c->state == PSOCK_UNDECIDED);
}

/* Whether a write of want bytes takes the fast path. */
static inline bool tx_fits(const struct psock_conn *c, size_t want)
{
	return tx_steady(c) && want && want <= PSOCK_DATA_MAX &&
	       c->tx_sent - c->tx_acked <= PSOCK_WINDOW - want;
}

/* Its message went: then a check of what came. */
static ssize_t sent_steady(struct psock_conn *c, size_t want)
{
	c->tx_sent += want;
	psock_pump_arrived();
	return want;
}

/* psock_send() in every state */
static __attribute_noinline__ ssize_t
send_loop(int fd, struct psock_conn *c, const struct iovec *iov, int iovcnt,
	  size_t want, int flags)
{
	size_t done = 0;
	struct iovec part[UIO_MAXIOV];
	bool scanned = false;
	int64_t deadline = 0;	/* of SO_SNDTIMEO (psock_sleep()) */
	ssize_t n;

	for (;;) {
		if (!scanned)	/* the wait has just received (psock_poll) */
			psock_pump();
		scanned = false;
		psock_decide(fd, c);
		if (c->state == PSOCK_INHERITED && psock_claim())
			goto wait;
		if (c->state == PSOCK_INHERITED) {
			errno = EOPNOTSUPP;
			return -1;
		}
		if (c->state == PSOCK_KERNEL) {
			/* the rest only: what went before the decision is sent */
			struct msghdr m = { .msg_iov = (struct iovec *)iov,
					    .msg_iovlen = iovcnt };

			if (done) {
				m.msg_iov = part;
				m.msg_iovlen = iov_from(iov, iovcnt, done, part);
			}
			psock_unlock();
			n = sys_sendmsg(fd, &m, flags);
			psock_lock();
			if (n < 0)
				return done ? (ssize_t)done : -1;
			return done + n;
		}
		if (!psock_tx_on_ports(c)) {
			/* before the switch: counted, never blocking here */
			struct msghdr m = { .msg_iov = part };

			m.msg_iovlen = iov_from(iov, iovcnt, done, part);
			n = sys_sendmsg(fd, &m, flags | MSG_DONTWAIT);
			if (n < 0 && errno != EAGAIN)
				return done ? (ssize_t)done : -1;
			if (n > 0) {
				c->tx_kernel += n;
				done += n;
			}
			if (done == want || (done && psock_nonblocking(fd, c, flags)))
				return done;
		}
		if (psock_tx_on_ports(c) && c->reset)
			return done ? (ssize_t)done : epipe(flags);
		if (c->tx_state == PSOCK_TX_PORTS_SHUT)
			return epipe(flags);
		while (psock_tx_on_ports(c) && done < want &&
		       c->tx_sent - c->tx_acked < PSOCK_WINDOW) {
			size_t room = PSOCK_WINDOW - (c->tx_sent - c->tx_acked);
			size_t len = want - done;
			int k = iov_from(iov, iovcnt, done, part);

			if (len > room)
				len = room;
			if (len > PSOCK_DATA_MAX)
				len = PSOCK_DATA_MAX;
			if (psock_msg_send(c, PSOCK_DATA, 0, part, k, len))
				return done ? (ssize_t)done : epipe(flags);
			c->tx_sent += len;
			done += len;
		}
		if (done == want || (done && psock_nonblocking(fd, c, flags)))
			return done;
wait:
		if (psock_nonblocking(fd, c, flags)) {
			errno = EAGAIN;
			return -1;
		}
		n = psock_sleep(fd, c, POLLOUT, &deadline);
		if (n < 0)
			return n == -1 && done ? (ssize_t)done : -1;
		scanned = true;
	}
}

ssize_t psock_send_buf(int fd, struct psock_conn *c, const void *buf,
		       size_t len, int flags)
{
	struct iovec iov = { (void *)buf, len };

	if (!tx_fits(c, len))
		return send_loop(fd, c, &iov, 1, len, flags);
	if (psock_data_send(c, buf, len))
		return epipe(flags);
	return sent_steady(c, len);
}

ssize_t psock_send(int fd, struct psock_conn *c, const struct iovec *iov,
		   int iovcnt, int flags)
{
	size_t want = iov_total(iov, iovcnt);

	if (iovcnt == 1)
		return psock_send_buf(fd, c, iov[0].iov_base, iov[0].iov_len,
				      flags);
	if (!tx_fits(c, want))
		return send_loop(fd, c, iov, iovcnt, want, flags);
	if (psock_msg_send(c, PSOCK_DATA, 0, iov, iovcnt, want))
		return epipe(flags);
	return sent_steady(c, want);
}

int psock_shutdown(int fd, struct psock_conn *c, int how)
{
	psock_pump();
	if ((how == SHUT_WR || how == SHUT_RDWR) && !psock_tx_shut(c) &&
	    c->state != PSOCK_KERNEL) {
		bool ports = psock_tx_on_ports(c);

		c->tx_state = ports ? PSOCK_TX_PORTS_SHUT : PSOCK_TX_KERNEL_SHUT;
		if (ports)
			psock_msg_send(c, PSOCK_FIN, c->tx_sent, NULL, 0, 0);
	}
	return sys_shutdown(fd, how);
}

short psock_events(int fd, struct psock_conn *c, short events, short *watch,
		   short *pass)
{
	short rev = 0;

	if (c->dgram)
		return psock_udp_events(c, events, watch, pass);
	psock_decide(fd, c);
	if (c->state == PSOCK_INHERITED && psock_claim()) {
		*watch = 0;		/* the parent's port still: ask again */
		*pass = POLLERR | POLLHUP;
		return 0;
	}
	if (c->state == PSOCK_KERNEL || c->state == PSOCK_INHERITED)
		return -1;		/* the kernel answers for it */
	*watch = 0;
	*pass = POLLERR | POLLHUP;
	if (events & POLLIN) {
		if (c->state == PSOCK_UNDECIDED) {
			*watch |= POLLIN;	/* the HELLO, or not: ask again */
		} else if (rx_on_kernel(c)) {
			if (c->rx_state != PSOCK_RX_KERNEL || !c->eof_ms) {
				*watch |= POLLIN;
				*pass |= POLLIN;
			} else if (c->reset ||
				   psock_ms_now() - c->eof_ms >= PSOCK_EOF_GRACE_MS) {
				rev |= POLLIN;
			}
		} else if (c->rx_bytes || rx_ended(fd, c) || c->reset) {
			rev |= POLLIN;
		} else if (!c->eof_ms) {
			*watch |= POLLIN | POLLRDHUP;	/* its end: ask again */
		}
	}
	if (events & POLLOUT) {
		if (!psock_tx_on_ports(c)) {
			*watch |= POLLOUT;
			*pass |= POLLOUT;
		} else if (c->reset || psock_tx_shut(c) ||
			   c->tx_sent - c->tx_acked < PSOCK_WINDOW) {
			rev |= POLLOUT;
		}
	}
	if (c->reset)
		rev |= POLLERR;
	if ((events & POLLRDHUP) && !c->rx_bytes && c->fin_got &&
	    rx_ended(fd, c))
		rev |= POLLRDHUP;
	if (psock_tx_shut(c) && !c->rx_bytes && c->fin_got && rx_ended(fd, c))
		rev |= POLLHUP;
	return rev;
}

