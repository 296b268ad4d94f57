/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The MCP's host interface: where the firmware in the card's SRAM, the
 * driver (myri.ko) and user space (the HAL backend) meet. Everything here
 * lives in SRAM or in a context's receive region in host memory, at fixed
 * or driver-chosen offsets, little-endian. The card's registers are in
 * lanai_regs.h; docs/hw/myri-mcp.md describes the protocol.
 *
 * Shared by the firmware (freestanding C), the kernel and user space.
 *
 * SRAM, as the driver sets it up (offsets from SRAM 0 = core address 0):
 *
 *   0x00000  the MCP image (code, data, bss, stack), at most MCP_CODE_MAX
 *   0x30000  struct mcp_global: driver <-> MCP, never mapped to users
 *   0x31000  routes: struct mcp_route[MCP_MAX_NODES]
 *   0x33000  the doorbell FIFO: MCP_DB_ENTRIES x 8 bytes (DB_BASE/DB_SIZE)
 *   0x35000  the MCP's own scratch (packet headers, receive buffers)
 *   0x80000  context send areas to the end of SRAM, page aligned, each
 *            mapped into the process that opened the context
 */
#ifndef _MYRI_MCP_IF_H
#define _MYRI_MCP_IF_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#define MCP_ABI			1

#define MCP_CODE_MAX		0x30000
#define MCP_GLOBAL_OFF		0x30000
#define MCP_ROUTES_OFF		0x31000
#define MCP_DB_OFF		0x33000
#define MCP_DB_ENTRIES		1024
#define MCP_SCRATCH_OFF		0x35000
#define MCP_CTX_AREA_OFF	0x80000

#define MCP_MAX_NODES		64	/* RDP keeps about 600 bytes per peer */
#define MCP_MAX_CTX		16
#define MCP_MAX_SLOTS		256	/* send slots of one context */
#define MCP_HAL_CTX		0	/* the HAL's context: ports and rawdata */
#define MCP_MAX_PAYLOAD		8192	/* bytes a slot sends: the HAL's MTU */

/* ---- the firmware file: myri/mcp.bin = this header + the image ---- */

#define MCP_IMAGE_MAGIC		0x4950434du	/* "MCPI" */

struct mcp_image_hdr {
	uint32_t magic;		/* MCP_IMAGE_MAGIC */
	uint32_t abi;		/* MCP_ABI */
	uint32_t load_size;	/* image bytes after this header, for SRAM 0 */
	uint32_t mem_end;	/* end of bss and stack, <= MCP_CODE_MAX */
	uint32_t crc32;		/* IEEE CRC-32 of the image bytes */
	uint32_t reserved[3];
	char name[32];		/* NUL-terminated, for the driver's log */
};				/* 64 bytes */

/* ---- struct mcp_global ---- */

#define MCP_MAGIC		0x3150434du	/* "MCP1" */

enum mcp_state {
	MCP_STATE_BOOT = 0,	/* driver: loaded, not yet running */
	MCP_STATE_READY = 1,	/* MCP: initialised, serving */
	MCP_STATE_PANIC = 2,	/* MCP: gave up; panic_code says why */
};

/* Protocol parameters, set by the driver before start (0: the default). */
enum mcp_param {
	MCP_P_RTO_US,		/* retransmit timeout (16384) */
	MCP_P_WINDOW,		/* packets in flight per peer (16) */
	MCP_P_MRC,		/* retransmissions before a peer is dead
				 * (300: 5 s at the default RTO, so a VM
				 * that the host starves is not given up) */
	MCP_P_ACK_DELAY_US,	/* explicit ACK at the latest after (100) */
	MCP_P_ACK_PENDING,	/* explicit ACK after this many packets (4) */
	MCP_P_CTO_US,		/* pause after a capacity NACK (1000) */
	MCP_P_REFUSE_US,	/* a destination that took nothing for this
				 * long: the sends it refuses fail with
				 * MYRI_ERR_NO_ROOM (2000000) */
	MCP_PARAMS = 16
};

/* Counters the MCP keeps; the driver shows them in sysfs by these names. */
#define MCP_COUNTER_LIST(X)						\
	X(sent) X(received) X(retransmitted) X(acks_sent) X(acks_piggy)	\
	X(acks_rcvd) X(seq_nacks_tx) X(seq_nacks_rx) X(cap_nacks_tx)	\
	X(cap_nacks_rx) X(crc_drops) X(sanity_drops) X(dup_drops)	\
	X(window_stalls) X(timeouts) X(reconnects) X(undeliverable)	\
	X(doorbells) X(ctx_errors) X(parked) X(noroom)

#define MCP_COUNTER_ENUM(name) MCP_CNT_##name,
enum mcp_counter {
	MCP_COUNTER_LIST(MCP_COUNTER_ENUM)
	MCP_COUNTERS
};
#undef MCP_COUNTER_ENUM

/* Driver commands, one at a time through the mailbox. */
enum mcp_cmd {
	MCP_CMD_NONE = 0,
	MCP_CMD_OPEN_CTX = 1,	/* arg: ctx, whose mcp_ctx is filled in */
	MCP_CMD_CLOSE_CTX = 2,	/* arg: ctx; after the ack the MCP no longer
				 * touches its send area or receive region */
};

enum mcp_ctx_state {
	MCP_CTX_CLOSED = 0,
	MCP_CTX_OPEN = 1,
};

/* A context, as only the driver and the MCP see it. */
struct mcp_ctx {
	uint32_t state;		/* MCP_CTX_*: the MCP's view */
	uint32_t send_off;	/* SRAM offset of the send area, page aligned:
				 * page 0 struct myri_ctx_user, then slots */
	uint32_t nslots;	/* send slots, power of 2, <= MCP_MAX_SLOTS */
	uint32_t slot_size;	/* bytes per slot: MYRI_SLOT_HDR + data,
				 * multiple of 64 */
	uint32_t rx_bus_lo;	/* receive region: host bus address */
	uint32_t rx_bus_hi;
	uint32_t rx_size;	/* bytes: nev events, then the data ring */
	uint32_t nev;		/* event ring entries, power of 2 */
	uint32_t irq;		/* driver: raise HOST_SIG with its notify */
	uint32_t notifies;	/* MCP: count of notifies (driver wake-ups) */
	uint32_t reserved[6];
};				/* 64 bytes */

struct mcp_global {
	/* written by the driver before the core starts */
	uint32_t magic;		/* MCP_MAGIC */
	uint32_t abi;		/* MCP_ABI */
	uint32_t node;		/* this node */
	uint32_t nodes;		/* nodes in the network (<= MCP_MAX_NODES) */
	uint32_t nonce;		/* new at every load: fresh connection ids */
	uint32_t sram_size;
	uint32_t params[MCP_PARAMS];
	/* written by the MCP */
	uint32_t state;		/* enum mcp_state */
	uint32_t heartbeat;	/* counts up while the MCP runs */
	uint32_t panic_code;
	uint32_t panic_arg;
	/* mailbox: the driver fills cmd and arg, increments cmd_seq and sets
	 * ISR.LANAI_SIG; the MCP sets cmd_status, then cmd_done = cmd_seq */
	uint32_t cmd;
	uint32_t cmd_arg;
	uint32_t cmd_seq;
	uint32_t cmd_done;
	uint32_t cmd_status;	/* 0 or a MYRI_ERR_* */
	uint32_t reserved[19];
	uint32_t counters[32];	/* enum mcp_counter */
	struct mcp_ctx ctx[MCP_MAX_CTX];
};

/* The route to a node: its bytes as the switches consume them. */
struct mcp_route {
	uint8_t len;		/* 0: no route (also for this node itself) */
	uint8_t bytes[31];
};

/* ---- a context's send area, mapped into its process ---- */

/*
 * Page 0. The user writes the first half, the MCP the second; each side
 * only reads the other's.
 */
struct myri_ctx_user {
	/* the user's */
	uint32_t ev_cons;	/* events consumed (free-running) */
	uint32_t rx_cons;	/* data ring bytes freed (free-running) */
	uint32_t want_notify;	/* 1: HOST_NOTIFY at the next event; the
				 * MCP clears it when it notifies */
	uint32_t slot_next;	/* the next slot to fill (free-running),
				 * shared by the context's users; the
				 * driver's poll/WAIT look at it, the MCP
				 * ignores it */
	uint32_t user_reserved[12];
	/* the MCP's */
	uint32_t ev_prod;	/* events written (free-running) */
	uint32_t err;		/* last MYRI_ERR_* of a bad request */
	uint32_t mcp_reserved[14];
};

/*
 * Send slot i sits at send_off + 4096 + i * slot_size. The user takes the
 * slots in ring order: waits until the slot's state is FREE, fills it,
 * sets POSTED, then writes i to its doorbell page. The MCP sets BUSY when
 * it takes the slot and FREE (with status) when the peer has the data or
 * the send failed; the slot's data must stay as it is until then, since
 * retransmissions read it.
 */
enum myri_slot_state {
	MYRI_SLOT_FREE = 0,
	MYRI_SLOT_POSTED = 1,
	MYRI_SLOT_BUSY = 2,
};

#define MYRI_SLOT_F_EVENT	0x01	/* MYRI_EV_SENT when done (errors
					 * always give MYRI_EV_SEND_ERR) */

struct myri_slot {
	uint16_t dst_node;
	uint8_t dst_ctx;
	uint8_t flags;		/* MYRI_SLOT_F_* */
	uint32_t len;		/* payload bytes, 1..slot_size - MYRI_SLOT_HDR */
	uint32_t state;		/* enum myri_slot_state */
	uint32_t status;	/* MYRI_ERR_* of the last send, 0 = delivered */
	uint32_t cookie;	/* the user's, echoed in events */
	uint32_t reserved[10];
	uint8_t dst_ctx_wire;	/* MCP: the 4 bytes in front of the data */
	uint8_t src_ctx_wire;	/* travel with it to the receiving MCP */
	uint16_t wire_reserved;
	uint8_t data[];
};
#define MYRI_SLOT_HDR		64

/* ---- a context's receive region, host memory, mapped read-only ---- */

/*
 * nev events of 16 bytes, then the data ring (rx_size - 16 * nev bytes,
 * a power of 2, so that free-running positions wrap cleanly).
 * The MCP writes a payload, then its event, then ev_prod. A payload starts
 * 64-byte aligned and never wraps: if it does not fit before the ring's
 * end, it starts at the ring's beginning. Its `pos` is free-running; the
 * user frees it by setting rx_cons to pos + len rounded up to 64.
 */
enum myri_event_type {
	MYRI_EV_RX = 1,		/* a payload from (src_node, src_ctx) */
	MYRI_EV_SENT = 2,	/* slot aux is delivered (MYRI_SLOT_F_EVENT) */
	MYRI_EV_SEND_ERR = 3,	/* slot aux failed: status */
	MYRI_EV_PEER_RESET = 4,	/* src_node restarted: what was in flight
				 * to or from it may be lost */
	MYRI_EV_CTX_ERR = 5,	/* a bad request of ours: status, aux */
};

struct myri_event {
	uint8_t type;		/* enum myri_event_type */
	uint8_t src_ctx;
	uint16_t src_node;
	uint32_t len;		/* RX: payload bytes */
	uint32_t pos;		/* RX: free-running data ring position;
				 * SENT/SEND_ERR: the slot's cookie */
	uint16_t aux;		/* SENT/SEND_ERR/CTX_ERR: slot index */
	uint16_t status;	/* MYRI_ERR_* */
};

#define MYRI_RX_ALIGN		64

enum myri_err {
	MYRI_ERR_NONE = 0,
	MYRI_ERR_BAD_SLOT = 1,	/* doorbell names no posted slot */
	MYRI_ERR_BAD_LEN = 2,	/* len 0 or larger than the slot */
	MYRI_ERR_BAD_DEST = 3,	/* node >= nodes, no route, or ctx range */
	MYRI_ERR_PEER_DEAD = 4,	/* no answer after MRC retransmissions */
	MYRI_ERR_CLOSED = 6,	/* the context was closed */
	MYRI_ERR_BAD_CMD = 7,	/* mailbox: unknown command or bad argument */
	MYRI_ERR_NO_ROOM = 8,	/* the destination took nothing for
				 * MCP_P_REFUSE_US and had no room for it */
};

/* Why the MCP gave up: mcp_global.panic_code, and a0 of its final ebreak. */
enum mcp_panic {
	MCP_PANIC_NONE = 0,
	MCP_PANIC_MAGIC = 1,	/* arg: the magic found */
	MCP_PANIC_ABI = 2,	/* arg: the abi found */
	MCP_PANIC_NODES = 3,	/* arg: node << 16 | nodes */
	MCP_PANIC_SRAM = 4,	/* arg: sram_size */
	MCP_PANIC_PARAMS = 5,	/* arg: the first bad mcp_param index */
	MCP_PANIC_DMA = 6,	/* arg: DMA_STS of the failed chain */
	MCP_PANIC_RX_ARM = 7,	/* arg: RSTAT: receive buffer refused */
};

_Static_assert(sizeof(struct mcp_image_hdr) == 64, "image header");
_Static_assert(sizeof(struct mcp_ctx) == 64, "mcp_ctx");
_Static_assert(MCP_COUNTERS <= 32, "counters");
_Static_assert(sizeof(struct mcp_global) <= MCP_ROUTES_OFF - MCP_GLOBAL_OFF,
	       "mcp_global");
_Static_assert(sizeof(struct mcp_route) * MCP_MAX_NODES <=
	       MCP_DB_OFF - MCP_ROUTES_OFF, "routes");
_Static_assert(8 * MCP_DB_ENTRIES <= MCP_SCRATCH_OFF - MCP_DB_OFF, "doorbells");
_Static_assert(sizeof(struct myri_ctx_user) == 128, "ctx user page");
_Static_assert(sizeof(struct myri_slot) == MYRI_SLOT_HDR, "slot header");
_Static_assert(sizeof(struct myri_event) == 16, "event");

#endif /* _MYRI_MCP_IF_H */
