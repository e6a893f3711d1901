# Bulkhead: `make run` boots the default system in QEMU, `make test` runs every test.
# Both first run the bootstrap, which installs what is missing and is quiet otherwise.

CONFIG ?= configs/demo.yaml
CROSS  ?= aarch64-linux-gnu-
BUILD  ?= build
VENV   := .venv
BULKHEAD := $(VENV)/bin/bulkhead
PYTEST   := $(VENV)/bin/pytest

.PHONY: all run test bench campaign hyp image bootstrap unit-test tool-test system-test clean
all: image

bootstrap:
	@bash scripts/bootstrap.sh

include hypervisor/hypervisor.mk
include partitions/partitions.mk
include partitions/bench.mk
include partitions/bench-linux.mk
include partitions/board/board.mk
include linux/linux.mk
include tests/unit/unit.mk

IMAGE_DIR = $(BUILD)/images/$(basename $(notdir $(CONFIG)))

image: bootstrap hyp partitions board-guests linux-programs
	@$(BULKHEAD) build $(CONFIG) --out $(IMAGE_DIR) --hyp-lib $(HYP_LIB) \
		--linker-script $(HYP_LD) --include hypervisor/include --cross $(CROSS)

run: image
	@$(BULKHEAD) qemu $(CONFIG) --image $(IMAGE_DIR)/bulkhead.img

test: bootstrap hyp partitions board-guests linux-programs unit-test
	@$(PYTEST) -q tests/tool tests/system

bench: bootstrap hyp partitions board-guests
	@$(VENV)/bin/python -m bench.run

# The long adversarial campaign (up to an hour); writes docs/reliability.md from its results.
campaign: bootstrap hyp partitions linux-programs
	@$(VENV)/bin/python tests/campaign.py

clean:
	rm -rf $(BUILD)
