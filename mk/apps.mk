# SPDX-License-Identifier: GPL-2.0-or-later
# --- unmodified Debian programs in the image: Open MPI, PVM, NetPIPE, ssh ---
# (docs/apps.md) Our MPI programs (images/guest-tools/mpi/), built with the
# host's mpicc; our PVM program (images/guest-tools/pvm/), built with the
# packaged pvm3.h and libpvm3; the ssh keys; and what else the image
# depends on.

# MPI programs: the packaged mpicc (Open MPI's wrapper around gcc), linked
# dynamically, so the image gets libmpi and the rest through ldd.
MPICC := mpicc
APPS_MPI_DIR := images/guest-tools/mpi
APPS_MPI_PROGS := $(B)/guest/bin/mpitest $(B)/guest/bin/heat $(B)/guest/bin/mpipingpong \
	$(B)/guest/bin/mpipattern
GUEST_TOOLS += $(APPS_MPI_PROGS)
$(APPS_MPI_PROGS): $(B)/guest/bin/%: $(APPS_MPI_DIR)/%.c $(GUEST_TOOL_COMMON)
	@mkdir -p $(dir $@)
	$(call quiet,MPICC,$@)$(MPICC) $(GUEST_TOOL_CFLAGS) -o $@ $< -lm

# PVM programs: pvm-dev's header and libpvm3.so, linked dynamically (the
# image has libpvm3 already, for pvmd).
APPS_PVM_DIR := images/guest-tools/pvm
APPS_PVM_PROGS := $(B)/guest/bin/pvmpingpong
GUEST_TOOLS += $(APPS_PVM_PROGS)
$(APPS_PVM_PROGS): $(B)/guest/bin/%: $(APPS_PVM_DIR)/%.c $(GUEST_TOOL_COMMON)
	@mkdir -p $(dir $@)
	@test -e /usr/include/pvm3.h || { echo "$@: /usr/include/pvm3.h (package pvm-dev) is missing; run: make deps" >&2; exit 1; }
	$(call quiet,CCLD,$@)$(CC) $(GUEST_TOOL_CFLAGS) -o $@ $< -lpvm3

# ssh keys, made once with dropbearkey and kept in build/ssh/ (make clean
# leaves them, so the image stays the same): the nodes' host key and root's
# client key. mkimage.sh copies build/guest/rootfs/ into the image.
APPS_KEYS := $(B)/ssh
APPS_ROOTFS := $(B)/guest/rootfs
$(APPS_KEYS)/host_ed25519 $(APPS_KEYS)/client_ed25519:
	@mkdir -p $(dir $@)
	$(call quiet,KEYGEN,$@)dropbearkey -t ed25519 -f $@ > $@.log 2>&1 || { cat $@.log; rm -f $@; false; }
# the public half as one line, with a fixed comment (not the build host's name)
$(APPS_KEYS)/%.pub: $(APPS_KEYS)/%
	$(call quiet,KEYGEN,$@)dropbearkey -y -f $< | awk '/^ssh-/ { print $$1, $$2, "root@vcluster" }' > $@.tmp && \
		test -s $@.tmp && mv $@.tmp $@
APPS_ROOTFS_FILES := $(APPS_ROOTFS)/etc/dropbear/dropbear_ed25519_host_key \
	$(APPS_ROOTFS)/etc/dropbear/host_key.pub \
	$(APPS_ROOTFS)/root/.ssh/id_dropbear $(APPS_ROOTFS)/root/.ssh/authorized_keys
$(APPS_ROOTFS)/etc/dropbear/dropbear_ed25519_host_key: $(APPS_KEYS)/host_ed25519
	@install -D -m 0600 $< $@
$(APPS_ROOTFS)/etc/dropbear/host_key.pub: $(APPS_KEYS)/host_ed25519.pub
	@install -D -m 0644 $< $@
$(APPS_ROOTFS)/root/.ssh/id_dropbear: $(APPS_KEYS)/client_ed25519
	@install -D -m 0600 $< $@
$(APPS_ROOTFS)/root/.ssh/authorized_keys: $(APPS_KEYS)/client_ed25519.pub
	@install -D -m 0600 $< $@

# The image follows images/packages.list and the packages it names (their
# dpkg file lists change when a package is upgraded).
APPS_PACKAGES := $(shell awk '$$1 !~ /^(\#|$$|alternative$$)/ { print $$1 }' images/packages.list 2>/dev/null | sort -u)
IMAGE_EXTRA += images/packages.list $(APPS_ROOTFS_FILES) \
	$(subst :,\:,$(wildcard $(foreach p,$(APPS_PACKAGES),/var/lib/dpkg/info/$(p).list /var/lib/dpkg/info/$(p):amd64.list)))

# `vcluster mpirun`'s arguments: linked with vcluster's objects, no main.
$(B)/tests/unit/test-mpirun: tests/unit/test-mpirun.c $(filter-out %/main.o,$(VCLUSTER_OBJ)) $(FABRIC_LIB)
	@mkdir -p $(dir $@)
	$(call quiet,CCLD,$@)$(CC) $(HOST_CFLAGS) $(JSON_CFLAGS) -Ihost-cli -o $@ $(filter %.o,$^) $< \
		$(FABRIC_LIB) $(JSON_LIBS) $(GLIB_LIBS)
