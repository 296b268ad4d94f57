/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest device tests for -device telegraphos (docs/hw/telegraphos.md):
 * the target side (requests from peers into our exports: the REQ FSM,
 * overflow and hold, the export check, writes, reads, atomics, DMA
 * chunks, multicast copies, sequence gaps and peer resets).  The fixture
 * is tgr-fixture.h; the other cases are in test-telegraphos.c.
 */
#include "tgr-fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>

/* ---- plumbing ---------------------------------------------------------- */

/* A copy of guest memory, to prove a refused request touched nothing. */
static uint8_t *mem_snapshot(Card *c, uint64_t addr, size_t len)
{
    g_autofree char *r = qt_cmd(c->qt, "read 0x%" PRIx64 " 0x%zx", addr,
                                len);
    uint8_t *buf = g_malloc(len);

    g_assert_cmpuint(strlen(r), ==, 5 + 2 * len);
    for (size_t i = 0; i < len; i++) {
        char hex[3] = { r[5 + 2 * i], r[6 + 2 * i], 0 };
        buf[i] = strtoul(hex, NULL, 16);
    }
    return buf;
}

/* ---- frames ------------------------------------------------------------ */

static void send_req(Card *c, uint16_t src, uint32_t eidx, uint16_t gen,
                     uint16_t off, uint32_t item)
{
    FabricTgrHdr t = { .op = FABRIC_TGR_REQ, .size = 4, .eidx = eidx,
                       .gen = gen, .off = off };
    uint8_t b[4];

    fabric_put_le32(b, item);
    send_tgr(c, src, &t, b, sizeof(b));
}

static void send_write32(Card *c, uint32_t eidx, uint16_t gen, uint16_t off,
                         uint32_t v)
{
    FabricTgrHdr t = { .op = FABRIC_TGR_WRITE, .size = 4, .eidx = eidx,
                       .gen = gen, .off = off };
    uint8_t b[4];

    fabric_put_le32(b, v);
    send_tgr(c, PEER, &t, b, sizeof(b));
}

/* A NACK must come back for the refused frame, with the reason. */
static void expect_nack(Card *c, uint8_t op, uint8_t reason, uint32_t seq,
                        uint32_t tag)
{
    FabricHdr h;
    FabricTgrHdr t;
    g_autofree uint8_t *p = expect_tgr(c, FABRIC_TGR_NACK, &h, &t);

    g_assert_cmpuint(h.dst, ==, PEER);
    g_assert_cmpuint(h.len, ==, FABRIC_TGR_HDR_LEN + FABRIC_TGR_NACK_LEN);
    g_assert_cmpuint(t.tag, ==, tag);
    g_assert_cmpint(p[FABRIC_TGR_HDR_LEN], ==, op);
    g_assert_cmpint(p[FABRIC_TGR_HDR_LEN + 1], ==, reason);
    g_assert_cmpuint(fabric_get_le32(p + FABRIC_TGR_HDR_LEN + 4), ==, seq);
}

/* ---- target side: the REQ FSM ------------------------------------------ */

static void test_req_fsm_and_wrap(void)
{
    Card *c = card_up();

    put_queue_export(c);
    put_queue(c, QBUF, QWORDS, 3, 3);
    wr(c, QBUF + 4 * TGR_Q_NEXT_WORD, 0x5a5a5a5a);
    for (uint32_t i = 0; i < 4; i++) {
        send_req(c, PEER, QEIDX, QGEN, 0, 0x100 + i);
        g_assert_cmphex(qword(c, 3 + i), ==, 0x100 + i);
        g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | (4 + i));
    }
    g_assert_cmphex(qword(c, 1), ==, QWORDS << 16 | 3);      /* head: owner's */
    g_assert_cmphex(qword(c, 2), ==, 0x5a5a5a5a);          /* next: as it was */
    g_assert_cmpuint(counter(c, TGR_CNT_REQS_IN), ==, 4);

    /* The owner consumed up to 10; the tail wraps from 15 to 3. */
    put_queue(c, QBUF, QWORDS, 14, 10);
    send_req(c, PEER, QEIDX, QGEN, 0, 0xa);
    g_assert_cmphex(qword(c, 14), ==, 0xa);
    g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | 15);
    send_req(c, PEER, QEIDX, QGEN, 0, 0xb);
    g_assert_cmphex(qword(c, 15), ==, 0xb);
    g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | 3);
    send_req(c, 3, QEIDX, QGEN, 0, 0xc);                     /* another node */
    g_assert_cmphex(qword(c, 3), ==, 0xc);
    g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | 4);

    /* An 8 KiB queue (two pages, one export): the tail wraps at 2048. */
    uint64_t q8 = QBUF + 0x2000;
    put_export(c, 14, q8, exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD, 1, 1, 13);
    put_queue(c, q8, 2048, 2046, 10);
    send_req(c, PEER, 14, 1, 0, 0x8a);
    send_req(c, PEER, 14, 1, 0, 0x8b);
    g_assert_cmphex(rd(c, q8 + 4 * 2046), ==, 0x8a);
    g_assert_cmphex(rd(c, q8 + 4 * 2047), ==, 0x8b);
    g_assert_cmphex(rd(c, q8), ==, 2048 << 16 | 3);

    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==, 0);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, 0);
    g_assert_true(ff_quiet(c->ff));                          /* REQ: no reply */
    card_down(c);
}

/*
 * Overflow: the item goes in, the tail does not, the NI stops and
 * interrupts.  Requests are held while replies pass; RESUME drains them.
 */
static void test_req_overflow_stop_resume(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;
    uint8_t rep[FABRIC_TGR_REP_HDR_LEN + 4] = { TGR_ERR_OK };

    route_irq(c);
    wr(c, REG(TGR_REG_IMR), TGR_INT_OVF);
    put_queue_export(c);
    put_export(c, 4, PAGE(4), exp_rights(RW), 1, 1, 0);
    put_queue(c, QBUF, QWORDS, 4, 10);                       /* 6 free */
    for (uint32_t i = 0; i < 5; i++) {
        send_req(c, PEER, QEIDX, QGEN, 0, 0x200 + i);
    }
    g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | 9);
    g_assert_cmpint(c->qt->irq_raised, ==, 0);

    send_req(c, 3, QEIDX, QGEN, 0, 0x2ff);                   /* fills it */
    g_assert_cmphex(qword(c, 9), ==, 0x2ff);                 /* item written */
    g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | 9);      /* tail not */
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==,
                    TGR_STATUS_STOPPED);
    g_assert_cmphex(rd(c, REG(TGR_REG_ISR)) & TGR_INT_OVF, ==, TGR_INT_OVF);
    g_assert_cmpuint(rd(c, REG(TGR_REG_OVF_EIDX)), ==, QEIDX);
    g_assert_cmpuint(rd(c, REG(TGR_REG_OVF_SRC)), ==, 3);
    g_assert_cmpuint(counter(c, TGR_CNT_REQ_OVF), ==, 1);
    g_assert_cmpint(c->qt->irq_raised, ==, 1);

    /* A read of ours is outstanding while the NI is stopped. */
    put_remote_pte(c, 0, RW);
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0xffffffff);
    g_autofree uint8_t *rq = expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t);

    /* Requests are held: memory stays as it was. */
    g_autofree uint8_t *before = mem_snapshot(c, QBUF, 64);
    send_req(c, PEER, QEIDX, QGEN, 0, 0x300);
    send_req(c, PEER, QEIDX, QGEN, 0, 0x301);
    send_req(c, PEER, QEIDX, QGEN, 0, 0x302);
    send_write32(c, 4, 1, 0x10, 0x77777777);
    g_assert_cmpuint(counter(c, TGR_CNT_HELD), ==, 4);
    g_autofree uint8_t *after = mem_snapshot(c, QBUF, 64);
    g_assert_cmpmem(before, 64, after, 64);
    g_assert_cmphex(rd(c, PAGE(4) + 0x10), ==, 0);

    /* ...while a reply passes. */
    FabricTgrHdr rt = { .op = FABRIC_TGR_READ_REP, .size = 4, .tag = t.tag,
                        .eidx = t.eidx, .gen = t.gen, .off = t.off };
    fabric_put_le32(rep + FABRIC_TGR_REP_HDR_LEN, 0x600d600d);
    send_tgr(c, PEER, &rt, rep, sizeof(rep));
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0x600d600d);

    /* Resumed with room for one: the second held REQ overflows again. */
    put_queue(c, QBUF, QWORDS, 3, 5);
    wr(c, REG(TGR_REG_ISR), TGR_INT_OVF);
    wr(c, REG(TGR_REG_CTRL), TGR_CTRL_RESUME);
    clock_step(c, 1000);
    g_assert_true(qt_wait_reg(c->qt, REG(TGR_REG_CTRL), TGR_STATUS_STOPPED,
                              TGR_STATUS_STOPPED));
    g_assert_cmpuint(counter(c, TGR_CNT_REQ_OVF), ==, 2);
    g_assert_cmphex(qword(c, 3), ==, 0x300);
    g_assert_cmphex(qword(c, 4), ==, 0x301);
    g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | 4);
    g_assert_cmphex(rd(c, PAGE(4) + 0x10), ==, 0);         /* still held */
    g_assert_cmpint(c->qt->irq_raised, ==, 2);

    /* The driver copies the buffer out, empties it and resumes. */
    put_queue(c, QBUF, QWORDS, 3, 3);
    wr(c, REG(TGR_REG_ISR), TGR_INT_OVF);
    wr(c, REG(TGR_REG_CTRL), TGR_CTRL_RESUME);
    clock_step(c, 1000);
    g_assert_true(qt_wait_reg(c->qt, QBUF, ~0u, QWORDS << 16 | 4));
    g_assert_cmphex(qword(c, 3), ==, 0x302);
    g_assert_true(qt_wait_reg(c->qt, PAGE(4) + 0x10, ~0u, 0x77777777));
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==, 0);
    g_assert_cmphex(rd(c, REG(TGR_REG_ISR)) & TGR_INT_OVF, ==, 0);
    g_assert_cmpuint(counter(c, TGR_CNT_REQ_OVF), ==, 2);
    g_assert_cmpuint(counter(c, TGR_CNT_HELD), ==, 4);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, 0);
    card_down(c);
}

/*
 * With rx-hold-frames held, the card stops reading its socket (fabricd
 * then stops the senders); RESUME takes everything, in order.
 */
static void test_hold_back_pressure(void)
{
    Card *c = card_up_with(",rx-hold-frames=16");
    const uint32_t big = 13, n = 300;
    uint64_t qbig = QBUF + 0x8000;                          /* 2 KiB */

    put_queue_export(c);
    put_queue(c, QBUF, QWORDS, 3, 4);                       /* full at once */
    put_export(c, big, qbig, exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD, 1, 1, 11);
    put_queue(c, qbig, 512, 3, 3);
    send_req(c, PEER, QEIDX, QGEN, 0, 0xf0);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==,
                    TGR_STATUS_STOPPED);

    /* A read request is held too: no reply while stopped. */
    put_export(c, 4, PAGE(4), exp_rights(RW), 1, 1, 0);
    wr(c, PAGE(4) + 8, 0xabad1dea);
    FabricTgrHdr rq = { .op = FABRIC_TGR_READ_REQ, .size = 4, .eidx = 4,
                        .gen = 1, .off = 8, .tag = 0x99 };
    uint8_t len[FABRIC_TGR_READ_REQ_LEN];
    fabric_put_le16(len, 4);
    send_tgr(c, PEER, &rq, len, sizeof(len));
    g_assert_true(ff_quiet(c->ff));

    /* One write: an AF_UNIX socket takes few small ones. */
    const uint32_t flen = FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN + 4;
    g_autofree uint8_t *burst = g_malloc(n * flen);
    for (uint32_t i = 0; i < n; i++) {
        FabricHdr h = { .kind = K, .type = FABRIC_TYPE_DATA, .src = PEER,
                        .dst = NODE, .len = FABRIC_TGR_HDR_LEN + 4 };
        FabricTgrHdr t = { .op = FABRIC_TGR_REQ, .size = 4, .eidx = big,
                           .gen = 1, .epoch = EPOCH, .seq = c->seq[PEER]++ };
        uint8_t *p = burst + i * flen;

        fabric_hdr_encode(&h, p);
        fabric_tgr_hdr_encode(&t, p + FABRIC_HDR_LEN);
        fabric_put_le32(p + FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN, 0x1000 + i);
    }
    ff_send_raw(c->ff, burst, n * flen);
    for (int i = 0; i < 500 && counter(c, TGR_CNT_HELD) < 16; i++) {
        g_usleep(10 * 1000);
    }
    g_usleep(200 * 1000);
    uint32_t held = counter(c, TGR_CNT_HELD);
    g_test_message("held %u of %u before RESUME", held, n);
    g_assert_cmpuint(held, >=, 16);
    g_assert_cmpuint(held, <, n);                          /* reading stopped */
    g_assert_cmpuint(counter(c, TGR_CNT_RX_FRAMES), ==, 1 + held);
    g_assert_cmphex(rd(c, qbig), ==, 512 << 16 | 3);

    put_queue(c, QBUF, QWORDS, 3, 3);
    wr(c, REG(TGR_REG_CTRL), TGR_CTRL_RESUME);
    clock_step(c, 1000);
    FabricHdr h;
    FabricTgrHdr rt;
    g_autofree uint8_t *rep = expect_tgr(c, FABRIC_TGR_READ_REP, &h, &rt);
    g_assert_cmpuint(rt.tag, ==, 0x99);
    g_assert_cmphex(fabric_get_le32(rep + FABRIC_TGR_HDR_LEN + 2), ==,
                    0xabad1dea);
    wait_counter(c, TGR_CNT_RX_FRAMES, 2 + n);
    g_assert_true(qt_wait_reg(c->qt, qbig, ~0u, 512 << 16 | (3 + n)));
    for (uint32_t i = 0; i < n; i++) {
        g_assert_cmphex(rd(c, qbig + 4 * (3 + i)), ==, 0x1000 + i);
    }
    g_assert_cmpuint(counter(c, TGR_CNT_REQS_IN), ==, 1 + n);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==, 0);
    card_down(c);
}

/* ---- a node that floods READ_REQs and never reads ----------------------- */

/*
 * Write what the socket takes of buf[*done..len), without blocking;
 * TRUE when it took something.
 */
static gboolean push_some(Card *c, const uint8_t *buf, size_t len,
                          size_t *done)
{
    gboolean moved = FALSE;

    while (*done < len) {
        ssize_t n = write(c->ff->fd, buf + *done, MIN(len - *done, 16384));

        if (n <= 0) {
            g_assert_true(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
            break;
        }
        *done += n;
        moved = TRUE;
    }
    return moved;
}

/*
 * Issue 13, finding 2: replies go out through the link's tx queue.  A
 * node that floods READ_REQs and never reads its replies made the
 * responder's QEMU keep every reply.  Now the card holds the requests
 * once the tx queue is at tx-queue-kb, and stops reading its socket when
 * rx-hold-frames (or TGR_HOLD_MAX_BYTES) are held: the flooder's socket
 * fills, QEMU's memory stays bounded, and once the replies are read
 * every request is answered, in order.
 */
static void test_read_flood_back_pressure(void)
{
    Card *c = card_up();
    const uint32_t n = 40000, len = 4096;
    const uint32_t flen = FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN +
                          FABRIC_TGR_READ_REQ_LEN;
    g_autofree uint8_t *burst = g_malloc((size_t)n * flen);
    size_t done = 0, total = (size_t)n * flen;
    uint32_t got = 0, rx, held;
    uint64_t rss0, rss1;

    put_export(c, 4, PAGE(4), exp_rights(TGR_R_READ), 1, 1, 0);
    for (uint32_t i = 0; i < len; i += 4) {
        wr(c, PAGE(4) + i, 0x5a000000 | i);
    }
    for (uint32_t i = 0; i < n; i++) {
        FabricHdr h = { .kind = K, .type = FABRIC_TYPE_DATA, .src = PEER,
                        .dst = NODE, .len = flen - FABRIC_HDR_LEN };
        FabricTgrHdr t = { .op = FABRIC_TGR_READ_REQ, .eidx = 4, .gen = 1,
                           .epoch = EPOCH, .seq = c->seq[PEER]++, .tag = i };
        uint8_t *p = burst + (size_t)i * flen;

        fabric_hdr_encode(&h, p);
        fabric_tgr_hdr_encode(&t, p + FABRIC_HDR_LEN);
        fabric_put_le16(p + FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN, len);
    }
    rss0 = qt_rss_kb(c->qt);
    g_assert_cmpint(fcntl(c->ff->fd, F_SETFL, O_NONBLOCK), ==, 0);

    /* Flood, never read: push until nothing moves for a second. */
    for (int idle = 0; done < total && idle < 10;) {
        if (push_some(c, burst, total, &done)) {
            idle = 0;
        } else {
            clock_step(c, 1000);
            g_usleep(100 * 1000);
            idle++;
        }
    }
    rx = counter(c, TGR_CNT_RX_FRAMES);
    held = counter(c, TGR_CNT_HELD);
    rss1 = qt_rss_kb(c->qt);
    g_test_message("the socket took %zu of %u requests; the card read %u, "
                   "holds %u; VmRSS %" PRIu64 " -> %" PRIu64 " KiB",
                   done / flen, n, rx, held, rss0, rss1);
    g_assert_cmpuint(done, <, total);                  /* the socket filled */
    g_assert_cmpuint(held, >, 0);
    g_usleep(300 * 1000);
    g_assert_cmpuint(counter(c, TGR_CNT_RX_FRAMES), ==, rx);    /* stopped */
    /* tx-queue-kb (256) + TGR_HOLD_MAX_BYTES (4 MiB) + slack */
    g_assert_cmpuint(rss1, <, rss0 + 16 * 1024);

    /* Now read: every request answered, in order, with the page. */
    g_autofree uint8_t *want = g_malloc(len);
    for (uint32_t i = 0; i < len; i += 4) {
        fabric_put_le32(want + i, 0x5a000000 | i);
    }
    while (got < n) {
        struct pollfd pf = { .fd = c->ff->fd, .events = POLLIN };
        FabricHdr h;
        FabricTgrHdr t;

        push_some(c, burst, total, &done);
        if (poll(&pf, 1, 20) != 1) {
            clock_step(c, 1000);        /* the drain runs from a timer */
            continue;
        }
        g_autofree uint8_t *p = expect_tgr(c, FABRIC_TGR_READ_REP, &h, &t);
        g_assert_cmpuint(t.tag, ==, got);
        g_assert_cmpuint(h.len, ==, FABRIC_TGR_HDR_LEN +
                                    FABRIC_TGR_REP_HDR_LEN + len);
        g_assert_cmpint(p[FABRIC_TGR_HDR_LEN], ==, TGR_ERR_OK);
        g_assert_cmpmem(p + FABRIC_TGR_HDR_LEN + FABRIC_TGR_REP_HDR_LEN, len,
                        want, len);
        got++;
    }
    g_assert_cmpuint(done, ==, total);
    g_assert_cmpuint(counter(c, TGR_CNT_RX_FRAMES), ==, n);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, 0);
    g_test_message("VmRSS at the end %" PRIu64 " KiB", qt_rss_kb(c->qt));
    card_down(c);
}

/*
 * While the NI is stopped, held requests are bounded in bytes too
 * (TGR_HOLD_MAX_BYTES, 4 MiB), not only by rx-hold-frames: 20,000 DMA
 * chunks of 4 KiB with rx-hold-frames=1000000 would otherwise be 80 MiB
 * of QEMU's heap.  After RESUME every chunk is applied, in order.
 */
static void test_hold_bytes_bounded(void)
{
    Card *c = card_up_with(",rx-hold-frames=1000000");
    const uint32_t n = 20000, dlen = 4096;
    const uint32_t flen = FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN + dlen;
    g_autofree uint8_t *burst = g_malloc((size_t)n * flen);
    size_t done = 0, total = (size_t)n * flen;
    uint64_t rss0, rss1;
    uint32_t held;

    put_queue_export(c);
    put_queue(c, QBUF, QWORDS, 3, 4);                       /* full at once */
    send_req(c, PEER, QEIDX, QGEN, 0, 0xf0);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==,
                    TGR_STATUS_STOPPED);
    put_export(c, 4, PAGE(4), exp_rights(RW), 1, 1, 0);
    for (uint32_t i = 0; i < n; i++) {
        FabricHdr h = { .kind = K, .type = FABRIC_TYPE_DATA, .src = PEER,
                        .dst = NODE, .len = flen - FABRIC_HDR_LEN };
        FabricTgrHdr t = { .op = FABRIC_TGR_WRITE, .size = 0, .eidx = 4,
                           .gen = 1, .epoch = EPOCH,
                           .seq = c->seq[PEER]++ };
        uint8_t *p = burst + (size_t)i * flen;

        fabric_hdr_encode(&h, p);
        fabric_tgr_hdr_encode(&t, p + FABRIC_HDR_LEN);
        memset(p + FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN, 0, dlen);
        fabric_put_le32(p + FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN, i);
    }
    rss0 = qt_rss_kb(c->qt);
    g_assert_cmpint(fcntl(c->ff->fd, F_SETFL, O_NONBLOCK), ==, 0);
    for (int idle = 0; done < total && idle < 10;) {
        if (push_some(c, burst, total, &done)) {
            idle = 0;
        } else {
            g_usleep(100 * 1000);
            idle++;
        }
    }
    held = counter(c, TGR_CNT_HELD);
    rss1 = qt_rss_kb(c->qt);
    g_test_message("the socket took %zu of %u chunks; the card holds %u; "
                   "VmRSS %" PRIu64 " -> %" PRIu64 " KiB", done / flen, n,
                   held, rss0, rss1);
    g_assert_cmpuint(done, <, total);
    g_assert_cmpuint(held, <=, 4 * 1024 * 1024 / dlen + 4);
    g_assert_cmpuint(rss1, <, rss0 + 16 * 1024);

    /* RESUME: every chunk lands, the last one last. */
    put_queue(c, QBUF, QWORDS, 3, 3);
    wr(c, REG(TGR_REG_CTRL), TGR_CTRL_RESUME);
    while (counter(c, TGR_CNT_RX_FRAMES) < 1 + n) {
        push_some(c, burst, total, &done);
        clock_step(c, 1000);
        g_usleep(1000);
    }
    clock_step(c, 1000);
    g_assert_true(qt_wait_reg(c->qt, PAGE(4), ~0u, n - 1));
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, 0);
    card_down(c);
}

/*
 * Fill the card's tx queue: READ_REQs of 4 KiB whose replies the test
 * does not read, until the card holds requests.  Returns the requests
 * sent; the socket is left non-blocking.
 */
static uint32_t fill_tx_queue(Card *c)
{
    const uint32_t flen = FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN +
                          FABRIC_TGR_READ_REQ_LEN;
    uint8_t f[FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN + FABRIC_TGR_READ_REQ_LEN];
    uint32_t n = 0;

    put_export(c, 4, PAGE(4), exp_rights(TGR_R_READ), 1, 1, 0);
    g_assert_cmpint(fcntl(c->ff->fd, F_SETFL, O_NONBLOCK), ==, 0);
    while (counter(c, TGR_CNT_HELD) == 0) {
        FabricHdr h = { .kind = K, .type = FABRIC_TYPE_DATA, .src = PEER,
                        .dst = NODE, .len = flen - FABRIC_HDR_LEN };
        FabricTgrHdr t = { .op = FABRIC_TGR_READ_REQ, .eidx = 4, .gen = 1,
                           .epoch = EPOCH, .seq = c->seq[PEER]++, .tag = n };
        size_t done = 0;

        fabric_hdr_encode(&h, f);
        fabric_tgr_hdr_encode(&t, f + FABRIC_HDR_LEN);
        fabric_put_le16(f + FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN, 4096);
        while (done < flen) {
            push_some(c, f, flen, &done);
        }
        n++;
        g_assert_cmpuint(n, <, 10000);
    }
    return n;
}

/*
 * Membership changes are not frames queued per register write: a guest
 * (any local user, through MCAST_JOIN and MCAST_LEAVE) that joins and
 * leaves in a loop while the tx queue is full leaves one pending change
 * per group, sent when the queue has room.
 */
static void test_group_churn_coalesced(void)
{
    Card *c = card_up();
    uint32_t reqs = fill_tx_queue(c), reps = 0, joins = 0, leaves = 0;
    const int flips = 5001;

    for (int i = 0; i < flips; i++) {
        wr(c, REG(TGR_REG_GROUP_PAGES + 4 * 5), 1);
        wr(c, REG(TGR_REG_GROUP_EIDX + 4 * 5), i & 1 ? TGR_GROUP_NONE : 6);
    }
    /* Read everything: the replies in order, then what the groups say. */
    while (reps < reqs) {
        struct pollfd pf = { .fd = c->ff->fd, .events = POLLIN };
        FabricHdr h;
        uint8_t *p;

        if (poll(&pf, 1, 20) != 1) {
            clock_step(c, 1000);
            continue;
        }
        g_assert_true(ff_recv(c->ff, &h, &p));
        if (h.type == FABRIC_TYPE_CONTROL) {
            joins += p[0] == FABRIC_CTL_TGR_JOIN;
            leaves += p[0] == FABRIC_CTL_TGR_LEAVE;
        } else {
            reps++;
        }
        g_free(p);
    }
    for (int i = 0; i < 20 && !ff_quiet(c->ff); i++) {
        FabricHdr h;
        uint8_t *p;

        clock_step(c, 1000);
        while (!ff_quiet(c->ff)) {
            g_assert_true(ff_recv(c->ff, &h, &p));
            g_assert_cmpint(h.type, ==, FABRIC_TYPE_CONTROL);
            joins += p[0] == FABRIC_CTL_TGR_JOIN;
            leaves += p[0] == FABRIC_CTL_TGR_LEAVE;
            g_free(p);
        }
    }
    clock_step(c, 1000);
    while (!ff_quiet(c->ff)) {
        FabricHdr h;
        uint8_t *p;

        g_assert_true(ff_recv(c->ff, &h, &p));
        joins += p[0] == FABRIC_CTL_TGR_JOIN;
        leaves += p[0] == FABRIC_CTL_TGR_LEAVE;
        g_free(p);
    }
    g_test_message("%d flips while the tx queue was full: %u JOIN, %u LEAVE "
                   "sent", flips, joins, leaves);
    /* The last write joined: fabricd ends up told "member". */
    g_assert_cmpuint(joins, ==, leaves + 1);
    g_assert_cmpuint(joins + leaves, <=, 3);
    card_down(c);
}

/* ---- target side: the export check -------------------------------------- */

/*
 * Send a request that must be refused: a NACK with the reason comes back,
 * VIOL_IN is counted and reported, and guest memory is byte for byte the
 * same (the data pages and the queue buffers).
 */
static void expect_refused(Card *c, FabricTgrHdr *t, const uint8_t *body,
                           uint32_t blen, uint8_t reason, uint8_t owner)
{
    uint32_t viol = counter(c, TGR_CNT_VIOL_IN);
    g_autofree uint8_t *pages = mem_snapshot(c, PAGE(0), 16 * 4096);
    g_autofree uint8_t *queues = mem_snapshot(c, QBUF, 0x5000);

    send_tgr(c, PEER, t, body, blen);
    expect_nack(c, t->op, reason, c->seq[PEER] - 1, t->tag);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, viol + 1);
    Event e = expect_event(c, TGR_EV_VIOL_IN, reason);
    g_assert_cmpuint(e.node, ==, PEER);
    g_assert_cmpuint(e.page, ==, t->eidx);
    g_assert_cmpuint(e.off, ==, t->off);
    g_assert_cmpuint(e.op, ==, t->op);
    g_assert_cmpuint(e.ctx, ==, owner);

    g_autofree uint8_t *pages2 = mem_snapshot(c, PAGE(0), 16 * 4096);
    g_autofree uint8_t *queues2 = mem_snapshot(c, QBUF, 0x5000);
    g_assert_cmpmem(pages, 16 * 4096, pages2, 16 * 4096);
    g_assert_cmpmem(queues, 0x5000, queues2, 0x5000);
}

static void test_export_check(void)
{
    Card *c = card_up();
    const uint32_t ro = 6, wo = 8, plain = 10, unaligned = 11, badsize = 12;
    const struct {
        const char *what;
        uint8_t op;
        uint32_t eidx;
        uint16_t gen, off;
        uint8_t reason;
    } cases[] = {
        { "unexported", FABRIC_TGR_WRITE, 7, 1, 0, TGR_ERR_UNEXPORTED },
        { "eidx >= EXP_COUNT", FABRIC_TGR_WRITE, EXP_N, 1, 0,
          TGR_ERR_RANGE },
        { "stale generation", FABRIC_TGR_WRITE, 4, 2, 0, TGR_ERR_STALE },
        { "write to read-only", FABRIC_TGR_WRITE, ro, 1, 0, TGR_ERR_RIGHTS },
        { "beyond the page", FABRIC_TGR_WRITE, 4, 1, 4094, TGR_ERR_RANGE },
        { "read of write-only", FABRIC_TGR_READ_REQ, wo, 1, 0,
          TGR_ERR_RIGHTS },
        { "atomic without right", FABRIC_TGR_ATOMIC_REQ, 4, 1, 0,
          TGR_ERR_RIGHTS },
        { "REQ without the right", FABRIC_TGR_REQ, 4, 1, 0, TGR_ERR_RIGHTS },
        { "REQ into a non-queue", FABRIC_TGR_REQ, plain, 1, 0,
          TGR_ERR_BADQUEUE },
        { "REQ not at offset 0", FABRIC_TGR_REQ, QEIDX, QGEN, 4,
          TGR_ERR_BADQUEUE },
        { "unaligned queue", FABRIC_TGR_REQ, unaligned, 1, 0,
          TGR_ERR_BADQUEUE },
        { "wrong queue size", FABRIC_TGR_REQ, badsize, 1, 0,
          TGR_ERR_BADSIZE },
    };

    put_export(c, 4, PAGE(4), exp_rights(RW), 1, 1, 0);
    put_export(c, ro, PAGE(ro), exp_rights(TGR_R_READ), 1, 1, 0);
    put_export(c, wo, PAGE(wo), exp_rights(TGR_R_WRITE), 1, 1, 0);
    put_export(c, plain, PAGE(plain), exp_rights(TGR_R_REQ), 1, 1, 0);
    put_queue_export(c);
    put_queue(c, QBUF, QWORDS, 3, 3);
    /* 8 KiB queue on an odd page; a 64-byte queue whose words say 128. */
    put_export(c, unaligned, QBUF + 0x1000,
               exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD, 1, 1, 13);
    put_queue(c, QBUF + 0x1000, 2048, 3, 3);
    put_export(c, badsize, QBUF + 0x4000,
               exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD, 1, 1, 6);
    put_queue(c, QBUF + 0x4000, 32, 3, 3);
    for (int i = 0; i < 16; i++) {
        wr(c, PAGE(4) + 4 * i, 0x44440000 + i);
        wr(c, PAGE(ro) + 4 * i, 0x66660000 + i);
    }

    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        uint8_t body[FABRIC_TGR_ATOMIC_REQ_LEN] = { 0 };
        uint32_t blen = 4;
        FabricTgrHdr t = { .op = cases[i].op, .size = 4,
                           .eidx = cases[i].eidx, .gen = cases[i].gen,
                           .off = cases[i].off };

        g_test_message("case: %s", cases[i].what);
        fabric_put_le32(body, 0xbad0bad0);
        if (t.op == FABRIC_TGR_READ_REQ) {
            t.tag = 0x1000 + i;
            fabric_put_le16(body, 4);
            blen = FABRIC_TGR_READ_REQ_LEN;
        } else if (t.op == FABRIC_TGR_ATOMIC_REQ) {
            t.tag = 0x1000 + i;
            body[0] = FABRIC_TGR_AOP_FADD;
            fabric_put_le64(body + 8, 1);
            blen = FABRIC_TGR_ATOMIC_REQ_LEN;
        }
        /* The owner is known when there is an entry to read. */
        expect_refused(c, &t, body, blen, cases[i].reason,
                       cases[i].eidx == 7 || cases[i].eidx >= EXP_N ? 0 : 1);
    }

    /* Frames that do not describe a valid access: refused unread (owner 0). */
    uint8_t body[FABRIC_TGR_ATOMIC_REQ_LEN] = { 0 };
    FabricTgrHdr t = { .op = FABRIC_TGR_WRITE, .size = 2, .eidx = 4,
                       .gen = 1 };
    g_test_message("case: WRITE size 2 with 4 data bytes");
    expect_refused(c, &t, body, 4, TGR_ERR_BADSIZE, 0);
    g_test_message("case: READ_REQ of 0 bytes");
    t = (FabricTgrHdr){ .op = FABRIC_TGR_READ_REQ, .size = 4, .eidx = 4,
                        .gen = 1, .tag = 0x77 };
    expect_refused(c, &t, body, FABRIC_TGR_READ_REQ_LEN, TGR_ERR_BADSIZE, 0);
    g_test_message("case: unaligned atomic");
    put_export(c, 5, PAGE(5), exp_rights(TGR_R_ATOMIC), 1, 1, 0);
    t = (FabricTgrHdr){ .op = FABRIC_TGR_ATOMIC_REQ, .size = 4, .eidx = 5,
                        .gen = 1, .off = 2, .tag = 0x78 };
    body[0] = FABRIC_TGR_AOP_FADD;
    expect_refused(c, &t, body, sizeof(body), TGR_ERR_BADSIZE, 0);
    g_test_message("case: unknown atomic op");
    t.off = 0;
    body[0] = 9;
    expect_refused(c, &t, body, sizeof(body), TGR_ERR_BADOP, 0);
    g_test_message("case: queue tail outside 3..size-1");
    put_export(c, 14, QBUF + 0x2000, exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD,
               1, 1, 6);
    put_queue(c, QBUF + 0x2000, QWORDS, 1, 3);
    t = (FabricTgrHdr){ .op = FABRIC_TGR_REQ, .size = 4, .eidx = 14,
                        .gen = 1 };
    expect_refused(c, &t, body, 4, TGR_ERR_BADQUEUE, 1);
    g_test_message("case: queue above 64 KiB");
    put_export(c, 14, QBUF, exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD, 1, 1, 17);
    expect_refused(c, &t, body, 4, TGR_ERR_BADSIZE, 1);
    g_test_message("case: export table not in memory");
    wr(c, REG(TGR_REG_EXP_BASE_LO), 0x7ff00000);
    t = (FabricTgrHdr){ .op = FABRIC_TGR_WRITE, .size = 4, .eidx = 4,
                        .gen = 1 };
    expect_refused(c, &t, body, 4, TGR_ERR_BADADDR, 0);
    wr(c, REG(TGR_REG_EXP_BASE_LO), (uint32_t)EXP_TABLE);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==, 0);

    /* Fixed up, the same requests go through. */
    send_write32(c, 4, 1, 0x10, 0x12345678);
    g_assert_cmphex(rd(c, PAGE(4) + 0x10), ==, 0x12345678);
    send_req(c, PEER, QEIDX, QGEN, 0, 0xfeed);
    g_assert_cmphex(qword(c, 3), ==, 0xfeed);
    g_assert_true(ff_quiet(c->ff));
    card_down(c);
}

/* ---- target side: reads and atomics ------------------------------------- */

static uint64_t target_atomic(Card *c, uint8_t aop, uint8_t size,
                              uint16_t off, uint64_t a, uint64_t b)
{
    uint8_t body[FABRIC_TGR_ATOMIC_REQ_LEN] = { aop };
    FabricTgrHdr t = { .op = FABRIC_TGR_ATOMIC_REQ, .size = size, .eidx = 4,
                       .gen = 1, .off = off, .tag = 0x5000 + off };
    FabricHdr h;
    FabricTgrHdr rt;

    fabric_put_le64(body + 8, a);
    fabric_put_le64(body + 16, b);
    send_tgr(c, PEER, &t, body, sizeof(body));
    g_autofree uint8_t *p = expect_tgr(c, FABRIC_TGR_ATOMIC_REP, &h, &rt);
    g_assert_cmpuint(h.dst, ==, PEER);
    g_assert_cmpuint(rt.tag, ==, t.tag);
    g_assert_cmpuint(h.len, ==, FABRIC_TGR_HDR_LEN +
                                FABRIC_TGR_ATOMIC_REP_LEN);
    g_assert_cmpint(p[FABRIC_TGR_HDR_LEN], ==, TGR_ERR_OK);
    return fabric_get_le64(p + FABRIC_TGR_HDR_LEN + 8);
}

static void test_target_read_write_atomics(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t = { .op = FABRIC_TGR_READ_REQ, .size = 8, .eidx = 4,
                       .gen = 1, .off = 0x18, .tag = 0x4242 };
    FabricTgrHdr rt;
    uint8_t len[2];

    put_export(c, 4, PAGE(4), exp_rights(TGR_R_ALL), 1, 1, 0);
    send_write32(c, 4, 1, 0x10, 0xa1b2c3d4);
    g_assert_cmphex(rd(c, PAGE(4) + 0x10), ==, 0xa1b2c3d4);

    /* A DMA chunk: size 0, the body's length, up to the page's end. */
    g_autofree uint8_t *chunk = g_malloc(TGR_PAGE_SIZE);
    for (int i = 0; i < TGR_PAGE_SIZE; i++) {
        chunk[i] = i * 7 + 1;
    }
    FabricTgrHdr wt = { .op = FABRIC_TGR_WRITE, .size = 0, .eidx = 5,
                        .gen = 1 };
    put_export(c, 5, PAGE(5), exp_rights(TGR_R_WRITE), 1, 1, 0);
    send_tgr(c, PEER, &wt, chunk, TGR_PAGE_SIZE);
    g_autofree uint8_t *got = mem_snapshot(c, PAGE(5), TGR_PAGE_SIZE);
    g_assert_cmpmem(got, TGR_PAGE_SIZE, chunk, TGR_PAGE_SIZE);
    wt.off = 8;                                             /* 8 too many */
    send_tgr(c, PEER, &wt, chunk, TGR_PAGE_SIZE);
    expect_nack(c, FABRIC_TGR_WRITE, TGR_ERR_RANGE, c->seq[PEER] - 1,
                wt.tag);
    g_assert_cmphex(rd(c, PAGE(6)), ==, 0);

    wrq(c, PAGE(4) + 0x18, 0x1122334455667788ull);
    fabric_put_le16(len, 8);
    send_tgr(c, PEER, &t, len, sizeof(len));
    g_autofree uint8_t *p = expect_tgr(c, FABRIC_TGR_READ_REP, &h, &rt);
    g_assert_cmpuint(rt.tag, ==, 0x4242);
    g_assert_cmpuint(h.len, ==,
                     FABRIC_TGR_HDR_LEN + FABRIC_TGR_REP_HDR_LEN + 8);
    g_assert_cmpint(p[FABRIC_TGR_HDR_LEN], ==, TGR_ERR_OK);
    g_assert_cmphex(fabric_get_le64(p + FABRIC_TGR_HDR_LEN + 2), ==,
                    0x1122334455667788ull);

    wr(c, PAGE(4) + 0x40, 41);
    g_assert_cmpuint(target_atomic(c, FABRIC_TGR_AOP_FADD, 4, 0x40, 1, 0),
                     ==, 41);
    g_assert_cmpuint(rd(c, PAGE(4) + 0x40), ==, 42);
    wrq(c, PAGE(4) + 0x48, 0xffffffffull);
    g_assert_cmphex(target_atomic(c, FABRIC_TGR_AOP_FADD, 8, 0x48, 1, 0),
                    ==, 0xffffffffull);
    g_assert_cmphex(rdq(c, PAGE(4) + 0x48), ==, 0x100000000ull);
    g_assert_cmpuint(target_atomic(c, FABRIC_TGR_AOP_SWAP, 4, 0x40, 7, 0),
                     ==, 42);
    g_assert_cmpuint(rd(c, PAGE(4) + 0x40), ==, 7);
    /* CAS: a = expected, b = new; a miss leaves memory alone. */
    g_assert_cmpuint(target_atomic(c, FABRIC_TGR_AOP_CAS, 4, 0x40, 8, 9),
                     ==, 7);
    g_assert_cmpuint(rd(c, PAGE(4) + 0x40), ==, 7);
    g_assert_cmpuint(target_atomic(c, FABRIC_TGR_AOP_CAS, 4, 0x40, 7, 9),
                     ==, 7);
    g_assert_cmpuint(rd(c, PAGE(4) + 0x40), ==, 9);
    g_assert_cmpuint(rd(c, PAGE(4) + 0x44), ==, 0);
    card_down(c);
}

/* ---- multicast ----------------------------------------------------------- */

static void test_multicast(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;
    uint8_t *p;
    const uint32_t group = 3, leidx = 5;

    put_export(c, leidx, PAGE(leidx), exp_rights(RW) | TGR_EXP_MCAST, 1, 1,
               0);
    wr(c, REG(TGR_REG_GROUP_PAGES + 4 * group), 1);
    wr(c, REG(TGR_REG_GROUP_EIDX + 4 * group), leidx);
    p = expect_control(c, FABRIC_CTL_TGR_JOIN, &h);
    g_assert_cmpuint(h.len, ==, FABRIC_TGR_GROUP_LEN);
    g_assert_cmpuint(fabric_get_le16(p + 1), ==, group);
    g_free(p);

    put_pte(c, 4, TGR_PTE_MODE_MCAST, RW, 1, group, 0, leidx << 16, 0);
    wr(c, WIN(4, 0x8), 0xabcd);
    p = expect_tgr(c, FABRIC_TGR_MCAST_WRITE, &h, &t);
    g_assert_cmpuint(h.dst, ==, FABRIC_NODE_ALL);
    g_assert_cmphex(t.eidx, ==, FABRIC_TGR_MCAST_EIDX(group, 0));
    g_assert_cmpuint(t.off, ==, 8);
    g_assert_cmpuint(t.size, ==, 4);
    g_assert_cmphex(fabric_get_le32(p + FABRIC_TGR_HDR_LEN), ==, 0xabcd);
    g_assert_cmpuint(counter(c, TGR_CNT_MCAST), ==, 1);
    /* The writer's copy changes when fabricd's echo comes back. */
    g_assert_cmphex(rd(c, PAGE(leidx) + 8), ==, 0);
    uint32_t rx = counter(c, TGR_CNT_RX_FRAMES);
    ff_send(c->ff, K, FABRIC_TYPE_DATA, NODE, FABRIC_NODE_ALL, p, h.len);
    wait_counter(c, TGR_CNT_RX_FRAMES, rx + 1);
    g_free(p);
    g_assert_cmphex(rd(c, PAGE(leidx) + 8), ==, 0xabcd);

    /* Another member's write; loads read the local copy at once. */
    FabricTgrHdr mt = { .op = FABRIC_TGR_MCAST_WRITE, .size = 4,
                        .eidx = FABRIC_TGR_MCAST_EIDX(group, 0),
                        .off = 0x10 };
    uint8_t data[4];
    fabric_put_le32(data, 0x5eed);
    send_tgr(c, PEER, &mt, data, sizeof(data));
    g_assert_cmphex(rd(c, PAGE(leidx) + 0x10), ==, 0x5eed);
    g_assert_cmphex(rd(c, WIN(4, 0x10)), ==, 0x5eed);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_RD_PENDING, ==, 0);
    g_assert_true(ff_quiet(c->ff));

    /* Unicast and multicast from one peer are numbered apart. */
    put_export(c, 4, PAGE(4), exp_rights(RW), 1, 1, 0);
    send_write32(c, 4, 1, 0, 0x4444);
    mt.off = 0x14;
    send_tgr(c, PEER, &mt, data, sizeof(data));
    g_assert_cmphex(rd(c, PAGE(leidx) + 0x14), ==, 0x5eed);
    g_assert_cmpuint(counter(c, TGR_CNT_SEQ_GAPS), ==, 0);

    /* A group bound to a page that is not a multicast copy: refused. */
    wr(c, REG(TGR_REG_GROUP_PAGES + 4 * 7), 1);
    wr(c, REG(TGR_REG_GROUP_EIDX + 4 * 7), 4);
    g_free(expect_control(c, FABRIC_CTL_TGR_JOIN, &h));
    FabricTgrHdr bad = { .op = FABRIC_TGR_MCAST_WRITE, .size = 4,
                         .eidx = FABRIC_TGR_MCAST_EIDX(7, 0), .off = 0 };
    send_tgr(c, PEER, &bad, data, sizeof(data));
    g_assert_cmphex(rd(c, PAGE(4)), ==, 0x4444);
    expect_event(c, TGR_EV_VIOL_IN, TGR_ERR_RIGHTS);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, 1);
    g_assert_true(ff_quiet(c->ff));                         /* no NACK */

    /* Leaving: a LEAVE, and later copies are not applied. */
    wr(c, REG(TGR_REG_GROUP_EIDX + 4 * group), TGR_GROUP_NONE);
    g_free(expect_control(c, FABRIC_CTL_TGR_LEAVE, &h));
    fabric_put_le32(data, 0xdead);
    mt.off = 0x10;
    send_tgr(c, PEER, &mt, data, sizeof(data));
    g_assert_cmphex(rd(c, PAGE(leidx) + 0x10), ==, 0x5eed);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, 1);
    card_down(c);
}

/*
 * Two groups whose copies are neighbours in the export table: a copy for a
 * page beyond its group's size is refused (RANGE), it does not land in the
 * next group's copy (issue 13, finding 5).
 */
static void test_multicast_group_bounds(void)
{
    Card *c = card_up();
    FabricHdr h;
    const uint32_t ga = 3, gb = 4, ea = 5, eb = 7;          /* A: 2 pages */
    uint8_t data[4];

    put_export(c, ea, PAGE(ea), exp_rights(RW) | TGR_EXP_MCAST, 1, 1, 0);
    put_export(c, ea + 1, PAGE(ea + 1), exp_rights(RW) | TGR_EXP_MCAST, 1, 1,
               0);
    put_export(c, eb, PAGE(eb), exp_rights(RW) | TGR_EXP_MCAST, 1, 2, 0);
    wr(c, REG(TGR_REG_GROUP_PAGES + 4 * ga), 2);
    wr(c, REG(TGR_REG_GROUP_EIDX + 4 * ga), ea);
    g_free(expect_control(c, FABRIC_CTL_TGR_JOIN, &h));
    wr(c, REG(TGR_REG_GROUP_PAGES + 4 * gb), 1);
    wr(c, REG(TGR_REG_GROUP_EIDX + 4 * gb), eb);
    g_free(expect_control(c, FABRIC_CTL_TGR_JOIN, &h));

    /* Group A's last page is A's. */
    FabricTgrHdr mt = { .op = FABRIC_TGR_MCAST_WRITE, .size = 4,
                        .eidx = FABRIC_TGR_MCAST_EIDX(ga, 1), .off = 0x20 };
    fabric_put_le32(data, 0xa1);
    send_tgr(c, PEER, &mt, data, sizeof(data));
    g_assert_cmphex(rd(c, PAGE(ea + 1) + 0x20), ==, 0xa1);

    /* Page 2 of A would be eidx 7: B's copy.  Refused, B untouched. */
    wr(c, PAGE(eb) + 0x20, 0xb0);
    mt.eidx = FABRIC_TGR_MCAST_EIDX(ga, 2);
    fabric_put_le32(data, 0xbad);
    send_tgr(c, PEER, &mt, data, sizeof(data));
    g_assert_cmphex(rd(c, PAGE(eb) + 0x20), ==, 0xb0);
    Event e = expect_event(c, TGR_EV_VIOL_IN, TGR_ERR_RANGE);
    g_assert_cmpuint(e.node, ==, PEER);
    g_assert_cmphex(e.page, ==, FABRIC_TGR_MCAST_EIDX(ga, 2));
    g_assert_true(ff_quiet(c->ff));                         /* no NACK */

    /* The farthest page, and an eidx that would wrap: refused too. */
    mt.eidx = FABRIC_TGR_MCAST_EIDX(ga, 0xffff);
    send_tgr(c, PEER, &mt, data, sizeof(data));
    expect_event(c, TGR_EV_VIOL_IN, TGR_ERR_RANGE);
    wr(c, REG(TGR_REG_GROUP_PAGES + 4 * 9), 0x10000);
    wr(c, REG(TGR_REG_GROUP_EIDX + 4 * 9), 0xffffff00u);
    g_free(expect_control(c, FABRIC_CTL_TGR_JOIN, &h));
    mt.eidx = FABRIC_TGR_MCAST_EIDX(9, 0x107);              /* wraps to 7 */
    send_tgr(c, PEER, &mt, data, sizeof(data));
    expect_event(c, TGR_EV_VIOL_IN, TGR_ERR_RANGE);
    g_assert_cmphex(rd(c, PAGE(eb) + 0x20), ==, 0xb0);

    /* B's own page 0 still works. */
    mt.eidx = FABRIC_TGR_MCAST_EIDX(gb, 0);
    fabric_put_le32(data, 0xb1);
    send_tgr(c, PEER, &mt, data, sizeof(data));
    g_assert_cmphex(rd(c, PAGE(eb) + 0x20), ==, 0xb1);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, 3);

    /* SOFT_RESET forgets the sizes with the groups. */
    g_assert_cmpuint(rd(c, REG(TGR_REG_GROUP_PAGES + 4 * ga)), ==, 2);
    wr(c, REG(TGR_REG_CTRL), TGR_CTRL_SOFT_RESET);
    g_assert_cmpuint(rd(c, REG(TGR_REG_GROUP_PAGES + 4 * ga)), ==, 0);
    card_down(c);
}

/* ---- sequence gaps, peer resets ------------------------------------------ */

static void test_seq_gap_and_peer_reset(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;
    uint8_t reset[FABRIC_TGR_GROUP_LEN] = { FABRIC_CTL_TGR_PEER_RESET };

    put_export(c, 4, PAGE(4), exp_rights(RW), 1, 1, 0);
    send_write32(c, 4, 1, 0, 1);
    c->seq[PEER] += 3;                                      /* 3 lost */
    send_write32(c, 4, 1, 4, 2);
    g_assert_cmpuint(rd(c, PAGE(4) + 4), ==, 2);            /* still applied */
    g_assert_cmpuint(counter(c, TGR_CNT_SEQ_GAPS), ==, 1);
    Event e = expect_event(c, TGR_EV_SEQ_GAP, TGR_ERR_OK);
    g_assert_cmpuint(e.node, ==, PEER);
    g_assert_cmpuint(e.page, ==, 1);                        /* expected */
    g_assert_cmpuint(e.off, ==, 4);                         /* got */

    /* PEER restarts while our read waits for it. */
    put_remote_pte(c, 0, TGR_R_ALL);
    g_assert_cmphex(rd(c, WIN(0, 0)), ==, 0xffffffff);
    g_free(expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t));
    fabric_put_le16(reset + 1, PEER);
    send_control(c, reset, sizeof(reset));
    g_assert_true(qt_wait_reg(c->qt, REG(TGR_REG_RD_STATUS), ~0u,
                              TGR_ERR_PEER_RESET));
    g_assert_cmpuint(counter(c, TGR_CNT_RREAD_FAIL), ==, 1);
    g_assert_cmpuint(expect_event(c, TGR_EV_PEER_RESET,
                                  TGR_ERR_PEER_RESET).node, ==, PEER);
    expect_event(c, TGR_EV_RREAD_FAIL, TGR_ERR_PEER_RESET);
    wr(c, REG(TGR_REG_RD_ACK), 0);

    /* Its new life starts at seq 0 again, without a gap. */
    c->seq[PEER] = 0;
    send_write32(c, 4, 1, 8, 3);
    g_assert_cmpuint(rd(c, PAGE(4) + 8), ==, 3);
    g_assert_cmpuint(counter(c, TGR_CNT_SEQ_GAPS), ==, 1);
    card_down(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/telegraphos/req-fsm-and-wrap", test_req_fsm_and_wrap);
    g_test_add_func("/telegraphos/req-overflow-stop-resume",
                    test_req_overflow_stop_resume);
    g_test_add_func("/telegraphos/hold-back-pressure",
                    test_hold_back_pressure);
    g_test_add_func("/telegraphos/read-flood-back-pressure",
                    test_read_flood_back_pressure);
    g_test_add_func("/telegraphos/hold-bytes-bounded",
                    test_hold_bytes_bounded);
    g_test_add_func("/telegraphos/group-churn-coalesced",
                    test_group_churn_coalesced);
    g_test_add_func("/telegraphos/export-check", test_export_check);
    g_test_add_func("/telegraphos/target-read-write-atomics",
                    test_target_read_write_atomics);
    g_test_add_func("/telegraphos/multicast", test_multicast);
    g_test_add_func("/telegraphos/multicast-group-bounds",
                    test_multicast_group_bounds);
    g_test_add_func("/telegraphos/seq-gap-and-peer-reset",
                    test_seq_gap_and_peer_reset);
    return g_test_run();
}
