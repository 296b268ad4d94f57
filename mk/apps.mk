# SPDX-License-Identifier: GPL-2.0-or-later
# --- unmodified Debian programs in the image: Open MPI, PVM, NetPIPE, ssh ---
# (docs/apps.md) What the image's share of them depends on.

# The image follows images/packages.list and the packages it names (their
# dpkg file lists change when a package is upgraded).
APPS_PACKAGES := $(shell awk '$$1 !~ /^(\#|$$|alternative$$)/ { print $$1 }' images/packages.list 2>/dev/null | sort -u)
IMAGE_EXTRA += images/packages.list \
	$(subst :,\:,$(wildcard $(foreach p,$(APPS_PACKAGES),/var/lib/dpkg/info/$(p).list /var/lib/dpkg/info/$(p):amd64.list)))
