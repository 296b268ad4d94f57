# SPDX-License-Identifier: GPL-2.0-or-later
# --- ParaStation user-level library (guest-lib/parastation) -------------
# libps.a (HAL, rawdata, ports) and its test programs pstest and psstress
# (images/guest-tools/pstest/), for the guest.
PSLIB_SRC := $(wildcard guest-lib/parastation/*.c)
PSLIB_HDR := $(wildcard guest-lib/parastation/*.h) $(PS1_UAPI_HDR) $(PS1_HW_HDR) $(MYRI_UAPI_HDR) $(MYRI_HW_HDR)
PSLIB_OBJ := $(patsubst %.c,$(B)/guest/obj/%.o,$(PSLIB_SRC))
# Link-time optimisation: a message crosses many small functions in
# several files (the socket call, the stream, ports, the HAL), and the
# calls between them cost more than their work (docs/parastation-lib.md
# has the figures).  Archives take gcc-ar (the plugin).
PSLIB_AR ?= gcc-ar
PSLIB_CFLAGS = -std=gnu11 $(WARN) -Wunused-parameter $(CFLAGS) -flto=auto -Iinclude -Iguest-lib/parastation

$(B)/guest/obj/guest-lib/parastation/%.o: guest-lib/parastation/%.c $(PSLIB_HDR)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(PSLIB_CFLAGS) -c $< -o $@

$(B)/guest/lib/libps.a: $(PSLIB_OBJ)
	@mkdir -p $(dir $@)
	$(call quiet,AR,$@)rm -f $@ && $(PSLIB_AR) rcs $@ $^

PSTEST_DIR := images/guest-tools/pstest
PSTEST_CFLAGS = $(PSLIB_CFLAGS) -Iimages/guest-tools
GUEST_TOOLS += $(B)/guest/bin/pstest $(B)/guest/bin/psstress
$(B)/guest/bin/pstest $(B)/guest/bin/psstress: $(B)/guest/bin/%: $(PSTEST_DIR)/%.c $(PSTEST_DIR)/pattern.h \
		$(GUEST_TOOL_COMMON) $(B)/guest/lib/libps.a $(PSLIB_HDR)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(PSTEST_CFLAGS) -o $@ $< $(B)/guest/lib/libps.a

# libpsock.so, ParaStation sockets (guest-lib/parastation/psock/), which
# unmodified programs load with LD_PRELOAD (psrun): libps and the socket
# layer built position-independent, only the socket and signal calls exported.
# Its thread-local counters use the initial-exec model: the library is
# loaded at start (never dlopen()ed), and each access of the default model
# calls __tls_get_addr, on every message (docs/psock.md, "Files").
PSOCK_SRC := $(wildcard guest-lib/parastation/psock/*.c)
PSOCK_HDR := $(wildcard guest-lib/parastation/psock/*.h)
PSOCK_OBJ := $(patsubst %.c,$(B)/guest/obj-pic/%.o,$(PSLIB_SRC) $(PSOCK_SRC))
GUEST_TOOLS += $(B)/guest/lib/libpsock.so

$(B)/guest/obj-pic/%.o: %.c $(PSLIB_HDR) $(PSOCK_HDR)
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(PSLIB_CFLAGS) -fPIC -fvisibility=hidden \
		-ftls-model=initial-exec -c $< -o $@

$(B)/guest/lib/libpsock.so: $(PSOCK_OBJ)
	@mkdir -p $(dir $@)
	$(call quiet,LD,$@)$(CC) $(PSLIB_CFLAGS) -fPIC -shared -Wl,-z,defs -Wl,-soname,libpsock.so -o $@ $^
# --- end ParaStation library ---------------------------------------------
