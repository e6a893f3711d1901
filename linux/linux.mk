# Linux user-space programs of Bulkhead (static arm64 binaries for Linux partitions' initramfs):
#   $(BUILD)/linux/bhport   linux/bhport: ports, shared memory and doorbells from a shell
# They need the arm64 C library (libc6-dev-arm64-cross, installed by scripts/bootstrap.sh).

LINUX_OUT := $(BUILD)/linux
LINUX_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -static -Ipartitions/include

.PHONY: linux-programs
linux-programs: $(LINUX_OUT)/bhport

$(LINUX_OUT)/bhport: linux/bhport/bhport.c linux/bhport/libbhport.c linux/bhport/bhport.h \
		partitions/include/bulkhead/abi.h linux/linux.mk
	@mkdir -p $(@D)
	$(CROSS)gcc $(LINUX_CFLAGS) -o $@ linux/bhport/bhport.c linux/bhport/libbhport.c

# A test program (tests/system/linux/bhprobe.c): hypercall-page calls with pointers an attacker
# chooses, for tests/system/test_arch_linux.py.
linux-programs: $(LINUX_OUT)/bhprobe

$(LINUX_OUT)/bhprobe: tests/system/linux/bhprobe.c linux/bhport/libbhport.c linux/bhport/bhport.h \
		partitions/include/bulkhead/abi.h linux/linux.mk
	@mkdir -p $(@D)
	$(CROSS)gcc $(LINUX_CFLAGS) -Ilinux/bhport -o $@ tests/system/linux/bhprobe.c linux/bhport/libbhport.c

# A test program (tests/system/linux/nosysadmin.c): a program run as root without CAP_SYS_ADMIN,
# for tests/system/linux/stressng-survive.sh.
linux-programs: $(LINUX_OUT)/nosysadmin

$(LINUX_OUT)/nosysadmin: tests/system/linux/nosysadmin.c linux/linux.mk
	@mkdir -p $(@D)
	$(CROSS)gcc $(LINUX_CFLAGS) -o $@ tests/system/linux/nosysadmin.c

# The initramfs on the FAT disk of tests/system/configs/uefi_linux.yaml, which UEFI's shell gives
# Debian's kernel (initrd=): linux_basic.yaml's, as the tool builds it (`bulkhead bare` writes it).
# The tool loads the whole description, so the partitions' images come first (make -j).
UEFI_INITRD := $(BUILD)/linux/uefi-initrd/initrd.cpio
linux-programs: $(UEFI_INITRD)

$(UEFI_INITRD): tests/system/configs/linux_basic.yaml tests/system/linux/basic-init.sh linux/linux.mk \
		| $(PARTITION_ELFS)
	@mkdir -p $(@D)
	@$(BULKHEAD) bare tests/system/configs/linux_basic.yaml --partition linux --out $(@D) --print >/dev/null
	@cp $(@D)/linux.cpio $@
