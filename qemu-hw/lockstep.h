/*
 * Lock-step clock of one VM: every fabric link with lockstep=on stops the
 * VM at its grant, reports to its fabricd and waits for the next grant
 * (proto/sync.h, docs/lockstep.md).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_VCLUSTER_LOCKSTEP_H
#define HW_VCLUSTER_LOCKSTEP_H

#include "qapi/error.h"

typedef struct FabricLink FabricLink;

/* Put `l` under the VM's lock-step clock; false (errp) without -icount. */
bool lockstep_add_link(FabricLink *l, Error **errp);
void lockstep_remove_link(FabricLink *l);

#endif
