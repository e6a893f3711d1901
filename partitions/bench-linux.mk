# Linux guest benchmarks (make bench, bench/linux.py); included by the top-level Makefile after
# partitions/bench.mk, whose variables it reuses.
#
# Outputs: $(BUILD)/bench-linux/vmtrap.Image  partitions/bench/vmtrap/: a freestanding arm64 Image
#                                             (position independent) that times trapped accesses,
#                                             booted as a `linux:` partition and bare by QEMU
#          $(BUILD)/bench-linux/lbench        linux/bench/lbench.c, static glibc: the /init of
#                                             bench/linux.yaml (boot stamp, CPU kernels, latencies)
#          $(BUILD)/bench-linux/nop           linux/bench/nop.c, no libc: what lbench execs
#          $(BUILD)/bench-linux/shmbench      linux/bench/shmbench.c + libbhport, static glibc:
#                                             the /init of bench/linux_shm.yaml (shared memory
#                                             and doorbells against partitions/bench/shmpeer)
#          phony targets bench-linux (a prerequisite of bench-programs) and bench-linux-clean
#          (run by bench-clean).
# lbench needs the arm64 C library (libc6-dev-arm64-cross, installed by scripts/bootstrap.sh).
# Names are prefixed BENCH_LINUX_/bench-linux so they cannot collide with the other fragments.

bench_linux_saved_default_goal := $(.DEFAULT_GOAL)

BENCH_LINUX_OUT := $(BUILD)/bench-linux
BENCH_LINUX_MK := $(PART_SRC)/bench-linux.mk
BENCH_LINUX_SRC := linux/bench
BENCH_VMTRAP_SRC := $(BENCH_SRC)/vmtrap
BENCH_VMTRAP_OBJS := $(patsubst $(BENCH_VMTRAP_SRC)/%,$(BENCH_LINUX_OUT)/obj/vmtrap/%.o,\
	$(basename $(sort $(wildcard $(BENCH_VMTRAP_SRC)/*.c $(BENCH_VMTRAP_SRC)/*.S))))
BENCH_LINUX_PROGRAMS := $(BENCH_LINUX_OUT)/vmtrap.Image $(BENCH_LINUX_OUT)/lbench \
	$(BENCH_LINUX_OUT)/nop $(BENCH_LINUX_OUT)/shmbench
# Linux user space: static, so the initramfs needs no libraries.
BENCH_LINUX_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -static

.PHONY: bench-linux bench-linux-clean
bench-linux: $(BENCH_LINUX_PROGRAMS)
bench-programs: bench-linux
bench-clean: bench-linux-clean

bench-linux-clean:
	rm -rf $(BENCH_LINUX_OUT)

$(BENCH_LINUX_OUT)/obj/vmtrap/%.o: $(BENCH_VMTRAP_SRC)/%.c $(PART_SRC)/partitions.mk $(BENCH_LINUX_MK)
	@mkdir -p $(@D)
	$(PART_CC) $(PART_CFLAGS) $(BENCH_CFLAGS) -c $< -o $@

$(BENCH_LINUX_OUT)/obj/vmtrap/%.o: $(BENCH_VMTRAP_SRC)/%.S $(PART_SRC)/partitions.mk $(BENCH_LINUX_MK)
	@mkdir -p $(@D)
	$(PART_CC) $(PART_CFLAGS) $(BENCH_CFLAGS) -c $< -o $@

$(BENCH_LINUX_OUT)/vmtrap.elf: $(BENCH_VMTRAP_OBJS) $(BENCH_VMTRAP_SRC)/vmtrap.ld $(BENCH_LINUX_MK)
	$(PART_CC) -nostdlib -static -no-pie -Wl,--build-id=none -Wl,--fatal-warnings \
		-Wl,-T,$(BENCH_VMTRAP_SRC)/vmtrap.ld -o $@ $(BENCH_VMTRAP_OBJS) -lgcc

$(BENCH_LINUX_OUT)/vmtrap.Image: $(BENCH_LINUX_OUT)/vmtrap.elf
	$(CROSS)objcopy -O binary $< $@

$(BENCH_LINUX_OUT)/lbench: $(BENCH_LINUX_SRC)/lbench.c $(BENCH_SRC)/common/cpu_kernels.h $(BENCH_LINUX_MK)
	@mkdir -p $(@D)
	$(PART_CC) $(BENCH_LINUX_CFLAGS) -I $(BENCH_SRC)/common -o $@ $<

$(BENCH_LINUX_OUT)/nop: $(BENCH_LINUX_SRC)/nop.c $(BENCH_LINUX_MK)
	@mkdir -p $(@D)
	$(PART_CC) $(BENCH_LINUX_CFLAGS) -nostdlib -fno-stack-protector -Wl,--build-id=none -o $@ $<

BENCH_SHM_SRCS := $(BENCH_LINUX_SRC)/shmbench.c linux/bhport/libbhport.c
$(BENCH_LINUX_OUT)/shmbench: $(BENCH_SHM_SRCS) linux/bhport/bhport.h $(BENCH_SRC)/shmpeer/shmbench.h \
		$(PART_SRC)/include/bulkhead/abi.h $(BENCH_LINUX_MK)
	@mkdir -p $(@D)
	$(PART_CC) $(BENCH_LINUX_CFLAGS) -I$(PART_SRC)/include -Ilinux/bhport -I$(BENCH_SRC)/shmpeer -I$(BENCH_SRC)/common -o $@ \
		$(BENCH_SHM_SRCS)

-include $(BENCH_VMTRAP_OBJS:.o=.d)

.DEFAULT_GOAL := $(bench_linux_saved_default_goal)
