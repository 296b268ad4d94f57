#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# apps.sh (NetPIPE, PVM, Open MPI, heat on 4 nodes) with every program on
# ParaStation sockets (LD_PRELOAD of libpsock.so) over the ParaStation
# board: the same unmodified binaries, their TCP and UDP over ports.
# tests/cluster/apps-ps1.sh direct|libvirt
APPS_NAME=apps-ps1 APPS_FABRIC=eth,ps1 APPS_PRELOAD=/usr/lib/libpsock.so \
	exec sh "$(dirname "$0")/apps.sh" "${1:-direct}"
