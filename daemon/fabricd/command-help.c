/*
 * The control command summary, on its own so fabricctl can print it
 * without linking the whole daemon.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "commands.h"

const char fabric_command_help[] =
    "status                      kind, seed, ports, busy links, fault rules\n"
    "counters                    every port and directed link, one per line\n"
    "table                       MACs (eth), routing tables (ps1), routes "
    "(myrinet)\n"
    "fault add LINK ACTION [k=v] add a fault rule, prints its id\n"
    "fault load FILE             add the rules of a fault file, prints their "
    "ids\n"
    "fault del ID                remove a rule\n"
    "fault list                  rules with matched/fired counts\n"
    "fault clear                 remove every rule\n"
    "link down LINK              take links down (A>B, A-B, *>B, *)\n"
    "link up LINK                bring links back up\n"
    "capture start FILE          record delivered frames as pcapng (a new file)\n"
    "capture stop                finish the capture, prints its frame count\n"
    "capture status              capture state\n"
    "seed                        the seed of every random fault decision\n"
    "time                        the time fault rules see (at=, until=), in "
    "ns\n"
    "help                        this list\n";
