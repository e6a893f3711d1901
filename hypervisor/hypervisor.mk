# The hypervisor, built once into a library; `bulkhead build` links it with each system's
# generated tables and partition images. The objects are optimised together (-flto) into one
# relocatable object, so small functions inline across files (a spin lock, the counter, a
# register argument) on the hypercall and switch paths; the library holds that one object.
# One LTO partition (-flto-partition=one): the whole hypervisor is compiled as one unit, so
# the registers a call clobbers are known at every call site and the code of a function does
# not change with where GCC would otherwise have cut the program in two.

HYP_ARCH     ?= aarch64
HYP_PLATFORM ?= qemu-virt
HYP_OBJDIR   := $(BUILD)/hyp
HYP_LIB      := $(HYP_OBJDIR)/libbulkhead.a
HYP_LD       := hypervisor/arch/$(HYP_ARCH)/hyp.ld

HYP_SRCS := $(wildcard hypervisor/core/*.c) \
	$(wildcard hypervisor/arch/$(HYP_ARCH)/*.c hypervisor/arch/$(HYP_ARCH)/*.S) \
	$(wildcard hypervisor/platform/$(HYP_PLATFORM)/*.c)
HYP_OBJS := $(patsubst hypervisor/%,$(HYP_OBJDIR)/%.o,$(HYP_SRCS))

HYP_INCLUDES := -Ihypervisor/include -Ihypervisor/arch/$(HYP_ARCH)/include \
	-Ihypervisor/platform/$(HYP_PLATFORM)/include -Ipartitions/include
HYP_CFLAGS := -std=c11 -ffreestanding -fno-builtin -fno-pic -fno-stack-protector \
	-fno-tree-loop-distribute-patterns -mgeneral-regs-only -mstrict-align \
	-mno-outline-atomics -fno-section-anchors -O2 -flto -flto-partition=one -fomit-frame-pointer -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-MMD -MP $(HYP_INCLUDES)

.PHONY: hyp
hyp: $(HYP_LIB)

$(HYP_LIB): $(HYP_OBJS)
	@rm -f $@
	$(CROSS)gcc $(HYP_CFLAGS) -r -nostdlib -flinker-output=nolto-rel $^ -o $(HYP_OBJDIR)/hypervisor.o
	$(CROSS)ar rcs $@ $(HYP_OBJDIR)/hypervisor.o

# Objects also depend on this file, so a flag change here rebuilds them.
$(HYP_OBJDIR)/%.c.o: hypervisor/%.c hypervisor/hypervisor.mk
	@mkdir -p $(dir $@)
	$(CROSS)gcc $(HYP_CFLAGS) -c $< -o $@

$(HYP_OBJDIR)/%.S.o: hypervisor/%.S hypervisor/hypervisor.mk
	@mkdir -p $(dir $@)
	$(CROSS)gcc $(HYP_CFLAGS) -c $< -o $@

-include $(HYP_OBJS:.o=.d)
