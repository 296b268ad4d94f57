/*
 * Unit tests for the telegraphos network model (telegraphos-net.c) without
 * sockets: delivery stamps, HELLO and restarts, the checks of a device's
 * DATA, multicast groups, and back-pressure (which senders a congested
 * node holds, and when they read again).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <string.h>

#include "proto/telegraphos.h"
#include "telegraphos-net.h"

/* pause_input calls, newest last: +N paused, -N resumed */
typedef struct Pauses {
    GArray *calls;
} Pauses;

static void record_pause(void *opaque, unsigned node, bool pause)
{
    Pauses *p = opaque;
    int v = pause ? (int)node + 1 : -((int)node + 1);

    g_array_append_val(p->calls, v);
}

static TgrNet *net_new(unsigned nodes, Pauses *p)
{
    static const TgrOps ops = { .pause_input = record_pause };
    TgrConfig cfg = {
        .nodes = nodes, .hop_ns = TGR_DEFAULT_HOP_NS,
        .link_mbps = TGR_DEFAULT_LINK_MBPS,
    };

    p->calls = g_array_new(FALSE, FALSE, sizeof(int));
    return tgrnet_new(&cfg, &ops, p);
}

static int call(Pauses *p, guint i)
{
    g_assert_cmpuint(i, <, p->calls->len);
    return g_array_index(p->calls, int, i);
}

static size_t payload(uint8_t op, uint32_t eidx, size_t body, uint8_t *pl)
{
    FabricTgrHdr t = { .op = op, .seq = 7, .eidx = eidx };

    memset(pl, 0, FABRIC_TGR_HDR_LEN + body);
    fabric_tgr_hdr_encode(&t, pl);
    return FABRIC_TGR_HDR_LEN + body;
}

static bool join(TgrNet *n, unsigned node, unsigned group, bool in)
{
    uint8_t pl[FABRIC_TGR_GROUP_LEN] = {
        in ? FABRIC_CTL_TGR_JOIN : FABRIC_CTL_TGR_LEAVE,
    };
    char why[128];

    fabric_put_le16(pl + 1, group);
    return tgrnet_membership(n, node, pl, sizeof(pl), why, sizeof(why));
}

static void test_stamps_and_hello(void)
{
    Pauses p;
    TgrNet *n = net_new(3, &p);

    /* 250 ns and 1000 bytes at 100 MB/s */
    g_assert_cmpuint(tgrnet_deliver_time(n, 1000, 1000), ==,
                     1000 + 250 + 10000);
    g_assert_cmpstr(tgrnet_op_name(FABRIC_TGR_MCAST_WRITE), ==,
                    "MCAST_WRITE");
    g_assert_true(tgrnet_op_is_request(FABRIC_TGR_READ_REQ));
    g_assert_false(tgrnet_op_is_request(FABRIC_TGR_READ_REP));
    g_assert_false(tgrnet_op_is_request(FABRIC_TGR_NACK));

    g_assert_false(tgrnet_hello(n, 1));
    g_assert_true(tgrnet_node(n, 1)->linked);
    tgrnet_node(n, 1)->logged = 3;
    tgrnet_port_down(n, 1, false);
    g_assert_false(tgrnet_node(n, 1)->linked);
    /* the second HELLO is a restart; refusals are logged afresh */
    g_assert_true(tgrnet_hello(n, 1));
    g_assert_cmpuint(tgrnet_node(n, 1)->resets, ==, 1);
    g_assert_cmpuint(tgrnet_node(n, 1)->logged, ==, 0);
    tgrnet_unlink(n, 1);
    g_assert_false(tgrnet_node(n, 1)->linked);
    g_assert_cmpuint(p.calls->len, ==, 0);
    tgrnet_free(n);
    g_array_free(p.calls, TRUE);
}

static void test_data(void)
{
    Pauses p;
    TgrNet *n = net_new(3, &p);
    uint8_t pl[FABRIC_TGR_HDR_LEN + TGR_MAX_BODY + 1];
    FabricHdr h = { .kind = FABRIC_KIND_TELEGRAPHOS,
                    .type = FABRIC_TYPE_DATA, .src = 0, .dst = 1 };
    FabricTgrHdr t;
    unsigned group = 99;
    char why[256];
    size_t len = payload(FABRIC_TGR_WRITE, 0, 8, pl);

    g_assert_cmpint(tgrnet_data(n, 0, &h, pl, len, &t, &group, why,
                                sizeof(why)), ==, TGR_DATA_MALFORMED);
    g_assert_cmpstr(why, ==, "DATA before HELLO");
    tgrnet_hello(n, 0);
    /* node 1 is not linked yet, node 5 does not exist */
    g_assert_cmpint(tgrnet_data(n, 0, &h, pl, len, &t, &group, why,
                                sizeof(why)), ==, TGR_DATA_UNREACHABLE);
    g_assert_cmpuint(t.seq, ==, 7);
    h.dst = 5;
    g_assert_cmpint(tgrnet_data(n, 0, &h, pl, len, &t, &group, why,
                                sizeof(why)), ==, TGR_DATA_UNREACHABLE);
    tgrnet_hello(n, 1);
    h.dst = 1;
    g_assert_cmpint(tgrnet_data(n, 0, &h, pl, len, &t, &group, why,
                                sizeof(why)), ==, TGR_DATA_UNICAST);
    g_assert_cmpuint(tgrnet_node(n, 0)->frames, ==, 3);
    g_assert_cmpuint(tgrnet_node(n, 0)->bytes, ==, 3 * len);
    g_assert_cmpuint(tgrnet_node(n, 0)->unreachable, ==, 2);

    /* malformed frames are not counted */
    h.flags = 1;
    g_assert_cmpint(tgrnet_data(n, 0, &h, pl, len, &t, &group, why,
                                sizeof(why)), ==, TGR_DATA_MALFORMED);
    g_assert_cmpstr(why, ==, "DATA with flags 0x01; a device sends 0");
    h.flags = 0;
    g_assert_cmpint(tgrnet_data(n, 0, &h, pl, FABRIC_TGR_HDR_LEN - 1, &t,
                                &group, why, sizeof(why)), ==,
                    TGR_DATA_MALFORMED);
    g_assert_nonnull(strstr(why, "shorter than"));
    len = payload(FABRIC_TGR_WRITE, 0, TGR_MAX_BODY + 1, pl);
    g_assert_cmpint(tgrnet_data(n, 0, &h, pl, len, &t, &group, why,
                                sizeof(why)), ==, TGR_DATA_MALFORMED);
    g_assert_nonnull(strstr(why, "WRITE body of"));
    len = payload(FABRIC_TGR_MCAST_WRITE, FABRIC_TGR_MCAST_EIDX(2, 0), 8,
                  pl);
    g_assert_cmpint(tgrnet_data(n, 0, &h, pl, len, &t, &group, why,
                                sizeof(why)), ==, TGR_DATA_MALFORMED);
    g_assert_nonnull(strstr(why, "MCAST_WRITE to dst 1"));
    h.dst = FABRIC_NODE_ALL;
    payload(FABRIC_TGR_MCAST_WRITE,
            FABRIC_TGR_MCAST_EIDX(FABRIC_TGR_MAX_GROUPS, 0), 8, pl);
    g_assert_cmpint(tgrnet_data(n, 0, &h, pl, len, &t, &group, why,
                                sizeof(why)), ==, TGR_DATA_MALFORMED);
    g_assert_nonnull(strstr(why, "groups are 0..63"));
    g_assert_cmpuint(tgrnet_node(n, 0)->frames, ==, 3);

    payload(FABRIC_TGR_MCAST_WRITE, FABRIC_TGR_MCAST_EIDX(2, 0), 8, pl);
    g_assert_cmpint(tgrnet_data(n, 0, &h, pl, len, &t, &group, why,
                                sizeof(why)), ==, TGR_DATA_MCAST);
    g_assert_cmpuint(group, ==, 2);
    g_assert_cmpuint(tgrnet_group_writes(n, 2), ==, 1);
    g_assert_cmpuint(tgrnet_node(n, 0)->mcast, ==, 1);
    payload(FABRIC_TGR_WRITE, 0, 8, pl);
    g_assert_cmpint(tgrnet_data(n, 0, &h, pl, len, &t, &group, why,
                                sizeof(why)), ==, TGR_DATA_MALFORMED);
    g_assert_nonnull(strstr(why, "only MCAST_WRITE goes to a group"));
    tgrnet_free(n);
    g_array_free(p.calls, TRUE);
}

static void test_groups(void)
{
    Pauses p;
    TgrNet *n = net_new(4, &p);
    g_autoptr(GString) out = g_string_new(NULL);

    g_assert_false(join(n, 0, 1, true));       /* before HELLO */
    for (unsigned i = 0; i < 4; i++) {
        tgrnet_hello(n, i);
    }
    tgrnet_dump_groups(n, out);
    g_assert_cmpstr(out->str, ==, "no multicast group has members\n");
    g_assert_true(join(n, 3, 1, true));
    g_assert_true(join(n, 0, 1, true));
    g_assert_true(join(n, 0, 1, true));         /* twice is once */
    g_assert_true(join(n, 2, 5, true));
    g_assert_false(join(n, 2, FABRIC_TGR_MAX_GROUPS, true));
    g_assert_cmpuint(tgrnet_group_members(n, 1), ==, 2);
    g_assert_cmpuint(tgrnet_groups_in_use(n), ==, 2);
    g_string_truncate(out, 0);
    tgrnet_dump_groups(n, out);
    g_assert_cmpstr(out->str, ==, "group 1: 0,3\ngroup 5: 2\n");
    g_assert_true(join(n, 3, 1, false));
    g_assert_true(join(n, 3, 1, false));
    g_assert_cmpuint(tgrnet_group_members(n, 1), ==, 1);
    /* a node that goes away leaves every group */
    tgrnet_port_down(n, 2, false);
    g_assert_false(tgrnet_is_member(n, 5, 2));
    g_assert_cmpuint(tgrnet_groups_in_use(n), ==, 1);
    tgrnet_free(n);
    g_array_free(p.calls, TRUE);
}

static void test_back_pressure(void)
{
    Pauses p;
    TgrNet *n = net_new(4, &p);

    /* below the mark nobody waits */
    tgrnet_queued(n, 0, 2, TGR_PAUSE_ABOVE);
    g_assert_cmpuint(p.calls->len, ==, 0);
    /* past it the sender pauses, once however often it sends, and so does
       the congested node itself: its requests make more replies to it */
    tgrnet_queued(n, 0, 2, TGR_PAUSE_ABOVE + 1);
    tgrnet_queued(n, 0, 2, TGR_PAUSE_ABOVE + 2);
    tgrnet_queued(n, 1, 2, TGR_PAUSE_ABOVE + 3);
    /* and a second congested destination holds it too */
    tgrnet_queued(n, 0, 3, TGR_PAUSE_ABOVE + 1);
    g_assert_cmpuint(p.calls->len, ==, 4);
    g_assert_cmpint(call(&p, 0), ==, 1);
    g_assert_cmpint(call(&p, 1), ==, 3);
    g_assert_cmpint(call(&p, 2), ==, 2);
    g_assert_cmpint(call(&p, 3), ==, 4);
    g_assert_cmpuint(tgrnet_node(n, 0)->paused_by, ==, 2);
    g_assert_cmpuint(tgrnet_node(n, 0)->pauses, ==, 1);
    g_assert_cmpuint(tgrnet_node(n, 2)->paused_by, ==, 1);

    /* node 2 drains: not yet below the resume mark, then below it */
    tgrnet_drained(n, 2, TGR_RESUME_BELOW);
    g_assert_cmpuint(p.calls->len, ==, 4);
    tgrnet_drained(n, 2, TGR_RESUME_BELOW - 1);
    g_assert_cmpuint(p.calls->len, ==, 6);
    g_assert_cmpint(call(&p, 4), ==, -3);       /* node 2 reads again */
    g_assert_cmpint(call(&p, 5), ==, -2);       /* and node 1 */
    g_assert_cmpuint(tgrnet_node(n, 0)->paused_by, ==, 1);
    /* node 3 goes away: its senders read again */
    tgrnet_port_down(n, 3, false);
    g_assert_cmpuint(p.calls->len, ==, 8);
    g_assert_cmpint(call(&p, 6), ==, -1);
    g_assert_cmpint(call(&p, 7), ==, -4);

    /* a paused sender that goes away waits for nobody afterwards */
    tgrnet_queued(n, 1, 2, TGR_PAUSE_ABOVE + 1);
    g_assert_cmpint(call(&p, 8), ==, 2);
    g_assert_cmpint(call(&p, 9), ==, 3);
    tgrnet_port_down(n, 1, false);
    g_assert_cmpuint(tgrnet_node(n, 1)->paused_by, ==, 0);
    tgrnet_drained(n, 2, 0);
    g_assert_cmpuint(p.calls->len, ==, 11);     /* node 2 itself */
    g_assert_cmpint(call(&p, 10), ==, -3);
    g_assert_cmpuint(tgrnet_node(n, 1)->pauses, ==, 2);
    tgrnet_free(n);
    g_array_free(p.calls, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/telegraphos-net/stamps-and-hello",
                    test_stamps_and_hello);
    g_test_add_func("/telegraphos-net/data", test_data);
    g_test_add_func("/telegraphos-net/groups", test_groups);
    g_test_add_func("/telegraphos-net/back-pressure", test_back_pressure);
    return g_test_run();
}
