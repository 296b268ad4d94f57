# SPDX-License-Identifier: GPL-2.0-or-later
# --- drvfuzz: the drivers' user-interface fuzzer (images/guest-tools/drvfuzz/)
# One core and one table per driver (drvfuzz_<driver>.c); the cluster
# tests run it as an unprivileged user on /dev/tgr0 (tests/cluster/tgr.sh) and
# as root on the root-only /dev/ps1 and /dev/myri0 (ps1.sh, myri.sh).
DRVFUZZ_DIR := images/guest-tools/drvfuzz
DRVFUZZ_SRC := $(addprefix $(DRVFUZZ_DIR)/,drvfuzz.c drvfuzz_tgr.c drvfuzz_ps1.c drvfuzz_myri.c)
GUEST_TOOLS += $(B)/guest/bin/drvfuzz
$(B)/guest/bin/drvfuzz: $(DRVFUZZ_SRC) $(DRVFUZZ_DIR)/drvfuzz.h $(GUEST_TOOL_COMMON) \
		$(TGR_UAPI_HDR) $(TGR_HW_HDR) $(PS1_UAPI_HDR) $(MYRI_UAPI_HDR) $(MYRI_HW_HDR)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(GUEST_TOOL_CFLAGS) -o $@ $(DRVFUZZ_SRC)
