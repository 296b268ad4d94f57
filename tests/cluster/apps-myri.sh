#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# apps.sh on ParaStation sockets over the Myrinet card (the library picks
# the card when a node has no ParaStation board), with 5 % of the myrinet
# fabric's packets dropped: the MCP's RDP must hide the loss.
# tests/cluster/apps-myri.sh direct|libvirt
APPS_NAME=apps-myri APPS_FABRIC=eth,myrinet APPS_PRELOAD=/usr/lib/libpsock.so \
	APPS_LOSS='* drop p=0.05' exec sh "$(dirname "$0")/apps.sh" "${1:-direct}"
