/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ParaStation sockets (libpsock.so), internals shared by its files:
 * calls.c (the socket calls a program makes, taken over by LD_PRELOAD),
 * options.c (the PS_SOCK* settings), log.c (the debug log and counts),
 * hosts.c (the cluster's addresses), table.c (connections by id and by
 * descriptor), port.c (our port, the parent's after fork, the waits on
 * the NIC), setup.c (bind, connect, accept, the HELLO, close), send.c and
 * dispatch.c (messages out and in), chunk.c (received bytes until read),
 * stream.c (the data of one connection), wait.c (the one wait engine),
 * poll.c (poll and select over our sockets and the kernel's files),
 * epoll.c, block.c (the waits of the blocking calls), udp.c, alive.c
 * (keepalives), exec.c, signal.c (which signals ended a wait) and lock.c
 * (the library's lock).
 *
 * The descriptor a program holds is always the real kernel socket; for a
 * connection that moved to ports, the library keeps a struct psock_conn
 * and moves the data itself.  docs/psock.md has the design.
 */
#ifndef PSOCK_H
#define PSOCK_H

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "ps_ports.h"

/* Variables that files share, declared so: the code reaches them as it
 * reaches a file's own static, not through the GOT. */
#define PSOCK_HIDDEN	__attribute__((visibility("hidden")))

/*
 * Receive window of a connection: bytes the sender may have sent over
 * ports that the program has not read yet.  It bounds what a peer can
 * make this process hold for one connection.
 */
#define PSOCK_WINDOW		(256 * 1024)
/* After the kernel stream ends without a FIN over ports: the peer died.
 * Data it sent before may still be on the way; wait this long for it. */
#define PSOCK_EOF_GRACE_MS	200
/* A send that finds no room at the peer's node checks the kernel
 * connection this often; once that has ended, it gives up after
 * PSOCK_GONE_MS (the peer's process is gone, nobody receives there). */
#define PSOCK_SEND_CHECK_MS	100
#define PSOCK_GONE_MS		2000

struct psock_chunk {
	struct psock_chunk *next;
	size_t len, off;
	uint16_t src_node, src_port;	/* a datagram's sender */
	bool src_lo;			/* ... on this node, to loopback */
	uint8_t data[];
};

/* Datagrams that came over ports and wait for a UDP socket to read them:
 * at most this many bytes (beyond, they are dropped, as the kernel drops
 * what does not fit a socket's receive buffer). */
#define PSOCK_UDP_QUEUE	(256 * 1024)

enum { PSOCK_CLIENT, PSOCK_SERVER };

/* How far a connection's set-up has come.  A new one, all zero, is
 * PSOCK_OURS. */
enum psock_state {
	PSOCK_OURS,		/* both ends speak the protocol (or a UDP socket
				 * of ours): each direction moves to ports at
				 * its SWITCH */
	PSOCK_UNDECIDED,	/* client: no HELLO nor other byte seen yet */
	PSOCK_HELLO_DUE,	/* server: the HELLO is still to be written */
	PSOCK_KERNEL,		/* the peer does not speak the protocol: the
				 * kernel's for good */
	PSOCK_INHERITED,	/* on the parent's port, which it still has;
				 * PSOCK_OURS once we adopt it */
};

/* Our sending direction. */
enum psock_tx {
	PSOCK_TX_KERNEL,	/* on the kernel stream, counted in tx_kernel */
	PSOCK_TX_KERNEL_SHUT,	/* shut down there: the FIN follows the SWITCH */
	PSOCK_TX_PORTS,		/* over ports, within the peer's window */
	PSOCK_TX_PORTS_SHUT,	/* over ports, the FIN sent: nothing more */
};

/* The peer's direction. */
enum psock_rx {
	PSOCK_RX_KERNEL,	/* no SWITCH yet: all from the kernel stream */
	PSOCK_RX_KERNEL_LEFT,	/* the SWITCH came: the kernel's bytes up to
				 * rx_limit first */
	PSOCK_RX_PORTS,		/* those read: the rest comes over ports */
};

/* A datagram socket of ours, bound to a marker port (udp.c). */
struct psock_udp {
	uint16_t port;		/* ours, host order */
	in_addr_t peer;		/* connect(): the only sender, 0 none */
	uint16_t peer_port;
	unsigned long dropped;
	bool heard;		/* a datagram came over ports */
};

struct psock_conn {
	/* ---- every socket of ours ---- */
	int refs;		/* descriptors that name it */
	int kfd;		/* one of them: to ask the kernel socket */
	uint32_t id;		/* index in the table */
	uint32_t nonce;
	enum psock_state state;
	bool shared;		/* another process may hold it (fork) */
	bool dgram;		/* a UDP socket: udp below, not the stream */
	/* what came over ports and waits to be read (a datagram each) */
	struct psock_chunk *head, *tail;
	size_t rx_bytes;	/* waiting in the chunks */
	/* bumped for each message that brings something to read (in) or
	 * room to write (out): EPOLLET's edges (epoll.c) */
	uint32_t news_in, news_out;
	/* O_NONBLOCK and the timeouts as the kernel last said: each ask is
	 * a system call.  Good while opts_gen is the library's count of
	 * fcntl(), ioctl() and setsockopt() calls through us on any of ours
	 * (psock_opts_changed()); asked each time while another process may
	 * hold it. */
	unsigned int opts_gen;		/* 0: not asked */
	bool nonblock;
	int rcvtimeo_ms, sndtimeo_ms;	/* -1: none, wait for ever */

	/* ---- a stream ---- */
	int role;		/* PSOCK_CLIENT, PSOCK_SERVER */
	/* the peer, once known (HELLO, SWITCH) */
	bool peer_known;
	unsigned int peer_node;
	int peer_port;
	uint32_t peer_conn;
	uint32_t peer_nonce;
	/* sending */
	enum psock_tx tx_state;
	uint64_t tx_kernel;	/* bytes sent on the kernel stream */
	uint64_t tx_sent;	/* over ports */
	uint64_t tx_acked;	/* of those, what the peer has consumed */
	/* receiving */
	enum psock_rx rx_state;
	uint64_t rx_limit;	/* bytes of the kernel stream before the SWITCH */
	uint64_t rx_kernel;	/* bytes read from the kernel stream */
	uint64_t rx_got;	/* over ports, in all */
	uint64_t rx_used;	/* of those, consumed by the program */
	uint64_t rx_win;	/* rx_used last told to the peer */
	uint8_t owed;		/* PSOCK_OWED_*: the library's messages that
				 * found no room at the peer's node */
	/* what ends the reading side, or both, besides the data */
	bool fin_got;
	bool reset;		/* RST from the peer, or the kernel's */
	bool kernel_woke;	/* the kernel socket woke a wait: ask it */
	int64_t eof_ms;		/* the kernel stream ended then, 0: not */
	/* keepalives on the kernel connection (alive.c); the program's view
	 * of SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT */
	bool alive_on;
	int alive[4];

	/* ---- a datagram socket ---- */
	struct psock_udp udp;
};

/* The library's own messages wait for no room at the peer's node: the
 * call that makes them (often a read) must not wait on processes there,
 * which may all sit in the kernel outside the library. */
enum psock_owed {
	PSOCK_OWED_SWITCH = 1,
	PSOCK_OWED_WIN = 2,
};

static inline bool psock_tx_on_ports(const struct psock_conn *c)
{
	return c->tx_state == PSOCK_TX_PORTS || c->tx_state == PSOCK_TX_PORTS_SHUT;
}

/* shutdown(SHUT_WR) came: nothing more to send */
static inline bool psock_tx_shut(const struct psock_conn *c)
{
	return c->tx_state == PSOCK_TX_KERNEL_SHUT ||
	       c->tx_state == PSOCK_TX_PORTS_SHUT;
}

/*
 * Keepalives on the kernel connection of one on ports: a restarted peer
 * node ends it at the first probe (PSOCK_ALIVE_IDLE_S after the last
 * kernel traffic), a dead one after PSOCK_ALIVE_PROBES more unanswered,
 * one each PSOCK_ALIVE_INTVL_S: about 15 s.
 */
#define PSOCK_ALIVE_OPTS	4
#define PSOCK_ALIVE_IDLE_S	5
#define PSOCK_ALIVE_INTVL_S	2
#define PSOCK_ALIVE_PROBES	5

static inline int64_t psock_ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t psock_us_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* What the library did, printed at exit with PS_SOCK_DEBUG=1. */
enum {
	ST_POLL,		/* psock_poll calls */
	ST_POLL_SLEEP,		/* ... that slept in poll() */
	ST_POLL_NIC,		/* ... that slept on the NIC (ps_port_wait) */
	ST_POLL_BELL,		/* ... on the doorbell alone (ps_port_sleep) */
	ST_POLL_UNASKED,	/* kernel polls left out (kernel_ask_due) */
	ST_POLL_SPIN,		/* spins before a sleep (spin_us()) */
	ST_POLL_SPUN,		/* of them, found nothing: slept */
	ST_EPOLL,		/* psock_epoll_wait calls */
	ST_EPOLL_SLEEP,
	ST_MSG_IN,		/* messages received */
	ST_MSG_OUT,		/* messages sent */
	ST_SEND_SLOW,		/* sends that waited for room */
	ST_RECV_WAIT,		/* blocking reads that waited */
	ST_SIG_DEFERRED,	/* signals deferred till psock_unlock() */
	ST_IDLE_STALL,		/* stalls of a thread that spun (wait.c) */
	ST_IDLE_STALL_EPOLL,	/* ... of them, in epoll_wait */
	ST_END_HELD,		/* ends held for the kernel's FIN (stream.c) */
	ST_OWED,		/* SWITCH and WIN put off for room (send.c) */
	ST_N
};
extern unsigned long psock_stats[ST_N];
#define STAT(i)	__atomic_fetch_add(&psock_stats[i], 1, __ATOMIC_RELAXED)

/* memcpy(), without a call for 8 to 16 bytes (a small message and its
 * header): the call would cost more than the copy. */
static inline void psock_copy(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	uint64_t a, b;

	if (n < 8 || n > 16) {
		memcpy(dst, src, n);
		return;
	}
	memcpy(&a, s, 8);	/* two words that may overlap */
	memcpy(&b, s + n - 8, 8);
	memcpy(d, &a, 8);
	memcpy(d + n - 8, &b, 8);
}

/* ---- options.c: the settings (PS_SOCK*), all read on first use ---- */
#define PSOCK_SPIN_US_DEFAULT		500	/* PS_SOCK_SPIN_US */
#define PSOCK_IDLE_GAP_US_DEFAULT	20	/* PS_SOCK_IDLE_GAP_US */
struct psock_options {
	bool off;		/* PS_SOCK=0: every call is the kernel's */
	bool debug;		/* PS_SOCK_DEBUG set and not 0 */
	const char *debug_file;	/* PS_SOCK_DEBUG=/FILE, else NULL: stderr */
	const char *hosts;	/* PS_SOCK_HOSTS, default /etc/hosts */
	bool local;		/* PS_SOCK_LOCAL=1: this node through the pool */
	int spin_max_us;	/* PS_SOCK_SPIN_US, at least 0 */
	int idle_gap_us;	/* PS_SOCK_IDLE_GAP_US, at least 0 */
};
extern struct psock_options psock_opt PSOCK_HIDDEN;
extern bool psock_opt_read PSOCK_HIDDEN;
void psock_options_read(void);
/* Inline: the waits read a setting on each call. */
static inline const struct psock_options *psock_options(void)
{
	if (!__atomic_load_n(&psock_opt_read, __ATOMIC_ACQUIRE))
		psock_options_read();
	return &psock_opt;
}

/* ---- table.c; with psock_lock() held (psock_get() also without) ---- */
/* A new connection at the first free id (random nonce), or NULL. */
struct psock_conn *psock_conn_new(int role);
/* c, made elsewhere (exec.c), at its own id; false if taken or no memory. */
bool psock_conn_place(struct psock_conn *c);
void psock_conn_free(struct psock_conn *c);
/* Ids run below psock_conn_limit(); NULL for a free one. */
uint32_t psock_conn_limit(void);
struct psock_conn *psock_conn_at(uint32_t id);
/* fd names c (NULL: nothing) from now on. */
bool psock_fd_set(int fd, struct psock_conn *c);
/* Our connection behind fd, or NULL (a kernel-only file).  Inline: every
 * call of the program's on a descriptor asks. */
extern struct psock_conn **psock_fdmap;
extern int psock_nfdmap;
static inline struct psock_conn *psock_get(int fd)
{
	/* the size first: a table at least that large is published */
	int n = __atomic_load_n(&psock_nfdmap, __ATOMIC_ACQUIRE);
	struct psock_conn **t = __atomic_load_n(&psock_fdmap,
						 __ATOMIC_ACQUIRE);

	if (fd < 0 || fd >= n || !t)
		return NULL;
	return __atomic_load_n(&t[fd], __ATOMIC_ACQUIRE);
}
/* Descriptors run below psock_fd_limit(); one that names c, or -1. */
int psock_fd_limit(void);
int psock_fd_of(const struct psock_conn *c);
/* fd and newfd name the same kernel socket now (dup, dup2, F_DUPFD). */
void psock_dup(int fd, int newfd);
/* The UDP socket of ours bound to port udp_port, or NULL. */
struct psock_conn *psock_udp_find(uint16_t udp_port);

/* ---- log.c ---- */
/* One line on stderr with PS_SOCK_DEBUG=1. */
void psock_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The counts of psock_stats, one line (at exit). */
void psock_say_stats(void);

/* ---- hosts.c ---- */
/* The node of a cluster address (network order), or -1; and back. */
int psock_node_of(in_addr_t a);
in_addr_t psock_node_addr(unsigned int node);
/* The node our NIC reaches address a on: a cluster node's; with
 * PS_SOCK_LOCAL=1 this node for loopback and its own address (the local
 * path, through the node's pool); -1 for others. */
int psock_node_at(in_addr_t a);
/* IPv4 address and port of sa (IPv4, or IPv4-mapped IPv6). */
bool psock_ipv4_of(const struct sockaddr *sa, socklen_t len, in_addr_t *a,
		   int *port_no);

/* ---- port.c; called with psock_lock() held ---- */
/* Our port, and the parent's after fork: the message paths read them
 * on each call. */
extern ps_port_t *psock_port_ours PSOCK_HIDDEN;	/* opened on first use */
/* the parent's, ours once it has gone */
extern ps_port_t *psock_port_heir PSOCK_HIDDEN;
/* What our port is to this process. */
enum psock_port_state {
	PSOCK_PORT_UNOPENED,	/* opened on first use (psock_port()) */
	PSOCK_PORT_NONE,	/* no NIC, or PS_SOCK=0: sockets stay the kernel's */
	PSOCK_PORT_OWN,		/* ours alone: closed at exit */
	PSOCK_PORT_FORKED,	/* we forked holding it and have not used it
				 * since: the next use touches it, so the
				 * child does not adopt it */
	PSOCK_PORT_SHARED,	/* a child may hold it: it stays open at exit */
};
extern enum psock_port_state psock_port_state PSOCK_HIDDEN;
/* Our port, opened on first use; NULL without a NIC (or PS_SOCK=0). */
ps_port_t *psock_port(void);
/* A connection with a peer on node: on this node, waits stop spinning. */
void psock_local_peer(unsigned int node);
/* Sleep on the NIC (ps_port_wait), at most timeout_ms, with the lock
 * given up meanwhile; whether a packet or message came. */
bool psock_port_wait(int timeout_ms);
/* Whether a wait may spin on the port: we watch the NIC, and no peer on
 * this node needs our CPU (wait.c).  And whether a packet or message came
 * within so many tries (ps_port_arrived()). */
bool psock_port_spins(void);
bool psock_port_arrived_within(int tries);
/* The NIC's descriptor to wait on, -1 without one; and the port's
 * doorbell (messages from this node), -1 without one. */
int psock_nic_fd(void);
int psock_bell_fd(void);
/* Before a sleep on the doorbell (without the lock): true if a message
 * is queued already, *watch_nic whether to poll the NIC too
 * (ps_port_sleep()); psock_nic_awake(*watch_nic, rung) after, rung if
 * the poll said POLLIN on the doorbell. */
bool psock_nic_sleep(bool *watch_nic);
void psock_nic_awake(bool watch_nic, bool rung);
/* The longest sleep after psock_nic_sleep() (ps_port_sleep_ms()). */
int psock_sleep_ms(bool watch_nic);
/* Whether a sleep now would watch the NIC (ps_port_watches()). */
bool psock_nic_watches(void);
/* The process forked: both hold the connections; the child gets the
 * ones on ports when the parent has gone (psock_claim()). */
void psock_forked_parent(void);
void psock_forked_child(void);
/* Try to adopt the parent's port; true while it still lives, for at most
 * PSOCK_ADOPT_MS after the fork.  Then the parent's connections on ports
 * are not the child's (EOPNOTSUPP). */
#define PSOCK_ADOPT_MS	2000
bool psock_claim(void);
/* Our port as it is (never opened here), whether a child of ours may
 * hold it, and the port taken back after exec (exec.c). */
ps_port_t *psock_port_now(void);
bool psock_port_shared(void);
void psock_port_resumed(ps_port_t *p, bool shared);
/* The NIC's descriptor (ours or the parent's port): the program's close()
 * passes it by, as daemons close every descriptor they do not know. */
bool psock_own_fd(int fd);

/* ---- send.c; with psock_lock() held ---- */
/* The one message in or out (dispatch.c takes them in here). */
extern uint8_t psock_msgbuf[PS_PORT_MSG_MAX] PSOCK_HIDDEN;
/* A message of type to c's peer (DATA: len bytes from iov); -1: reset. */
int psock_msg_send(struct psock_conn *c, uint8_t type, uint64_t count,
		   const struct iovec *iov, int iovcnt, size_t len);
/* The same for DATA from one buffer (len <= PSOCK_DATA_MAX). */
int psock_data_send(struct psock_conn *c, const void *buf, size_t len);
/* Our direction moves to ports: the peer reads tx_kernel bytes first. */
void psock_switch_tx(struct psock_conn *c);
/* The peer hears how much the program consumed (WIN). */
void psock_win_send(struct psock_conn *c);
/* Connections that owe the peer a SWITCH or a WIN (struct psock_conn's
 * owed): they go from the pump, once there is room. */
extern unsigned int psock_owed_conns PSOCK_HIDDEN;
void psock_owed_send(void);

/* ---- chunk.c; with psock_lock() held ---- */
/* len bytes at the end of c's chunks (a datagram: from src_node, src_port);
 * false without memory. */
bool psock_chunk_add(struct psock_conn *c, const uint8_t *data, size_t len,
		     uint16_t src_node, uint16_t src_port);
/* A chunk with room for len bytes (len set), or NULL; and one done with
 * (read, or its connection gone): never free() one.  With the lock. */
struct psock_chunk *psock_chunk_new(size_t len);
void psock_chunk_done(struct psock_chunk *k);

/* ---- dispatch.c; with psock_lock() held ---- */
/* Receive what came over ports and move connections on; or until c
 * has bytes to read (the rest waits in the NIC for the next call). */
void psock_pump(void);
void psock_pump_for(const struct psock_conn *c);
/* The same, and c's next DATA, if it fits room and none of c's bytes
 * wait in chunks, goes straight into buf: returns its length (0: none
 * did).  The caller counts them consumed (the window).  arrived: a
 * packet just ended a wait, no need to ask whether one came. */
size_t psock_pump_into(const struct psock_conn *c, void *buf, size_t room,
		       bool arrived);
/* psock_pump() when anything came (or a fork left work): cheap if not. */
void psock_pump_arrived(void);

/* ---- setup.c; with psock_lock() held ---- */
/* A client that has not seen its server's first bytes checks for them;
 * a server writes its HELLO if it is due. */
void psock_decide(int fd, struct psock_conn *c);
/* The program closes fd (or dup2 replaces it). */
void psock_close(int fd);
/* After connect() started on fd to a peer of ours. */
void psock_connected(int fd);
/* A new connection from accept(); may write the HELLO. */
void psock_accepted(int fd);
/*
 * bind() with port 0 on a stream socket: 1 if we bound it to a marker port
 * instead (any port is fine to the program), 0 to let the kernel do it.
 */
int psock_bind(int fd, const struct sockaddr *addr, socklen_t len);
/* Whether connect() on fd to addr should go our way: bind it to a marker. */
bool psock_want_connect(int fd, const struct sockaddr *addr, socklen_t len);

/* ---- signal.c: signals that interrupted a wait of this thread ---- */
struct psock_intr {
	unsigned long all;		/* handlers run on this thread */
	unsigned long norestart;	/* of them, without SA_RESTART */
};
#define PSOCK_INTR_RESTART	1	/* handlers ran, each SA_RESTART */
#define PSOCK_INTR		2	/* one without SA_RESTART ran */
void psock_intr_mark(struct psock_intr *m);
/* Since m: 0, PSOCK_INTR_RESTART or PSOCK_INTR. */
int psock_intr_since(const struct psock_intr *m);
/* Around a wait with the signal mask of ppoll (NULL: none): what the mask
 * blocks stays blocked while we scan (end gives the old mask back, errno
 * kept); intr marked at the start. */
struct psock_wait_sig {
	struct psock_intr intr;
	const sigset_t *mask;
	sigset_t saved;
};
void psock_wait_begin(struct psock_wait_sig *w, const sigset_t *mask);
void psock_wait_end(const struct psock_wait_sig *w);

/* ---- lock.c: the library's lock ---- */
/* Not recursive.  A handler of the program's that comes while its thread
 * holds it runs at psock_unlock().  Inline, the way without contention
 * and without deferred handlers; lock.c has the rest. */
#define PSOCK_LOCK_WAITERS	0x80000000u	/* someone sleeps on the word */
extern uint32_t psock_lock_word;	/* 0 free, else owner's tid | WAITERS */
extern __thread uint32_t psock_tid __attribute__((tls_model("initial-exec")));
extern __thread bool psock_unlock_due
	__attribute__((tls_model("initial-exec")));
void psock_lock_slow(void);
void psock_unlock_slow(uint32_t was);

static inline void psock_lock(void)
{
	uint32_t v = 0;

	if (!psock_tid ||
	    !__atomic_compare_exchange_n(&psock_lock_word, &v, psock_tid,
					 false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		psock_lock_slow();
}

static inline void psock_unlock(void)
{
	uint32_t was = __atomic_exchange_n(&psock_lock_word, 0,
					   __ATOMIC_RELEASE);

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if ((was & PSOCK_LOCK_WAITERS) || psock_unlock_due)
		psock_unlock_slow(was);
}
/* In a fork child, first. */
void psock_lock_forked(void);
/* From signal.c's handler, with the program's action: true if the signal
 * was deferred until this thread gives the lock up (then return at once). */
bool psock_lock_defers(int sig, siginfo_t *si, void *uc,
		       const struct sigaction *act);
/* signal.c: the program's handler act for sig, counted as a wait's
 * interruption. */
void psock_signal_run(int sig, siginfo_t *si, void *uc,
		      const struct sigaction *act);
/* Whether handlers wait for this thread's psock_unlock(). */
bool psock_lock_deferred(void);
/* Around an exec made with the lock held: handlers run at once, and those
 * deferred run before it (the new image would keep them blocked). */
void psock_lock_exec(bool execing);
/* signal.c: this is a vfork child (it shares the parent's memory). */
bool psock_vfork_child(void);


/* ---- alive.c; with psock_lock() held ---- */
/* c's data goes over ports now: its kernel connection watches the peer. */
void psock_alive_start(struct psock_conn *c);
/* Whether an option is one of the keepalive's (without the lock). */
bool psock_alive_option(int level, int name);
/* setsockopt() (set) or getsockopt() of a keepalive option on c: true if
 * answered here, *ret the call's return (errno set). */
bool psock_alive_sockopt(int fd, struct psock_conn *c, bool set, int level,
			 int name, void *val, socklen_t *len, int *ret);

/* ---- stream.c; with psock_lock() held ---- */
/* The program's data calls on one of our connections. */
ssize_t psock_recv(int fd, struct psock_conn *c, const struct iovec *iov,
		   int iovcnt, int flags);
ssize_t psock_send(int fd, struct psock_conn *c, const struct iovec *iov,
		   int iovcnt, int flags);
/* The same for one buffer (read, recv, write, send): the fast paths. */
ssize_t psock_recv_buf(int fd, struct psock_conn *c, void *buf, size_t len,
		       int flags);
ssize_t psock_send_buf(int fd, struct psock_conn *c, const void *buf,
		       size_t len, int flags);
int psock_shutdown(int fd, struct psock_conn *c, int how);
/* ioctl(FIONREAD) of a stream: the bytes it holds unread, -1 if the
 * kernel answers (before the peer's switch, or not ours after all). */
int psock_unread(int fd, struct psock_conn *c);
/* The kernel stream ended and the grace for the ports FIN still runs:
 * no file wakes us when it is over (check again soon). */
bool psock_eof_pending(const struct psock_conn *c);
/*
 * poll() revents of connection c for events from our state; -1 if the
 * kernel answers for it.  *watch: what to ask of its kernel socket while
 * we wait; *pass: which of the kernel's answers are the program's too.
 */
short psock_events(int fd, struct psock_conn *c, short events, short *watch,
		   short *pass);

/* ---- udp.c; with psock_lock() held ---- */
/* bind() to port 0 of a datagram socket: 1 if we bound it to our marker. */
int psock_udp_bind(int fd, const struct sockaddr *addr, socklen_t len);
/* Before sendto() on a socket that is not ours yet: maybe it becomes so. */
void psock_udp_maybe(int fd, const struct sockaddr *to, socklen_t len);
void psock_udp_connect(struct psock_conn *c, const struct sockaddr *to,
		       socklen_t len);
ssize_t psock_udp_send(int fd, struct psock_conn *c, const struct iovec *iov,
		       int iovcnt, int flags, const struct sockaddr *to,
		       socklen_t tolen);
ssize_t psock_udp_recv(int fd, struct psock_conn *c, const struct iovec *iov,
		       int iovcnt, int flags, struct sockaddr *from,
		       socklen_t *fromlen);
short psock_udp_events(struct psock_conn *c, short events, short *watch,
		       short *pass);
/* A datagram came over ports from (node, its ports port fport, its UDP
 * port src) to our UDP port dst. */
void psock_udp_in(unsigned int node, int fport, uint16_t src, uint16_t dst,
		  in_addr_t sent_to,
		  const uint8_t *data, size_t len);

/* ---- wait.c: the one wait engine ---- */
/* Its phases, in the order it tries them (wait.c says what each does). */
enum psock_phase {
	PSOCK_PHASE_LOOK,	/* our state, then the kernel's without waiting */
	PSOCK_PHASE_SPIN,	/* the port checked a while, kernel files beside */
	PSOCK_PHASE_STALL,	/* one wait on the NIC: only ours waited on */
	PSOCK_PHASE_SLEEP,	/* in the kernel: its files, NIC and doorbell */
	PSOCK_PHASE_IDLE,	/* a call without a timeout that keeps spinning */
};
#define PSOCK_PHASE_ON(phase)	(1u << (phase))

struct psock_waiter;
/* What a caller of the engine brings. */
struct psock_wait_ops {
	/* Our files' state: how many are ready; sets the waiter's only_ours,
	 * soon, ours and full. */
	int (*look)(struct psock_waiter *w);
	/* Ask the kernel about the caller's files, and sleep at most wait_ms
	 * on them and on wake[0..nwake) (the port's; their revents set):
	 * how many of the caller's files are ready in all, or -1 and errno.
	 * Sets kernel_woke; *asked_us when it asked (psock_us_now()). */
	int (*ask)(struct psock_waiter *w, struct pollfd *wake, int nwake,
		   int wait_ms, int64_t *asked_us);
	unsigned int phases;	/* PSOCK_PHASE_ON() of those it uses */
	int st_sleep;		/* its count of sleeps (ST_*) */
	bool epoll;		/* its idle stalls count as epoll_wait's */
};
struct psock_waiter {
	void *ctx;			/* the caller's */
	int timeout_ms;			/* as poll's */
	const sigset_t *mask;		/* as ppoll's, NULL: none */
	bool only_ours;	/* no kernel file needs a sleep: a stall will do */
	bool soon;	/* one of ours wants a look within PS_PORT_POLL_MS */
	bool ours;	/* one of ours may be reported */
	bool full;	/* no room for more: done */
	bool kernel_woke;	/* the kernel spoke for one of ours: look again */
};
/*
 * Wait as ops and w ask: until something is ready, the timeout, or a
 * signal (-1 EINTR).  mask: the kernel's sleeps take it atomically, and a
 * signal it lets through that came while we checked the NIC is taken
 * with it, then EINTR.
 */
int psock_wait(const struct psock_wait_ops *ops, struct psock_waiter *w);
/* An ask's kernel answer for fd, one of ours, beyond what passes to the
 * program: its connection looks at its kernel socket next, even when
 * this call returns now; and the engine looks again.  Takes the lock. */
void psock_kernel_spoke(int fd, struct psock_waiter *w);
/* The kernel's poll() with that mask (ppoll), or without. */
int psock_kernel_poll(struct pollfd *fds, nfds_t n, int timeout_ms,
		      const sigset_t *mask);
/* With a mask: a signal it lets through is pending; then it is taken
 * (its handler runs) and -1 EINTR; else 0. */
int psock_mask_pending(const sigset_t *mask);

/* ---- poll.c ---- */
/* poll() over fds that may include ours; timeout_ms and mask as ppoll's. */
int psock_poll(struct pollfd *fds, nfds_t n, int timeout_ms,
	       const sigset_t *mask);

/* ---- block.c: the waits of the blocking calls ---- */
/*
 * Sleep until one of events holds on our fd, for a blocking call, with
 * the lock given up meanwhile: until the socket's SO_RCVTIMEO (POLLIN) or
 * SO_SNDTIMEO has passed since the call's first sleep, then EAGAIN.
 * *deadline_ms, 0 before that sleep, holds its end for the call's later
 * sleeps (or that the clock was not read yet, psock_sleep_ports()).  0,
 * -1 (the wait failed, errno set) or -2 (another thread closed fd: EBADF).
 */
int psock_sleep(int fd, struct psock_conn *c, short events,
		int64_t *deadline_ms);
/*
 * The same for a blocking read that only a message over ports can end:
 * one wait on the port itself (at most PS_PORT_POLL_MS), then check again;
 * 1 when a packet ended it.
 * The call's first such wait reads no clock: SO_RCVTIMEO counts from the
 * next, so it ends at most PS_PORT_POLL_MS late.
 */
int psock_sleep_ports(int fd, struct psock_conn *c, int64_t *deadline_ms);
/* MSG_DONTWAIT in flags, or O_NONBLOCK on fd (connection c). */
bool psock_nonblocking(int fd, struct psock_conn *c, int flags);
/* fd's flags or options may have changed: ask the kernel again.  Takes
 * no lock (fcntl() and setsockopt() are async-signal-safe). */
void psock_opts_changed(int fd);

/* ---- exec.c ---- */
/* The new image takes back what the old one kept (PSOCK_EXEC). */
void psock_exec_resume(void);

/* ---- epoll.c; the lock held in ctl and closed, taken in wait ---- */
struct epoll_event;
int psock_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
/* Whether epfd holds one of our connections. */
bool psock_epoll_has(int epfd);
/* Whether any epoll holds one (a hint, without the lock). */
bool psock_epoll_any(void);
/* fd is closed: out of every epoll, and its table if it was one. */
void psock_epoll_closed(int fd);
/* The same for the epoll descriptors among first..last (close_range). */
void psock_epoll_closed_range(unsigned int first, unsigned int last);
int psock_epoll_wait(int epfd, struct epoll_event *out, int max,
		     int timeout_ms, const sigset_t *mask);

/* ---- calls.c: the kernel's calls, without going through ourselves ---- */
ssize_t sys_recvmsg(int fd, struct msghdr *m, int flags);
ssize_t sys_sendmsg(int fd, const struct msghdr *m, int flags);
ssize_t sys_recv(int fd, void *buf, size_t len, int flags);
ssize_t sys_send(int fd, const void *buf, size_t len, int flags);
int sys_shutdown(int fd, int how);
int sys_poll(struct pollfd *fds, nfds_t n, int timeout_ms);
int sys_fcntl(int fd, int cmd, long arg);
int sys_close(int fd);

#endif /* PSOCK_H */
