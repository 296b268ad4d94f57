/*
 * The eth fabric's L2 learning table, free of sockets and clocks so it can
 * be unit-tested: callers pass the time in explicitly.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_ETHSWITCH_H
#define FABRICD_ETHSWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ETH_ALEN                6
#define ETH_SWITCH_DEFAULT_MAX  4096
#define ETH_SWITCH_DEFAULT_AGE_NS (300ull * 1000000000ull)

typedef struct EthSwitch EthSwitch;

typedef enum EthForward {
    ETH_FWD_FLOOD,      /* broadcast, multicast or unknown destination */
    ETH_FWD_UNICAST,    /* destination learned on another port */
    ETH_FWD_DROP,       /* destination learned on the ingress port */
} EthForward;

EthSwitch *eth_switch_new(unsigned max_entries, uint64_t age_ns);
void eth_switch_free(EthSwitch *sw);

static inline bool eth_addr_is_multicast(const uint8_t *mac)
{
    return mac[0] & 1;  /* the I/G bit; broadcast is a multicast address */
}

/*
 * Remember that `mac` was seen as a source on `port` at `now_ns`.  Multicast
 * sources are ignored; a full table evicts the least recently seen entry.
 */
void eth_switch_learn(EthSwitch *sw, const uint8_t *mac, unsigned port,
                      uint64_t now_ns);

/* Port `mac` was learned on, or -1 if unknown or aged out. */
int eth_switch_lookup(EthSwitch *sw, const uint8_t *mac, uint64_t now_ns);

/*
 * Learn the frame's source, then decide where it goes.  For ETH_FWD_UNICAST
 * *out_port is the destination.  `frame` must hold at least 14 bytes.
 */
EthForward eth_switch_forward(EthSwitch *sw, const uint8_t *frame,
                              unsigned in_port, uint64_t now_ns,
                              unsigned *out_port);

/* Forget every address learned on `port` (its link went away). */
void eth_switch_forget_port(EthSwitch *sw, unsigned port);

/* Drop entries not seen for the ageing time. */
void eth_switch_expire(EthSwitch *sw, uint64_t now_ns);

unsigned eth_switch_size(const EthSwitch *sw);

typedef void (*EthSwitchVisit)(const uint8_t *mac, unsigned port,
                               uint64_t age_ns, void *opaque);

/* Visit the live entries, least recently seen first. */
void eth_switch_foreach(EthSwitch *sw, uint64_t now_ns, EthSwitchVisit visit,
                        void *opaque);

#endif
