# SPDX-License-Identifier: GPL-2.0-or-later
# --- Telegraphos user-level library (guest-lib/tgr) ------------------------
# libtgr.a for the guest, its tools in images/guest-tools/tgrtool/
# (tgrbench for `make bench-tgr`, tgrcheck for tests/cluster/tgr.sh, and
# tgrtool.c, the helpers they share), and the host unit test of the REQ
# queue (the device's FSM with the driver's and library's queue logic).
TGRLIB_SRC := guest-lib/tgr/tgr.c guest-lib/tgr/tgr_queue.c
TGRLIB_HDR := guest-lib/tgr/tgr.h guest-lib/tgr/tgr_int.h $(TGR_UAPI_HDR) $(TGR_HW_HDR) $(TGR_QL_HDR)
TGRLIB_OBJ := $(patsubst %.c,$(B)/guest/obj/%.o,$(TGRLIB_SRC))
TGRLIB_CFLAGS = -std=gnu11 $(WARN) -Wunused-parameter $(CFLAGS) -Iinclude -Iguest-lib/tgr
TGR_TOOL_DIR := images/guest-tools/tgrtool
TGR_TOOL_HDR := $(TGR_TOOL_DIR)/tgrtool.h $(GUEST_TOOL_COMMON)
TGR_TOOL_OBJ := $(B)/guest/obj/$(TGR_TOOL_DIR)/tgrtool.o
TGR_TOOL_CFLAGS = $(TGRLIB_CFLAGS) -Iimages/guest-tools

$(B)/guest/obj/guest-lib/tgr/%.o: guest-lib/tgr/%.c $(TGRLIB_HDR)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(TGRLIB_CFLAGS) -c $< -o $@

$(B)/guest/lib/libtgr.a: $(TGRLIB_OBJ)
	@mkdir -p $(dir $@)
	$(call quiet,AR,$@)rm -f $@ && ar rcs $@ $^

$(TGR_TOOL_OBJ): $(TGR_TOOL_DIR)/tgrtool.c $(TGR_TOOL_HDR) $(TGRLIB_HDR)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(TGR_TOOL_CFLAGS) -c $< -o $@

GUEST_TOOLS += $(B)/guest/bin/tgrbench $(B)/guest/bin/tgrcheck
$(B)/guest/bin/tgrbench $(B)/guest/bin/tgrcheck: $(B)/guest/bin/%: $(TGR_TOOL_DIR)/%.c $(TGR_TOOL_OBJ) \
		$(B)/guest/lib/libtgr.a $(TGR_TOOL_HDR) $(TGRLIB_HDR)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(TGR_TOOL_CFLAGS) -o $@ $< $(TGR_TOOL_OBJ) $(B)/guest/lib/libtgr.a -lpthread

# The REQ queue on the host: the device's FSM (qemu-hw/telegraphos-req.c),
# tgr_qlogic.h, and libtgr's queue code against a simulated driver.
$(B)/tests/unit/test-tgr-queue: tests/unit/test-tgr-queue.c qemu-hw/telegraphos-req.c qemu-hw/telegraphos-req.h \
		guest-lib/tgr/tgr_queue.c $(TGRLIB_HDR)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(HOST_CFLAGS) -Iqemu-hw -Iguest-lib/tgr -o $@ qemu-hw/telegraphos-req.c \
		guest-lib/tgr/tgr_queue.c $< $(GLIB_LIBS) -lpthread
# --- end Telegraphos library ------------------------------------------------
