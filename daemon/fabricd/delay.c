/*
 * Delay line on a GSequence sorted by (due, sequence number), woken by a
 * GSource whose ready time is the earliest due time.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "delay.h"

typedef struct DelayEntry {
    uint64_t due_ns;
    uint64_t seq;
    gpointer item;
} DelayEntry;

struct DelayLine {
    GSource *source;
    GSequence *queue;       /* DelayEntry */
    uint64_t next_seq;
    DelayFire fire;
    GDestroyNotify free_item;
    gpointer opaque;
};

typedef struct DelaySource {
    GSource base;
    DelayLine *dl;
} DelaySource;

static int entry_compare(gconstpointer a, gconstpointer b, gpointer unused)
{
    const DelayEntry *x = a, *y = b;

    if (x->due_ns != y->due_ns) {
        return x->due_ns < y->due_ns ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void rearm(DelayLine *dl)
{
    GSequenceIter *first = g_sequence_get_begin_iter(dl->queue);

    if (g_sequence_iter_is_end(first)) {
        g_source_set_ready_time(dl->source, -1);
        return;
    }
    const DelayEntry *e = g_sequence_get(first);

    /* Round up: waking early would find nothing due and spin. */
    g_source_set_ready_time(dl->source, (e->due_ns + 999) / 1000);
}

static gboolean delay_dispatch(GSource *source, GSourceFunc unused_cb,
                               gpointer unused)
{
    DelayLine *dl = ((DelaySource *)source)->dl;
    uint64_t now_ns = (uint64_t)g_get_monotonic_time() * 1000;

    for (;;) {
        GSequenceIter *first = g_sequence_get_begin_iter(dl->queue);

        if (g_sequence_iter_is_end(first)) {
            break;
        }
        DelayEntry *e = g_sequence_get(first);

        if (e->due_ns > now_ns) {
            break;
        }
        gpointer item = e->item;

        g_sequence_remove(first);   /* frees e */
        dl->fire(item, dl->opaque);
    }
    rearm(dl);
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs delay_source_funcs = {
    .dispatch = delay_dispatch,
};

DelayLine *delay_line_new(DelayFire fire, GDestroyNotify free_item,
                          gpointer opaque)
{
    DelayLine *dl = g_new0(DelayLine, 1);

    dl->queue = g_sequence_new(g_free);
    dl->fire = fire;
    dl->free_item = free_item;
    dl->opaque = opaque;
    dl->source = g_source_new(&delay_source_funcs, sizeof(DelaySource));
    ((DelaySource *)dl->source)->dl = dl;
    g_source_set_name(dl->source, "fabricd delay line");
    g_source_set_ready_time(dl->source, -1);
    g_source_attach(dl->source, NULL);
    return dl;
}

void delay_line_free(DelayLine *dl)
{
    if (!dl) {
        return;
    }
    g_source_destroy(dl->source);
    g_source_unref(dl->source);
    for (GSequenceIter *it = g_sequence_get_begin_iter(dl->queue);
         !g_sequence_iter_is_end(it); it = g_sequence_iter_next(it)) {
        DelayEntry *e = g_sequence_get(it);

        dl->free_item(e->item);
    }
    g_sequence_free(dl->queue);
    g_free(dl);
}

void delay_line_add(DelayLine *dl, uint64_t due_ns, gpointer item)
{
    DelayEntry *e = g_new(DelayEntry, 1);

    e->due_ns = due_ns;
    e->seq = dl->next_seq++;
    e->item = item;
    g_sequence_insert_sorted(dl->queue, e, entry_compare, NULL);
    rearm(dl);
}

unsigned delay_line_length(const DelayLine *dl)
{
    return g_sequence_get_length(dl->queue);
}
