# Host unit tests: core/ (and the arch files that only use core/: the stage-2 builder and
# PSCI emulation) against the fake architecture.

UNIT_DIR  := $(BUILD)/unit
UNIT_BIN  := $(UNIT_DIR)/unit-tests
UNIT_SRCS := $(wildcard hypervisor/core/*.c) hypervisor/arch/fake/fake.c \
	hypervisor/arch/aarch64/stage2.c \
	hypervisor/arch/aarch64/vpsci.c $(wildcard tests/unit/*.c)
UNIT_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -fno-builtin \
	-fsanitize=address,undefined -fno-sanitize-recover=all \
	-Ihypervisor/arch/fake/include -Ihypervisor/include -Ihypervisor/arch/aarch64/include \
	-Ipartitions/include -Itests/unit

.PHONY: unit-test
unit-test: $(UNIT_BIN)
	@$(UNIT_BIN)

$(UNIT_BIN): $(UNIT_SRCS) $(wildcard hypervisor/include/*.h tests/unit/*.h)
	@mkdir -p $(dir $@)
	gcc $(UNIT_CFLAGS) $(UNIT_SRCS) -o $@

# The boot checker (tests/unit/bootcheck): core/ and the fake architecture compiled once into a
# library; tests/tool/test_boot_accepted.py links the tables the tool emits for a description
# against it and runs the hypervisor's boot path on the host. fake.c's physical memory and
# partition reset are renamed away: bootcheck/ram.c maps the tables' real RAM range instead.
BOOTCHECK_DIR  := $(BUILD)/bootcheck
BOOTCHECK_LIB  := $(BOOTCHECK_DIR)/libbootcheck.a
BOOTCHECK_MAIN := $(BOOTCHECK_DIR)/boot.o
BOOTCHECK_SRCS := $(wildcard hypervisor/core/*.c) hypervisor/arch/fake/fake.c \
	hypervisor/arch/aarch64/stage2.c tests/unit/bootcheck/ram.c
BOOTCHECK_OBJS := $(patsubst %.c,$(BOOTCHECK_DIR)/obj/%.o,$(BOOTCHECK_SRCS))
BOOTCHECK_CFLAGS := $(UNIT_CFLAGS) -Itests/unit/bootcheck
BOOTCHECK_RENAME := -Darch_phys_to_ptr=fake_arch_phys_to_ptr \
	-Darch_partition_reset=fake_arch_partition_reset

.PHONY: bootcheck-lib boot-check
bootcheck-lib: $(BOOTCHECK_LIB) $(BOOTCHECK_MAIN)

# The tool's tests with the boot check included: every accepted description must boot.
boot-check: bootcheck-lib
	@$(PYTEST) -q tests/tool/test_boot_accepted.py

$(BOOTCHECK_LIB): $(BOOTCHECK_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BOOTCHECK_DIR)/obj/hypervisor/arch/fake/fake.o: BOOTCHECK_CFLAGS += $(BOOTCHECK_RENAME)
$(BOOTCHECK_DIR)/obj/%.o: %.c $(wildcard hypervisor/include/*.h hypervisor/arch/fake/include/arch/*.h tests/unit/bootcheck/*.h)
	@mkdir -p $(dir $@)
	gcc $(BOOTCHECK_CFLAGS) -c $< -o $@

$(BOOTCHECK_MAIN): tests/unit/bootcheck/boot.c $(wildcard hypervisor/include/*.h hypervisor/arch/fake/include/arch/*.h tests/unit/bootcheck/*.h)
	@mkdir -p $(dir $@)
	gcc $(BOOTCHECK_CFLAGS) -c $< -o $@
