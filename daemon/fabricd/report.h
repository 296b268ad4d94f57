/*
 * Text reports for the control socket: status (for people), counters (for
 * scripts), fault rule list.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FABRICD_REPORT_H
#define FABRICD_REPORT_H

#include <glib.h>

#include "fabric.h"

void report_status(Fabric *f, GString *out);
void report_counters(Fabric *f, GString *out);
void report_rules(Fabric *f, GString *out);

#endif
