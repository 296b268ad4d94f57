# SPDX-License-Identifier: GPL-2.0-or-later
# vcluster: a virtual cluster lab.  `make` builds everything incrementally.
#   make deps    install the Debian packages (root)
#   make         QEMU, fabricd, vcluster, guest image
#   make check   all tests, ending with "N passed, N failed, N skipped"
#   make demo    deps, build, boot a 4-node cluster, run the demo, shut down
#   make help    these targets and one per component (qemu, fabricd, vcluster,
#                ps1, myri, myri-fw, tgr, libps, libpsock, libtgr, image, ...)
#   make check-fresh      demo and check in a clone of HEAD with every cache empty
#   make bench-platform   boot and exec timings -> build/bench/platform.tsv
#   make bench-ps1        ParaStation paper's benchmarks -> build/bench/ps1.tsv
#   make bench-myri       Myrinet card (HAL, ports) vs TCP -> build/bench/myri.tsv
#   make bench-tgr        Telegraphos remote memory and REQ -> build/bench/tgr.tsv
#   make bench-rv32       the Myrinet card's RV32IM core, MIPS -> build/bench/rv32.tsv
#   make bench-lockstep   the benchmarks in virtual time, slowdown, determinism,
#                         16 nodes -> build/bench/lockstep.tsv, lockstep-runs.tsv
#   make bench-sockets    the protocol hierarchy: HAL, rawdata, ports, sockets,
#                         NetPIPE, MPI, PVM on ps1 and myri and kernel TCP
#                         -> build/bench/sockets.tsv, sockets.png
#   make bench-sockets-lockstep  the same in virtual time, one lock-step run
#                         -> build/bench/sockets-lockstep.tsv, .png
#   make bench-apps       mpipattern and hpcc on 4 nodes over kernel TCP and
#                         ParaStation sockets, exec answer times
#                         -> build/bench/apps.tsv
#   make V=1 ...          full commands instead of "  CC  path" lines

B := build

# Short "  CC      path" lines, as the kernel's build prints; V=1 shows the commands.
V ?= 0
ifeq ($(V),1)
quiet =
KBUILD_V := V=1
else
quiet = @printf '  %-8s%s\n' '$(1)' '$(2)';
KBUILD_V :=
endif
CC := gcc
GLIB_CFLAGS := $(shell pkg-config --cflags glib-2.0 gio-2.0 gio-unix-2.0 2>/dev/null)
GLIB_LIBS := $(shell pkg-config --libs glib-2.0 gio-2.0 gio-unix-2.0 2>/dev/null)
JSON_CFLAGS := $(shell pkg-config --cflags json-glib-1.0 2>/dev/null)
JSON_LIBS := $(shell pkg-config --libs json-glib-1.0 2>/dev/null)
WARN := -Wall -Wextra -Wno-unused-parameter
CFLAGS ?= -O2 -g
# Host code reaches shared headers only: include/ (vcluster/..., uapi/) and,
# through -I., the wire protocol as "proto/<kind>.h" (QEMU sees it through
# build/qemu-src/include/proto).  A test of one component's internals adds
# that component's folder in its own rule.
HOST_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) -MMD -MP -Iinclude -I. $(GLIB_CFLAGS)

# Headers shared by the devices, drivers, firmware, libraries and tests:
# include/vcluster/hw/ the cards' registers and memory layouts,
# include/vcluster/fw/ the Myrinet firmware's host interface,
# include/uapi/ the drivers' user interfaces (ioctls, mmap offsets),
# include/vcluster/tgr_qlogic.h the Telegraphos REQ queue logic that the
# driver, libtgr and a host test share.
PS1_HW_HDR := include/vcluster/hw/ps1_regs.h
MYRI_HW_HDR := include/vcluster/hw/lanai_regs.h include/vcluster/fw/myri_mcp_if.h
TGR_HW_HDR := include/vcluster/hw/tgr_regs.h
PS1_UAPI_HDR := include/uapi/ps1_ioctl.h
MYRI_UAPI_HDR := include/uapi/myri_ioctl.h
TGR_UAPI_HDR := include/uapi/tgr_ioctl.h
TGR_QL_HDR := include/vcluster/tgr_qlogic.h

QEMU := $(B)/qemu/qemu-system-x86_64
IMAGE := $(B)/image/initramfs.cpio.gz

.PHONY: all deps qemu qemu-asan fuzz fuzz-devices tools image check check-unit check-qtest check-host check-fresh demo bench bench-platform bench-ps1 bench-myri bench-tgr bench-rv32 bench-lockstep bench-sockets bench-sockets-lockstep bench-apps clean distclean

all: qemu tools image

deps:
	@./scripts/deps.sh

# --- QEMU: Debian's 7.2 source with qemu-hw/ linked in as hw/vcluster ---
qemu:
	@V=$(V) ./scripts/build-qemu.sh

# The same QEMU with AddressSanitizer and UndefinedBehaviorSanitizer
# (build/qemu-asan), which the device fuzzers run.
qemu-asan:
	@V=$(V) ./scripts/build-qemu.sh --sanitize

# --- host tools (C + glib) ---
# host-lib/fabric/: the fabric library (kinds and topology checks, Myrinet
# routes) that fabricd and the launcher share, with no fabric model in it.
# daemon/fabricd/: fabricd's core and models, in an archive that fabricd,
# fabricctl and the unit tests link.  host-cli/: the launcher, vcluster.
FABRIC_LIB_SRC := $(wildcard host-lib/fabric/*.c)
FABRIC_LIB_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(FABRIC_LIB_SRC))
FABRIC_LIB := $(B)/lib/libvcfabric.a
FABRICD_SRC := $(filter-out %/fabricd.c %/fabricctl.c,$(wildcard daemon/fabricd/*.c))
FABRICD_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(FABRICD_SRC))
FABRICD_LIB := $(B)/lib/libfabricd.a
VCLUSTER_SRC := $(wildcard host-cli/*.c)
VCLUSTER_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(VCLUSTER_SRC))
HOST_BINS := $(B)/bin/fabricd $(B)/bin/fabricctl $(B)/bin/vcluster

tools: $(HOST_BINS)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(HOST_CFLAGS) -c $< -o $@

$(VCLUSTER_OBJ): HOST_CFLAGS += $(JSON_CFLAGS)

$(FABRIC_LIB): $(FABRIC_LIB_OBJ)
	@mkdir -p $(dir $@)
	$(call quiet,AR,$@)rm -f $@ && ar rcs $@ $^

$(FABRICD_LIB): $(FABRICD_OBJ)
	@mkdir -p $(dir $@)
	$(call quiet,AR,$@)rm -f $@ && ar rcs $@ $^

$(B)/bin/fabricd: $(B)/obj/daemon/fabricd/fabricd.o $(FABRICD_LIB) $(FABRIC_LIB)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(CFLAGS) -o $@ $^ $(GLIB_LIBS) -lm

$(B)/bin/fabricctl: $(B)/obj/daemon/fabricd/fabricctl.o $(FABRICD_LIB) $(FABRIC_LIB)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(CFLAGS) -o $@ $^ $(GLIB_LIBS) -lm

# The launcher links the fabric library and none of fabricd's models
# (tests/host/rooms.sh checks it).
$(B)/bin/vcluster: $(VCLUSTER_OBJ) $(FABRIC_LIB)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(CFLAGS) -o $@ $^ $(JSON_LIBS) $(GLIB_LIBS)

# --- guest programs (run inside the VMs; same glibc as the host) ---
# Their sources are all in images/guest-tools/: a program of one file at
# the top, a family of several files in its own folder, shared helpers in
# common/ (included as "common/..."). A card's or library's fragment in mk/
# builds that card's tools; the rule after the fragments builds the rest.
GUEST_TOOL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) -Iinclude -Iimages/guest-tools
GUEST_TOOL_COMMON := $(wildcard images/guest-tools/common/*.h)
GUEST_TOOLS :=

# --- guest kernel modules: out of tree against the guest kernel's headers ---
KVER := $(patsubst %-unsigned,%,$(shell dpkg-query -W -f='$${Depends}' linux-image-amd64 2>/dev/null | sed -n 's/^linux-image-\([^ ,]*\).*/\1/p'))
KDIR := /lib/modules/$(KVER)/build
# Each card's fragment in mk/ adds its module to GUEST_MODULES.
GUEST_MODULES :=

# --- per-component rules, one fragment per card and library (mk/*.mk): they
# add to GUEST_TOOLS, GUEST_MODULES, MYRI_FW and IMAGE_EXTRA before the
# image's inputs are fixed below ---
IMAGE_EXTRA :=
include $(sort $(wildcard mk/*.mk))

# The single-file guest programs no fragment claims (tcpbench): one rule,
# so that no program is built by two.
GUEST_TOOLS_PLAIN := $(filter-out $(GUEST_TOOLS),\
	$(patsubst images/guest-tools/%.c,$(B)/guest/bin/%,$(wildcard images/guest-tools/*.c)))
GUEST_TOOLS += $(GUEST_TOOLS_PLAIN)

$(GUEST_TOOLS_PLAIN): $(B)/guest/bin/%: images/guest-tools/%.c $(GUEST_TOOL_COMMON)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(GUEST_TOOL_CFLAGS) -o $@ $<

# --- one target per component (make help lists them) ---
# A driver's target builds its module and its test tool; a library's, the
# library and the programs that test or measure it.
COMPONENTS := qemu qemu-asan fabric-lib fabricd vcluster ps1 myri myri-fw tgr \
	libps libpsock libtgr apps guest-tools image
.PHONY: $(COMPONENTS) help
fabric-lib: $(FABRIC_LIB)
fabricd: $(B)/bin/fabricd $(B)/bin/fabricctl
vcluster: $(B)/bin/vcluster
ps1: $(B)/guest/modules/ps1.ko $(B)/guest/bin/ps1test
myri: $(B)/guest/modules/myri.ko $(B)/guest/bin/myritest
tgr: $(B)/guest/modules/tgr.ko $(B)/guest/bin/tgrtest
libps: $(B)/guest/lib/libps.a $(B)/guest/bin/pstest $(B)/guest/bin/psstress
libpsock: $(B)/guest/lib/libpsock.so $(B)/guest/bin/psocktest $(B)/guest/bin/tcpbench
libtgr: $(B)/guest/lib/libtgr.a $(B)/guest/bin/tgrbench $(B)/guest/bin/tgrcheck
apps: $(APPS_MPI_PROGS) $(APPS_PVM_PROGS)
guest-tools: $(GUEST_TOOLS)

help:
	@echo 'make [all]          everything below but qemu-asan, incrementally'
	@echo 'make deps           the Debian packages (root)'
	@echo 'make check          every test; ends "N passed, N failed, N skipped"'
	@echo 'make demo           deps, build, boot 4 nodes, run the demo, shut down'
	@echo 'make check-fresh    demo and check in a clone of HEAD, every cache empty'
	@echo 'make fuzz           the long fuzz runs (devices and fabricd)'
	@echo 'make bench-*        benchmarks: platform ps1 myri tgr rv32 lockstep'
	@echo '                    sockets sockets-lockstep (build/bench/*.tsv)'
	@echo
	@echo 'Components, each with what it needs:'
	@echo '  qemu         our QEMU 7.2 with the three cards (build/qemu)'
	@echo '  qemu-asan    the same with ASan and UBSan (build/qemu-asan)'
	@echo '  fabric-lib   the fabric library: kinds, topologies, routes (host-lib/fabric)'
	@echo '  fabricd      fabricd and fabricctl (daemon/fabricd)'
	@echo '  vcluster     the launcher (host-cli)'
	@echo '  tools        fabricd, fabricctl and vcluster'
	@echo '  ps1          ps1.ko and ps1test (guest-driver/ps1)'
	@echo '  myri         myri.ko and myritest (guest-driver/myri)'
	@echo '  myri-fw      the Myrinet card firmware, mcp.bin (guest-driver/myri/mcp)'
	@echo '  tgr          tgr.ko and tgrtest (guest-driver/tgr)'
	@echo '  libps        the ParaStation library, pstest, psstress (guest-lib/parastation)'
	@echo '  libpsock     ParaStation sockets, libpsock.so, psocktest, tcpbench'
	@echo '  libtgr       libtgr, tgrbench, tgrcheck (guest-lib/tgr)'
	@echo '  apps         the MPI and PVM programs (images/guest-tools/mpi, pvm)'
	@echo '  guest-tools  every program and library the guests run'
	@echo '  image        the guest image (build/image/initramfs.cpio.gz)'
	@echo 'V=1 shows the commands.'

# --- guest image: rebuilt only when its inputs change ---
# (IMAGE_EXTRA: what else a fragment's part of the image depends on)
IMAGE_INPUTS := images/mkimage.sh $(wildcard images/rootfs/*) $(wildcard images/rootfs/*/*) \
	$(wildcard images/rootfs/*/*/*) $(GUEST_TOOLS) $(GUEST_MODULES) $(MYRI_FW) $(IMAGE_EXTRA)

image: $(IMAGE)

$(IMAGE): $(IMAGE_INPUTS) | $(MYRI_FW_SKIP)
	$(call quiet,IMAGE,$@)VC_KVER=$(KVER) ./images/mkimage.sh $(B)/image $(B)/guest

# --- tests ---
UNIT_SRC := $(wildcard tests/unit/test-*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRC))

# Unit tests of fabricd's parts and the fabric library, with fabricd's
# internal headers.
$(B)/tests/unit/%: tests/unit/%.c $(FABRICD_LIB) $(FABRIC_LIB)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(HOST_CFLAGS) -Idaemon/fabricd -o $@ $< $(FABRICD_LIB) $(FABRIC_LIB) $(GLIB_LIBS) -lm

# The wire codecs, checked against zlib's CRC-32 among others.
$(B)/tests/unit/test-proto: tests/unit/test-proto.c $(wildcard proto/*.h)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(HOST_CFLAGS) -o $@ $< $(GLIB_LIBS) -lz

# vcluster's QEMU arguments and route files: linked with its objects, no main.
$(B)/tests/unit/test-vcluster: tests/unit/test-vcluster.c $(filter-out %/main.o,$(VCLUSTER_OBJ)) $(FABRIC_LIB)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(HOST_CFLAGS) $(JSON_CFLAGS) -Ihost-cli -o $@ $(filter %.o,$^) $< \
		$(FABRIC_LIB) $(JSON_LIBS) $(GLIB_LIBS)

# vcluster's trace reader, digest and compare, on traces that fabricd's
# capture.c writes.
$(B)/tests/unit/test-trace: tests/unit/test-trace.c $(B)/obj/host-cli/trace.o $(FABRICD_LIB) $(FABRIC_LIB)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(HOST_CFLAGS) -Ihost-cli -Idaemon/fabricd -o $@ \
		$(B)/obj/host-cli/trace.o $< $(FABRICD_LIB) $(FABRIC_LIB) $(GLIB_LIBS) -lm

# The LANai-style card's RV32IM core (qemu-hw/rv32core.c), tested on the host,
# also with firmware built by riscv64-unknown-elf-gcc from tests/unit/rv32/.
# The toolchain comes from `make deps`; without it that one test is skipped.
RV32_GCC := $(shell command -v riscv64-unknown-elf-gcc 2>/dev/null)
RV32_FW_CFLAGS := -march=rv32im -mabi=ilp32 -O2 -ffreestanding -nostdlib -nostartfiles \
	-fno-tree-loop-distribute-patterns -Wall -Wextra
RV32_FW_SRC := tests/unit/rv32/start.S tests/unit/rv32/fw.c

$(B)/tests/rv32/fw.elf: $(RV32_FW_SRC) tests/unit/rv32/fw.h
	@mkdir -p $(dir $@)
	$(call quiet,RVCC,$@)riscv64-unknown-elf-gcc $(RV32_FW_CFLAGS) -Wl,-Ttext=0 -o $@ $(RV32_FW_SRC) -lgcc

$(B)/tests/rv32/fw.bin: $(B)/tests/rv32/fw.elf
	$(call quiet,OBJCOPY,$@)riscv64-unknown-elf-objcopy -O binary $< $@

ifneq ($(RV32_GCC),)
RV32_FW := $(B)/tests/rv32/fw.bin
RV32_FW_DEF := -DRV32_FW_BIN='"$(abspath $(RV32_FW))"'
endif

$(B)/tests/unit/test-rv32: tests/unit/test-rv32.c tests/unit/rv32/fw.h qemu-hw/rv32core.h \
		$(B)/obj/qemu-hw/rv32core.o $(RV32_FW)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(HOST_CFLAGS) -Iqemu-hw $(RV32_FW_DEF) -o $@ $< $(B)/obj/qemu-hw/rv32core.o $(GLIB_LIBS)

# Device tests: our QEMU under -accel qtest, driven over the qtest protocol.
QTEST_SRC := $(wildcard tests/qtest/test-*.c)
QTEST_BINS := $(patsubst tests/qtest/%.c,$(B)/tests/qtest/%,$(QTEST_SRC))

$(B)/tests/qtest/%: tests/qtest/%.c tests/qtest/qtest-client.c $(wildcard tests/qtest/*.h) \
		$(PS1_HW_HDR) $(MYRI_HW_HDR) $(TGR_HW_HDR)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(HOST_CFLAGS) -Itests/qtest -o $@ tests/qtest/qtest-client.c $< $(GLIB_LIBS) -lz

check-unit: $(UNIT_BINS)
	@./tests/run.sh unit

check-qtest: qemu qemu-asan $(QTEST_BINS)
	@./tests/run.sh qtest

check-host:
	@./tests/run.sh host

# make check: every case must run (--strict: a skip is a failure here).
# The device fuzzers (tests/qtest/test-fuzz.c) run 10^5 operations per
# device there on build/qemu-asan; `make fuzz` runs FUZZ_OPS (default 10^6)
# of them, with FUZZ_SEED to replay a run.
check: all qemu-asan $(UNIT_BINS) $(QTEST_BINS)
	@./tests/run.sh --strict all

# make fuzz: the long runs, devices (FUZZ_OPS per device, default 10^6)
# and fabricd (mk/fabricd.mk: FUZZ_OPS in all, default 10^6 per kind).
fuzz: fuzz-devices fuzz-fabricd

fuzz-devices: qemu-asan $(B)/tests/qtest/test-fuzz
	@FUZZ_OPS=$${FUZZ_OPS:-1000000} $(B)/tests/qtest/test-fuzz

# The README's two commands in a clone of HEAD with every cache empty
# (source cache, ccache, build/, run directory): see docs/build.md.
check-fresh:
	@./scripts/check-fresh.sh demo check

# A new make after deps: KVER and the pkg-config flags are read when make
# starts, and on a fresh machine the packages arrive only with deps.
demo: deps
	@$(MAKE) --no-print-directory all
	@./scripts/demo.sh

bench: bench-platform bench-ps1 bench-myri bench-tgr bench-rv32 bench-lockstep bench-sockets \
	bench-sockets-lockstep bench-apps

bench-platform: all
	@./tests/bench/platform.sh

bench-ps1: all
	@./tests/bench/ps1.sh

bench-myri: all
	@./tests/bench/myri.sh

bench-tgr: all
	@./tests/bench/tgr.sh

bench-rv32: $(B)/tests/unit/test-rv32
	@./tests/bench/rv32.sh

bench-lockstep: all
	@./tests/bench/lockstep.sh

bench-sockets: all
	@./tests/bench/sockets.sh

bench-sockets-lockstep: all
	@./tests/bench/sockets-lockstep.sh

bench-apps: all
	@./tests/bench/apps.sh

clean:
	rm -rf $(B)/obj $(B)/lib $(B)/bin $(B)/tests $(B)/guest $(B)/image $(B)/bench

distclean:
	rm -rf $(B)

# Header dependencies (-MMD).  A test program built from several sources gets
# one .d file, of its last source: so each rule names the test's own file last.
-include $(shell find $(B)/obj $(B)/tests -name '*.d' 2>/dev/null)
