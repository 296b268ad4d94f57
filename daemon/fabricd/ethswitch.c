/*
 * L2 learning table.  Entries live in a hash keyed by the 48-bit address and
 * in a queue ordered by last sighting, so refreshing, ageing and evicting
 * the oldest entry are all O(1).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <string.h>

#include "ethswitch.h"

typedef struct MacEntry {
    uint64_t key;
    unsigned port;
    uint64_t last_seen_ns;
    GList link;             /* our node in EthSwitch.by_age */
} MacEntry;

struct EthSwitch {
    GHashTable *by_mac;     /* uint64 key -> MacEntry (owned) */
    GQueue by_age;          /* oldest first */
    unsigned max_entries;
    uint64_t age_ns;
};

static uint64_t mac_key(const uint8_t *mac)
{
    uint64_t k = 0;

    for (int i = 0; i < ETH_ALEN; i++) {
        k = k << 8 | mac[i];
    }
    return k;
}

static void mac_from_key(uint64_t k, uint8_t *mac)
{
    for (int i = ETH_ALEN - 1; i >= 0; i--) {
        mac[i] = k & 0xff;
        k >>= 8;
    }
}

EthSwitch *eth_switch_new(unsigned max_entries, uint64_t age_ns)
{
    EthSwitch *sw = g_new0(EthSwitch, 1);

    sw->by_mac = g_hash_table_new_full(g_int64_hash, g_int64_equal,
                                       NULL, g_free);
    g_queue_init(&sw->by_age);
    sw->max_entries = max_entries ? max_entries : 1;
    sw->age_ns = age_ns;
    return sw;
}

void eth_switch_free(EthSwitch *sw)
{
    if (!sw) {
        return;
    }
    g_hash_table_destroy(sw->by_mac);
    g_free(sw);
}

static void entry_remove(EthSwitch *sw, MacEntry *e)
{
    g_queue_unlink(&sw->by_age, &e->link);
    g_hash_table_remove(sw->by_mac, &e->key);   /* frees e */
}

static bool entry_expired(const EthSwitch *sw, const MacEntry *e,
                          uint64_t now_ns)
{
    return now_ns >= e->last_seen_ns && now_ns - e->last_seen_ns >= sw->age_ns;
}

void eth_switch_expire(EthSwitch *sw, uint64_t now_ns)
{
    GList *oldest;

    while ((oldest = sw->by_age.head) &&
           entry_expired(sw, oldest->data, now_ns)) {
        entry_remove(sw, oldest->data);
    }
}

void eth_switch_learn(EthSwitch *sw, const uint8_t *mac, unsigned port,
                      uint64_t now_ns)
{
    if (eth_addr_is_multicast(mac)) {
        return;
    }
    uint64_t key = mac_key(mac);
    MacEntry *e = g_hash_table_lookup(sw->by_mac, &key);

    if (e) {
        /* Refresh; a station that moved is simply relearned. */
        g_queue_unlink(&sw->by_age, &e->link);
    } else {
        eth_switch_expire(sw, now_ns);
        if (g_hash_table_size(sw->by_mac) >= sw->max_entries) {
            entry_remove(sw, sw->by_age.head->data);
        }
        e = g_new0(MacEntry, 1);
        e->key = key;
        e->link.data = e;
        g_hash_table_insert(sw->by_mac, &e->key, e);
    }
    e->port = port;
    e->last_seen_ns = now_ns;
    g_queue_push_tail_link(&sw->by_age, &e->link);
}

int eth_switch_lookup(EthSwitch *sw, const uint8_t *mac, uint64_t now_ns)
{
    uint64_t key = mac_key(mac);
    MacEntry *e = g_hash_table_lookup(sw->by_mac, &key);

    if (!e) {
        return -1;
    }
    if (entry_expired(sw, e, now_ns)) {
        entry_remove(sw, e);
        return -1;
    }
    return e->port;
}

EthForward eth_switch_forward(EthSwitch *sw, const uint8_t *frame,
                              unsigned in_port, uint64_t now_ns,
                              unsigned *out_port)
{
    const uint8_t *dst = frame;
    const uint8_t *src = frame + ETH_ALEN;

    eth_switch_learn(sw, src, in_port, now_ns);
    if (eth_addr_is_multicast(dst)) {
        return ETH_FWD_FLOOD;
    }
    int port = eth_switch_lookup(sw, dst, now_ns);

    if (port < 0) {
        return ETH_FWD_FLOOD;
    }
    if ((unsigned)port == in_port) {
        return ETH_FWD_DROP;
    }
    *out_port = port;
    return ETH_FWD_UNICAST;
}

void eth_switch_forget_port(EthSwitch *sw, unsigned port)
{
    GList *l = sw->by_age.head;

    while (l) {
        GList *next = l->next;
        MacEntry *e = l->data;

        if (e->port == port) {
            entry_remove(sw, e);
        }
        l = next;
    }
}

unsigned eth_switch_size(const EthSwitch *sw)
{
    return g_hash_table_size(sw->by_mac);
}

void eth_switch_foreach(EthSwitch *sw, uint64_t now_ns, EthSwitchVisit visit,
                        void *opaque)
{
    eth_switch_expire(sw, now_ns);
    for (GList *l = sw->by_age.head; l; l = l->next) {
        const MacEntry *e = l->data;
        uint8_t mac[ETH_ALEN];

        mac_from_key(e->key, mac);
        visit(mac, e->port,
              now_ns > e->last_seen_ns ? now_ns - e->last_seen_ns : 0, opaque);
    }
}
