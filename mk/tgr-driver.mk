# SPDX-License-Identifier: GPL-2.0-or-later
# --- Telegraphos driver (guest-driver/tgr): tgr.ko and its test tool -------
# tgr.ko builds like ps1.ko/myri.ko (W=1, against the guest kernel's
# headers); tgrtest drives the driver's ioctls, and libtgr for the data path.
GUEST_MODULES += $(B)/guest/modules/tgr.ko
$(B)/guest/modules/tgr.ko: $(wildcard guest-driver/tgr/*.[ch]) guest-driver/tgr/Kbuild $(TGR_UAPI_HDR) $(TGR_HW_HDR) $(TGR_QL_HDR) \
		include/vcluster/nic_driver.h
	@test -d $(KDIR) || { echo "guest kernel headers missing ($(KDIR)); run: make deps" >&2; exit 1; }
	$(call quiet,KMOD,$@)$(MAKE) -C $(KDIR) M=$(abspath guest-driver/tgr) W=1 $(KBUILD_V) modules
	@mkdir -p $(dir $@)
	$(call quiet,INSTALL,$@)cp guest-driver/tgr/tgr.ko $@

# tgrtest's sources are in images/guest-tools/tgrtest/, with the other
# guest programs.
TGRTEST_DIR := images/guest-tools/tgrtest
TGRTEST_SRC := $(addprefix $(TGRTEST_DIR)/,tgrtest.c tgrtest_cmds.c tgrtest_local.c)
GUEST_TOOLS += $(B)/guest/bin/tgrtest
$(B)/guest/bin/tgrtest: $(TGRTEST_SRC) $(TGRTEST_DIR)/tgrtest.h $(GUEST_TOOL_COMMON) \
		$(TGR_UAPI_HDR) $(TGR_HW_HDR) guest-lib/tgr/tgr.h $(B)/guest/lib/libtgr.a
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(GUEST_TOOL_CFLAGS) -Iguest-lib/tgr -o $@ $(TGRTEST_SRC) $(B)/guest/lib/libtgr.a -lpthread
