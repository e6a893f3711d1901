# Build rules for Bulkhead partitions; included by the top-level Makefile, which runs make
# from the repository root.
#
# Inputs:  CROSS (default aarch64-linux-gnu-), BUILD (default build),
#          PART_BASE_<app> to link <app> somewhere other than 0x40000000.
# Outputs: $(BUILD)/partitions/lib/libbhpart.a   runtime (crt0, vectors, printf, time)
#          $(BUILD)/partitions/lib/libbhtest.a   test framework, test partitions only
#          $(BUILD)/partitions/lib/libapex.a     ARINC 653 APEX kernel, for the partitions
#                                                named in PART_APEX_APPS (docs/apex.md)
#          $(BUILD)/partitions/<app>.elf         one per directory in partitions/apps
#                                                (demo) and partitions/tests (tests)
#          PARTITION_ELFS (all of them), PARTITION_DEMO_ELFS, PARTITION_TEST_ELFS,
#          phony targets partitions and partitions-clean.
# Every variable and rule here is prefixed PART_/part_ so it cannot collide with the
# hypervisor's build, and the default goal is left to the including makefile.

part_saved_default_goal := $(.DEFAULT_GOAL)

CROSS ?= aarch64-linux-gnu-
BUILD ?= build

PART_SRC := partitions
PART_OUT := $(BUILD)/partitions
PART_OBJ := $(PART_OUT)/obj

PART_CC := $(CROSS)gcc
PART_AR := $(CROSS)ar

PART_DEFAULT_BASE := 0x40000000
# attack_hyp is identity mapped at 0x43000000 in its configuration.
PART_BASE_attack_hyp ?= 0x43000000

# -mstrict-align: with the MMU off, EL1 data accesses are Device-nGnRnE, where an
#   unaligned access faults; GCC would otherwise emit unaligned loads/stores.
# -fno-tree-loop-distribute-patterns: keeps GCC from turning memset/memcpy loops (in
#   string.c above all) into calls to memset/memcpy.
# -fno-pic/-fno-pie/-no-pie: the Debian compiler defaults to PIE; images are linked at
#   the address they run at.
PART_CFLAGS := -std=c11 -ffreestanding -fno-pic -fno-pie -fno-stack-protector \
	-mgeneral-regs-only -mstrict-align -fno-tree-loop-distribute-patterns \
	-O2 -g -Wall -Wextra -Werror -I $(PART_SRC)/include -MMD -MP
PART_LDSCRIPT := $(PART_SRC)/lib/part.ld
PART_LDFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none -Wl,--fatal-warnings \
	-Wl,-z,max-page-size=4096 \
	-Wl,-T,$(PART_LDSCRIPT)
PART_LDLIBS := -lgcc

# Source file -> object file under $(PART_OBJ), mirroring the source tree.
part_obj = $(patsubst $(PART_SRC)/%,$(PART_OBJ)/%.o,$(basename $(1)))
part_srcs = $(sort $(wildcard $(1)/*.c $(1)/*.S))

PART_LIB := $(PART_OUT)/lib/libbhpart.a
PART_TESTLIB := $(PART_OUT)/lib/libbhtest.a
PART_APEXLIB := $(PART_OUT)/lib/libapex.a
PART_LIB_OBJS := $(call part_obj,$(call part_srcs,$(PART_SRC)/lib))
PART_TESTLIB_OBJS := $(call part_obj,$(call part_srcs,$(PART_SRC)/test))
PART_APEXLIB_OBJS := $(call part_obj,$(call part_srcs,$(PART_SRC)/apex))

# Partitions (under apps/ or tests/) that are APEX applications: they link libapex.a and
# include <apex/apex.h>.
PART_APEX_APPS ?= apextest apexhm apexlevel apexbench apexrta apexmc apexwin apexcore control \
	apexatk2 apexatk3 rtaatk
PART_APEX_CFLAGS := -I $(PART_SRC)/apex/include

PART_DEMO_APPS := $(sort $(notdir $(patsubst %/,%,$(wildcard $(PART_SRC)/apps/*/))))
PART_TEST_APPS := $(sort $(notdir $(patsubst %/,%,$(wildcard $(PART_SRC)/tests/*/))))
PART_DUP_APPS := $(filter $(PART_DEMO_APPS),$(PART_TEST_APPS))
ifneq ($(PART_DUP_APPS),)
$(error partitions: names used both in apps/ and tests/: $(PART_DUP_APPS))
endif

PARTITION_DEMO_ELFS := $(patsubst %,$(PART_OUT)/%.elf,$(PART_DEMO_APPS))
PARTITION_TEST_ELFS := $(patsubst %,$(PART_OUT)/%.elf,$(PART_TEST_APPS))
PARTITION_ELFS := $(PARTITION_DEMO_ELFS) $(PARTITION_TEST_ELFS)

PART_ALL_OBJS := $(PART_LIB_OBJS) $(PART_TESTLIB_OBJS) $(PART_APEXLIB_OBJS)

.PHONY: partitions partitions-clean
partitions: $(PARTITION_ELFS)

partitions-clean:
	rm -rf $(PART_OUT)

# Objects also depend on this file, so a flag change here rebuilds them.
$(PART_OBJ)/%.o: $(PART_SRC)/%.c $(PART_SRC)/partitions.mk
	@mkdir -p $(@D)
	$(PART_CC) $(PART_CFLAGS) $(PART_EXTRA_CFLAGS) -c $< -o $@

$(PART_OBJ)/%.o: $(PART_SRC)/%.S $(PART_SRC)/partitions.mk
	@mkdir -p $(@D)
	$(PART_CC) $(PART_CFLAGS) $(PART_EXTRA_CFLAGS) -c $< -o $@

# crt0.S includes the runtime's private header.
$(PART_LIB_OBJS): PART_EXTRA_CFLAGS := -I $(PART_SRC)/lib

$(PART_LIB): $(PART_LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(PART_AR) rcs $@ $^

$(PART_TESTLIB): $(PART_TESTLIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(PART_AR) rcs $@ $^

# -Os: the kernel stays within the 24 KB the issue allows (-O2 is larger and no faster under
# -icount). No unwind tables: part.ld discards .eh_frame, so they were never in an image, yet
# `size` counted them (5000 of the 24 378 bytes before multicore). No frame pointer: nothing
# walks libapex's frames, and keeping it cost every function two instructions (748 bytes).
$(PART_APEXLIB_OBJS): PART_EXTRA_CFLAGS := $(PART_APEX_CFLAGS) -Os -fomit-frame-pointer \
	-fno-asynchronous-unwind-tables -fno-unwind-tables

$(PART_APEXLIB): $(PART_APEXLIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(PART_AR) rcs $@ $^

# part_app(name, source dir, extra libraries, extra CFLAGS)
# --defsym must come before -T: part.ld's DEFINED(PART_BASE) only sees symbols defined
# earlier on the command line.
define part_app
PART_OBJS_$(1) := $$(call part_obj,$$(call part_srcs,$(2)))
PART_ALL_OBJS += $$(PART_OBJS_$(1))
$$(PART_OBJS_$(1)): PART_EXTRA_CFLAGS := $(4)
$(PART_OUT)/$(1).elf: $$(PART_OBJS_$(1)) $(3) $(PART_LIB) $(PART_LDSCRIPT) \
		$(PART_SRC)/partitions.mk
	@mkdir -p $$(@D)
	$(PART_CC) -Wl,--defsym,PART_BASE=$$(or $$(PART_BASE_$(1)),$(PART_DEFAULT_BASE)) \
		$(PART_LDFLAGS) -Wl,-Map,$$@.map \
		-o $$@ $$(PART_OBJS_$(1)) $(3) $(PART_LIB) $(PART_LDLIBS)
endef

# An APEX application's extra library and flags (nothing for the others). Its process stacks
# have 4 KiB guard pages (libapex turns the MMU on): stack-clash protection makes a function
# whose frame is larger than that touch every page it allocates on the way down, so it cannot
# step over the guard into the stack below.
PART_APEX_APP_CFLAGS := $(PART_APEX_CFLAGS) -fstack-clash-protection \
	--param stack-clash-protection-guard-size=12
part_apex_lib = $(if $(filter $(1),$(PART_APEX_APPS)),$(PART_APEXLIB))
part_apex_cflags = $(if $(filter $(1),$(PART_APEX_APPS)),$(PART_APEX_APP_CFLAGS))

$(foreach a,$(PART_DEMO_APPS),$(eval $(call part_app,$(a),$(PART_SRC)/apps/$(a),\
	$(call part_apex_lib,$(a)),$(call part_apex_cflags,$(a)))))
# -fno-toplevel-reorder: GCC emits the BH_TEST records in source order, so the tests of a
# file run in the order they are written (at -O2 GCC would otherwise reverse them).
PART_TEST_APP_CFLAGS := -I $(PART_SRC)/test -fno-toplevel-reorder
$(foreach a,$(PART_TEST_APPS),$(eval $(call part_app,$(a),$(PART_SRC)/tests/$(a),\
	$(PART_TESTLIB) $(call part_apex_lib,$(a)),\
	$(PART_TEST_APP_CFLAGS) $(call part_apex_cflags,$(a)))))

-include $(PART_ALL_OBJS:.o=.d)

.DEFAULT_GOAL := $(part_saved_default_goal)
