/*
 * A delay line: items come back through a callback once their due time on
 * the monotonic clock has passed, in (due time, insertion) order.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_DELAY_H
#define FABRICD_DELAY_H

#include <glib.h>
#include <stdint.h>

typedef struct DelayLine DelayLine;
typedef void (*DelayFire)(gpointer item, gpointer opaque);

/* Items still held when the line is freed are passed to `free_item`. */
DelayLine *delay_line_new(DelayFire fire, GDestroyNotify free_item,
                          gpointer opaque);
void delay_line_free(DelayLine *dl);

/* `due_ns` is in g_get_monotonic_time() nanoseconds. */
void delay_line_add(DelayLine *dl, uint64_t due_ns, gpointer item);
unsigned delay_line_length(const DelayLine *dl);

#endif
