/*
 * Unit tests for the eth learning table (ethswitch.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <string.h>

#include "ethswitch.h"

#define SEC 1000000000ull

static const uint8_t mac_a[6] = { 0x52, 0x54, 0x00, 0x00, 0x00, 0x0a };
static const uint8_t mac_b[6] = { 0x52, 0x54, 0x00, 0x00, 0x00, 0x0b };
static const uint8_t mac_c[6] = { 0x52, 0x54, 0x00, 0x00, 0x00, 0x0c };
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };

/* A 14-byte Ethernet header is all the switch looks at. */
static const uint8_t *frame(const uint8_t *dst, const uint8_t *src)
{
    static uint8_t buf[14];

    memcpy(buf, dst, 6);
    memcpy(buf + 6, src, 6);
    buf[12] = 0x08;
    buf[13] = 0x00;
    return buf;
}

static EthSwitch *new_switch(void)
{
    return eth_switch_new(ETH_SWITCH_DEFAULT_MAX, ETH_SWITCH_DEFAULT_AGE_NS);
}

static void test_unknown_floods_and_learns(void)
{
    EthSwitch *sw = new_switch();
    unsigned out = 99;

    g_assert_cmpint(eth_switch_lookup(sw, mac_a, 0), ==, -1);
    g_assert_cmpint(eth_switch_forward(sw, frame(mac_b, mac_a), 0, 0, &out),
                    ==, ETH_FWD_FLOOD);
    g_assert_cmpuint(out, ==, 99);      /* untouched when flooding */
    g_assert_cmpint(eth_switch_lookup(sw, mac_a, 0), ==, 0);
    g_assert_cmpuint(eth_switch_size(sw), ==, 1);
    eth_switch_free(sw);
}

static void test_broadcast_and_multicast_flood(void)
{
    EthSwitch *sw = new_switch();
    unsigned out;

    eth_switch_learn(sw, mac_b, 1, 0);
    g_assert_cmpint(eth_switch_forward(sw, frame(bcast, mac_a), 0, 0, &out),
                    ==, ETH_FWD_FLOOD);
    g_assert_cmpint(eth_switch_forward(sw, frame(mcast, mac_a), 0, 0, &out),
                    ==, ETH_FWD_FLOOD);
    eth_switch_free(sw);
}

static void test_unicast_to_learned_port(void)
{
    EthSwitch *sw = new_switch();
    unsigned out = 99;

    eth_switch_forward(sw, frame(bcast, mac_b), 2, 0, &out);
    g_assert_cmpint(eth_switch_forward(sw, frame(mac_b, mac_a), 0, 1, &out),
                    ==, ETH_FWD_UNICAST);
    g_assert_cmpuint(out, ==, 2);
    /* and the reply goes straight back */
    g_assert_cmpint(eth_switch_forward(sw, frame(mac_a, mac_b), 2, 2, &out),
                    ==, ETH_FWD_UNICAST);
    g_assert_cmpuint(out, ==, 0);
    eth_switch_free(sw);
}

static void test_destination_on_ingress_port_dropped(void)
{
    EthSwitch *sw = new_switch();
    unsigned out;

    eth_switch_learn(sw, mac_b, 1, 0);
    g_assert_cmpint(eth_switch_forward(sw, frame(mac_b, mac_a), 1, 0, &out),
                    ==, ETH_FWD_DROP);
    eth_switch_free(sw);
}

static void test_mac_moves_port(void)
{
    EthSwitch *sw = new_switch();
    unsigned out;

    eth_switch_learn(sw, mac_b, 1, 0);
    eth_switch_forward(sw, frame(bcast, mac_b), 2, SEC, &out);
    g_assert_cmpint(eth_switch_lookup(sw, mac_b, SEC), ==, 2);
    g_assert_cmpuint(eth_switch_size(sw), ==, 1);
    g_assert_cmpint(eth_switch_forward(sw, frame(mac_b, mac_a), 0, SEC, &out),
                    ==, ETH_FWD_UNICAST);
    g_assert_cmpuint(out, ==, 2);
    eth_switch_free(sw);
}

static void test_aging(void)
{
    EthSwitch *sw = eth_switch_new(16, 300 * SEC);
    unsigned out;

    eth_switch_learn(sw, mac_a, 0, 0);
    eth_switch_learn(sw, mac_b, 1, 100 * SEC);
    g_assert_cmpint(eth_switch_lookup(sw, mac_a, 299 * SEC), ==, 0);
    g_assert_cmpint(eth_switch_lookup(sw, mac_a, 300 * SEC), ==, -1);
    g_assert_cmpint(eth_switch_lookup(sw, mac_b, 300 * SEC), ==, 1);
    /* an aged-out destination floods again */
    g_assert_cmpint(eth_switch_forward(sw, frame(mac_b, mac_c), 2, 400 * SEC,
                                       &out), ==, ETH_FWD_FLOOD);
    /* traffic refreshes an entry */
    eth_switch_learn(sw, mac_c, 2, 500 * SEC);
    eth_switch_learn(sw, mac_c, 2, 790 * SEC);
    g_assert_cmpint(eth_switch_lookup(sw, mac_c, 1000 * SEC), ==, 2);
    eth_switch_expire(sw, 2000 * SEC);
    g_assert_cmpuint(eth_switch_size(sw), ==, 0);
    eth_switch_free(sw);
}

static void test_multicast_source_not_learned(void)
{
    EthSwitch *sw = new_switch();
    unsigned out;

    eth_switch_forward(sw, frame(mac_a, mcast), 1, 0, &out);
    eth_switch_forward(sw, frame(mac_a, bcast), 1, 0, &out);
    g_assert_cmpuint(eth_switch_size(sw), ==, 0);
    g_assert_cmpint(eth_switch_lookup(sw, mcast, 0), ==, -1);
    g_assert_cmpint(eth_switch_lookup(sw, bcast, 0), ==, -1);
    eth_switch_free(sw);
}

static void mac_n(unsigned n, uint8_t *mac)
{
    mac[0] = 0x02;      /* locally administered unicast */
    mac[1] = 0;
    mac[2] = n >> 24;
    mac[3] = n >> 16;
    mac[4] = n >> 8;
    mac[5] = n;
}

static void test_full_table_evicts_oldest(void)
{
    EthSwitch *sw = eth_switch_new(4, 300 * SEC);
    uint8_t mac[6];

    for (unsigned i = 0; i < 4; i++) {
        mac_n(i, mac);
        eth_switch_learn(sw, mac, i, i * SEC);
    }
    /* refresh #0 so that #1 is now the least recently seen */
    mac_n(0, mac);
    eth_switch_learn(sw, mac, 0, 10 * SEC);
    mac_n(100, mac);
    eth_switch_learn(sw, mac, 3, 11 * SEC);
    g_assert_cmpuint(eth_switch_size(sw), ==, 4);
    mac_n(1, mac);
    g_assert_cmpint(eth_switch_lookup(sw, mac, 11 * SEC), ==, -1);
    for (unsigned i = 0; i < 4; i++) {
        if (i != 1) {
            mac_n(i, mac);
            g_assert_cmpint(eth_switch_lookup(sw, mac, 11 * SEC), ==, i);
        }
    }
    mac_n(100, mac);
    g_assert_cmpint(eth_switch_lookup(sw, mac, 11 * SEC), ==, 3);

    /* many more addresses than slots: never grows past the bound */
    for (unsigned i = 200; i < 1200; i++) {
        mac_n(i, mac);
        eth_switch_learn(sw, mac, i % 3, 12 * SEC);
        g_assert_cmpuint(eth_switch_size(sw), <=, 4);
    }
    mac_n(1199, mac);
    g_assert_cmpint(eth_switch_lookup(sw, mac, 12 * SEC), ==, 1199 % 3);
    eth_switch_free(sw);
}

static void test_port_removal(void)
{
    EthSwitch *sw = new_switch();
    unsigned out;

    eth_switch_learn(sw, mac_a, 0, 0);
    eth_switch_learn(sw, mac_b, 1, 0);
    eth_switch_learn(sw, mac_c, 1, 0);
    eth_switch_forget_port(sw, 1);
    g_assert_cmpuint(eth_switch_size(sw), ==, 1);
    g_assert_cmpint(eth_switch_lookup(sw, mac_b, 0), ==, -1);
    g_assert_cmpint(eth_switch_lookup(sw, mac_c, 0), ==, -1);
    g_assert_cmpint(eth_switch_lookup(sw, mac_a, 0), ==, 0);
    g_assert_cmpint(eth_switch_forward(sw, frame(mac_b, mac_a), 0, 0, &out),
                    ==, ETH_FWD_FLOOD);
    eth_switch_forget_port(sw, 7);      /* nothing there: harmless */
    g_assert_cmpuint(eth_switch_size(sw), ==, 1);
    eth_switch_free(sw);
}

typedef struct Seen {
    unsigned count;
    unsigned ports[8];
    uint64_t ages[8];
} Seen;

static void record(const uint8_t *mac, unsigned port, uint64_t age_ns,
                   void *opaque)
{
    Seen *s = opaque;

    s->ports[s->count] = port;
    s->ages[s->count++] = age_ns;
}

static void test_foreach_oldest_first(void)
{
    EthSwitch *sw = new_switch();
    Seen seen = { 0 };

    eth_switch_learn(sw, mac_b, 1, 5 * SEC);
    eth_switch_learn(sw, mac_a, 0, 7 * SEC);
    eth_switch_foreach(sw, 10 * SEC, record, &seen);
    g_assert_cmpuint(seen.count, ==, 2);
    g_assert_cmpuint(seen.ports[0], ==, 1);
    g_assert_cmpuint(seen.ages[0], ==, 5 * SEC);
    g_assert_cmpuint(seen.ports[1], ==, 0);
    g_assert_cmpuint(seen.ages[1], ==, 3 * SEC);
    eth_switch_free(sw);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ethswitch/unknown-floods-and-learns",
                    test_unknown_floods_and_learns);
    g_test_add_func("/ethswitch/broadcast-multicast-flood",
                    test_broadcast_and_multicast_flood);
    g_test_add_func("/ethswitch/unicast-to-learned-port",
                    test_unicast_to_learned_port);
    g_test_add_func("/ethswitch/ingress-port-dropped",
                    test_destination_on_ingress_port_dropped);
    g_test_add_func("/ethswitch/mac-moves-port", test_mac_moves_port);
    g_test_add_func("/ethswitch/aging", test_aging);
    g_test_add_func("/ethswitch/multicast-source-not-learned",
                    test_multicast_source_not_learned);
    g_test_add_func("/ethswitch/full-table-evicts-oldest",
                    test_full_table_evicts_oldest);
    g_test_add_func("/ethswitch/port-removal", test_port_removal);
    g_test_add_func("/ethswitch/foreach-oldest-first",
                    test_foreach_oldest_first);
    return g_test_run();
}
