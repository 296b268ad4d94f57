# SPDX-License-Identifier: GPL-2.0-or-later
# --- ParaStation board driver (guest-driver/ps1): ps1.ko and ps1test --------
GUEST_MODULES += $(B)/guest/modules/ps1.ko
$(B)/guest/modules/ps1.ko: $(wildcard guest-driver/ps1/*.[ch]) guest-driver/ps1/Kbuild $(PS1_UAPI_HDR) $(PS1_HW_HDR) include/vcluster/nic_driver.h
	@test -d $(KDIR) || { echo "guest kernel headers missing ($(KDIR)); run: make deps" >&2; exit 1; }
	$(call quiet,KMOD,$@)$(MAKE) -C $(KDIR) M=$(abspath guest-driver/ps1) W=1 $(KBUILD_V) modules
	@mkdir -p $(dir $@)
	$(call quiet,INSTALL,$@)cp guest-driver/ps1/ps1.ko $@

# The driver's test program (images/guest-tools/, with the other guest programs).
GUEST_TOOLS += $(B)/guest/bin/ps1test
$(B)/guest/bin/ps1test: images/guest-tools/ps1test.c $(GUEST_TOOL_COMMON) $(PS1_UAPI_HDR) $(PS1_HW_HDR)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(GUEST_TOOL_CFLAGS) -o $@ $<
