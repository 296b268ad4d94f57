# SPDX-License-Identifier: GPL-2.0-or-later
# --- Myrinet card driver (guest-driver/myri): myri.ko, myritest and the
# card's firmware ---------------------------------------------------------------
GUEST_MODULES += $(B)/guest/modules/myri.ko
$(B)/guest/modules/myri.ko: $(wildcard guest-driver/myri/*.[ch]) guest-driver/myri/Kbuild $(MYRI_UAPI_HDR) $(MYRI_HW_HDR) include/vcluster/nic_driver.h
	@test -d $(KDIR) || { echo "guest kernel headers missing ($(KDIR)); run: make deps" >&2; exit 1; }
	$(call quiet,KMOD,$@)$(MAKE) -C $(KDIR) M=$(abspath guest-driver/myri) W=1 $(KBUILD_V) modules
	@mkdir -p $(dir $@)
	$(call quiet,INSTALL,$@)cp guest-driver/myri/myri.ko $@

# The driver's test program (images/guest-tools/, with the other guest programs).
GUEST_TOOLS += $(B)/guest/bin/myritest
$(B)/guest/bin/myritest: images/guest-tools/myritest.c $(GUEST_TOOL_COMMON) $(MYRI_UAPI_HDR) $(MYRI_HW_HDR)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(GUEST_TOOL_CFLAGS) -o $@ $<

# --- the Myrinet card's firmware (MCP): guest-driver/myri/mcp/ ---
# mcp.bin = header (mkimage) + RV32IM image, for /lib/firmware/myri/ in the
# guest; mcp-loop.bin and mcp-wild.bin are broken on purpose (driver tests).
# Needs riscv64-unknown-elf-gcc (make deps); without it they are skipped.
# The firmware's host tests (test-mcp, test-rdp) are built here, with the
# firmware, since they compile its RDP code (rdp.c, rdp.h).
MCP_GCC := $(shell command -v riscv64-unknown-elf-gcc 2>/dev/null)
MCP_DIR := guest-driver/myri/mcp
MCP_SRC := $(addprefix $(MCP_DIR)/,start.S main.c host.c net.c dma.c util.c rdp.c)
MCP_HDR := $(MCP_DIR)/mcp.h $(MCP_DIR)/rdp.h include/vcluster/le.h $(MYRI_HW_HDR)
MCP_CFLAGS := -std=gnu11 -march=rv32im -mabi=ilp32 -O2 -ffreestanding -nostdlib -nostartfiles -Iinclude \
	-fno-tree-loop-distribute-patterns -Wall -Wextra -DRDP_MAX_PEERS=64 \
	-T $(MCP_DIR)/mcp.ld -Wl,--gc-sections -Wl,--no-warn-rwx-segments
MYRI_FW_DIR := $(B)/guest/firmware/myri

$(B)/obj/mcp/mkimage: $(MCP_DIR)/mkimage.c include/vcluster/fw/myri_mcp_if.h include/vcluster/le.h
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) -std=gnu11 -Wall -Wextra $(CFLAGS) -Iinclude -o $@ $< -lz

$(B)/obj/mcp/mcp.elf: $(MCP_SRC) $(MCP_HDR) $(MCP_DIR)/mcp.ld
	@mkdir -p $(dir $@)
	$(call quiet,RVCC,$@)riscv64-unknown-elf-gcc $(MCP_CFLAGS) -o $@ $(MCP_SRC) -lgcc

$(B)/obj/mcp/mcp-%.elf: $(MCP_DIR)/mcp-%.S $(MCP_DIR)/mcp.ld
	@mkdir -p $(dir $@)
	$(call quiet,RVCC,$@)riscv64-unknown-elf-gcc $(MCP_CFLAGS) -o $@ $<

$(B)/obj/mcp/%.raw: $(B)/obj/mcp/%.elf
	$(call quiet,OBJCOPY,$@)riscv64-unknown-elf-objcopy -O binary $< $@

$(MYRI_FW_DIR)/%.bin: $(B)/obj/mcp/%.elf $(B)/obj/mcp/%.raw $(B)/obj/mcp/mkimage
	@mkdir -p $(dir $@)
	$(call quiet,MCPIMG,$@)$(B)/obj/mcp/mkimage -n $* $< $(B)/obj/mcp/$*.raw $@
.PRECIOUS: $(B)/obj/mcp/%.elf $(B)/obj/mcp/%.raw

ifneq ($(MCP_GCC),)
MYRI_FW := $(addprefix $(MYRI_FW_DIR)/,mcp.bin mcp-loop.bin mcp-wild.bin)
else
MYRI_FW_SKIP := myri-fw-skip
endif

.PHONY: myri-fw myri-fw-skip
myri-fw: $(MYRI_FW) $(MYRI_FW_SKIP)
myri-fw-skip:
	@echo "note: riscv64-unknown-elf-gcc not found: Myrinet firmware (myri/mcp.bin) not built; run: make deps"

# The MCP on the card under qtest, with a fake peer speaking RDP (rdp.c).
$(B)/tests/qtest/test-mcp: tests/qtest/test-mcp.c tests/qtest/qtest-client.c tests/qtest/qtest-client.h \
		$(MCP_DIR)/rdp.c $(MCP_HDR) $(MYRI_FW)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(HOST_CFLAGS) -Itests/qtest -I$(MCP_DIR) -DMYRI_FW_DIR='"$(abspath $(MYRI_FW_DIR))"' \
		-o $@ tests/qtest/qtest-client.c $(MCP_DIR)/rdp.c $< $(GLIB_LIBS) -lz

# The firmware's RDP core (freestanding), tested on the host with fabricd's
# seeded PRNG (fabricd's prng.c, in libfabricd).
$(B)/tests/unit/test-rdp: tests/unit/test-rdp.c $(MCP_DIR)/rdp.c $(MCP_DIR)/rdp.h $(FABRICD_LIB)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(HOST_CFLAGS) -I$(MCP_DIR) -Idaemon/fabricd -o $@ $(MCP_DIR)/rdp.c $< \
		$(FABRICD_LIB) $(GLIB_LIBS)
