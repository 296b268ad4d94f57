# SPDX-License-Identifier: GPL-2.0-or-later
# --- fabricd under AddressSanitizer and UndefinedBehaviorSanitizer ---------
# A second build of the fabric library, fabricd's parts, fabricd and the
# fuzzer in build/asan/.
# make check builds it, and test-fabricd-fuzz runs its short fuzz against
# build/asan/bin/fabricd; `make fuzz-fabricd` is the long run (10^6
# operations per kind; FUZZ_OPS and FUZZ_SEED choose others).
ASAN_B := $(B)/asan
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
ASAN_CFLAGS = -std=gnu11 $(WARN) -O1 -g $(ASAN_FLAGS) -MMD -MP -Iinclude -I. $(GLIB_CFLAGS)
FABRIC_ASAN_OBJ := $(patsubst %.c,$(ASAN_B)/obj/%.o,$(FABRIC_LIB_SRC))
FABRICD_ASAN_OBJ := $(patsubst %.c,$(ASAN_B)/obj/%.o,$(FABRICD_SRC))
FABRIC_ASAN_LIBS := $(ASAN_B)/lib/libfabricd.a $(ASAN_B)/lib/libvcfabric.a
FABRICD_ASAN := $(ASAN_B)/bin/fabricd $(ASAN_B)/tests/unit/test-fabricd-fuzz

$(ASAN_B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(call quiet,ASANCC,$@)$(CC) $(ASAN_CFLAGS) -c $< -o $@

$(ASAN_B)/lib/libvcfabric.a: $(FABRIC_ASAN_OBJ)
	@mkdir -p $(dir $@)
	$(call quiet,AR,$@)rm -f $@ && ar rcs $@ $^

$(ASAN_B)/lib/libfabricd.a: $(FABRICD_ASAN_OBJ)
	@mkdir -p $(dir $@)
	$(call quiet,AR,$@)rm -f $@ && ar rcs $@ $^

$(ASAN_B)/bin/fabricd: $(ASAN_B)/obj/daemon/fabricd/fabricd.o $(FABRIC_ASAN_LIBS)
	@mkdir -p $(dir $@)
	$(call quiet,ASANLD,$@)$(CC) $(ASAN_FLAGS) -o $@ $^ $(GLIB_LIBS) -lm

$(ASAN_B)/tests/unit/test-fabricd-fuzz: tests/unit/test-fabricd-fuzz.c $(FABRIC_ASAN_LIBS)
	@mkdir -p $(dir $@)
	$(call quiet,ASANLD,$@)$(CC) $(ASAN_CFLAGS) -Idaemon/fabricd -o $@ $< $(FABRIC_ASAN_LIBS) $(GLIB_LIBS) -lm

# The unit tests' short fuzz runs the ASan daemon.
check check-unit: $(FABRICD_ASAN)

.PHONY: fuzz-fabricd clean-fabricd-asan
fuzz-fabricd: $(FABRICD_ASAN) $(B)/bin/fabricctl
	@seed=$${FUZZ_SEED:-0x$$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')}; \
	echo "fuzz-fabricd: FUZZ_SEED=$$seed FUZZ_OPS=$${FUZZ_OPS:-4000000}"; \
	FUZZ_SEED=$$seed FUZZ_OPS=$${FUZZ_OPS:-4000000} \
		$(ASAN_B)/tests/unit/test-fabricd-fuzz --tap

clean: clean-fabricd-asan
clean-fabricd-asan:
	rm -rf $(ASAN_B)

-include $(shell find $(ASAN_B) -name '*.d' 2>/dev/null)
