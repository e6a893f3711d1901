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
