/*
 * Registry of fabric kinds.  ps1, myrinet and telegraphos will join eth
 * here, each as one more FabricKind table.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "kind.h"

static const FabricKind *const kinds[] = {
    &fabric_kind_eth,
};

const FabricKind *fabric_kind_find(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
        if (strcmp(kinds[i]->name, name) == 0) {
            return kinds[i];
        }
    }
    return NULL;
}
