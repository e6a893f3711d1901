# Unmodified guests for the virtual boards (docs/configuration.md, `board:`): bare-metal programs
# written against QEMU's `virt` machine only, with their own start code and linker script; no
# libbhpart, no hypercall. Output: $(BUILD)/board/<name>.elf, BOARD_GUEST_ELFS, target board-guests;
# and <name>.bin, the same program as a raw binary (objcopy -O binary, from its load address) for the
# raw boot protocol (docs/configuration.md, `load`).
BOARD_SRC := partitions/board
BOARD_OUT := $(BUILD)/board
BOARD_CFLAGS := -Ipartitions/board/include -std=gnu11 -ffreestanding -fno-pic -fno-pie -fno-stack-protector -mgeneral-regs-only \
	-mstrict-align -fno-tree-loop-distribute-patterns -O2 -g -Wall -Wextra -Werror -Wno-main
BOARD_LDFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none -Wl,--fatal-warnings -Wl,-z,max-page-size=4096 -Wl,--no-warn-rwx-segments
# Every directory is a guest but include/, what guests share (fwprobe.h, el1_entry.S, the
# firmware's reset vector and linker script).
BOARD_GUESTS := $(filter-out include,$(sort $(notdir $(patsubst %/,%,$(wildcard $(BOARD_SRC)/*/)))))
BOARD_GUEST_ELFS := $(patsubst %,$(BOARD_OUT)/%.elf,$(BOARD_GUESTS))
BOARD_GUEST_BINS := $(BOARD_GUEST_ELFS:.elf=.bin)

.PHONY: board-guests
board-guests: $(BOARD_GUEST_ELFS) $(BOARD_GUEST_BINS)

$(BOARD_OUT)/%.bin: $(BOARD_OUT)/%.elf
	$(CROSS)objcopy -O binary $< $@

# A guest's sources are its own .c and .S files; one with no start code of its own gets the
# firmware reset vector (include/fw_start.S), one with no NAME.ld the firmware's linker script.
board_srcs = $(wildcard $(BOARD_SRC)/$(1)/*.c $(BOARD_SRC)/$(1)/*.S) \
	$(if $(wildcard $(BOARD_SRC)/$(1)/*.S),,$(BOARD_SRC)/include/fw_start.S)
board_ld = $(or $(wildcard $(BOARD_SRC)/$(1)/$(1).ld),$(BOARD_SRC)/include/fw.ld)

define board_guest
$(BOARD_OUT)/$(1).elf: $(call board_srcs,$(1)) $(call board_ld,$(1)) partitions/board/board.mk \
		$(wildcard partitions/board/include/*)
	@mkdir -p $$(dir $$@)
	$$(CROSS)gcc $$(BOARD_CFLAGS) $$(BOARD_LDFLAGS) -Wl,-T,$(call board_ld,$(1)) -o $$@ \
		$(call board_srcs,$(1)) -lgcc
endef
$(foreach guest,$(BOARD_GUESTS),$(eval $(call board_guest,$(guest))))

# flashprobe, rtcprobe, flashcut, flashhog and flashbusy are firmware: raw images at the reset address, padded to the 256 KiB
# erase block (a firmware image is whole blocks), for QEMU's -bios and a partition's `firmware`.
board-guests: $(BOARD_OUT)/focus.fd $(BOARD_OUT)/flashprobe.fd $(BOARD_OUT)/rtcprobe.fd $(BOARD_OUT)/flashcut.fd $(BOARD_OUT)/flashhog.fd $(BOARD_OUT)/flashbusy.fd $(BOARD_OUT)/flashodd.fd $(BOARD_OUT)/flashrace.fd $(BOARD_OUT)/flashbusysmc.fd $(BOARD_OUT)/lineprint.fd $(BOARD_OUT)/lineprint2.fd $(BOARD_OUT)/lineholder.fd $(BOARD_OUT)/bepsci.fd $(BOARD_OUT)/rtcpast.fd $(BOARD_OUT)/gicrwalk.fd $(BOARD_OUT)/gicdwidth.fd $(BOARD_OUT)/psciodd.fd $(BOARD_OUT)/uartregs.fd $(BOARD_OUT)/flashseq.fd $(BOARD_OUT)/flashpair.fd $(BOARD_OUT)/flashxip.fd $(BOARD_OUT)/flashstorm.fd
$(BOARD_OUT)/%.fd: $(BOARD_OUT)/%.elf
	$(CROSS)objcopy -O binary $< $@
	truncate -s 256K $@
