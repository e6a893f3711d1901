# Benchmark programs (make bench); included by the top-level Makefile after
# partitions/partitions.mk, whose variables and part_app rule it reuses.
#
# Outputs: $(BUILD)/partitions/bench_<name>.elf  a partition per directory
#                                                partitions/bench/<name>/ (not common/, nor vmtrap/:
#                                                partitions/bench-linux.mk), built
#                                                like the demo apps plus libbhbench.a
#          $(BUILD)/partitions/lib/libbhbench.a  bench/common: helpers + partition backend
#          $(BUILD)/bare/<name>.elf              bare-metal EL1 builds (no hypervisor) of the
#                                                programs in BENCH_BARE_PROGRAMS: the very same
#                                                objects as bench_<name>.elf and libbhpart's
#                                                crt0/vectors/IRQ dispatch, with the backend of
#                                                partitions/bare/ (PL011, GICv3, wfi)
#          phony targets bench-partitions, bench-bare, bench-programs (both), bench-clean;
#          `bench` (top-level Makefile) gets bench-programs as a prerequisite.
# Names are prefixed BENCH_/bench_ so they cannot collide with the other fragments.

bench_saved_default_goal := $(.DEFAULT_GOAL)

BENCH_SRC := $(PART_SRC)/bench
BENCH_BARE_SRC := $(PART_SRC)/bare
BENCH_MK := $(PART_SRC)/bench.mk
BENCH_BARE_OUT := $(BUILD)/bare

BENCH_APPS := $(sort $(filter-out common vmtrap,\
	$(notdir $(patsubst %/,%,$(wildcard $(BENCH_SRC)/*/)))))
BENCH_BARE_PROGRAMS := irqlat cpu
# QEMU puts the device tree at the start of RAM: keep clear of it.
BENCH_BARE_BASE := 0x40200000
BENCH_CFLAGS := -I $(BENCH_SRC)/common

BENCH_LIB := $(PART_OUT)/lib/libbhbench.a
BENCH_COMMON_OBJ := $(call part_obj,$(BENCH_SRC)/common/bench.c)
BENCH_LIB_OBJS := $(BENCH_COMMON_OBJ) $(call part_obj,$(BENCH_SRC)/common/plat_part.c)

# Bare runtime: its backend, libbhpart's printf.c with the PL011 instead of the console
# hypercall, and the common helpers. crt0.o, irq.o and string.o come from libbhpart.a itself.
BENCH_BARE_PRINTF := $(PART_OBJ)/bare/lib_printf.o
BENCH_BARE_RT_OBJS := $(call part_obj,$(BENCH_BARE_SRC)/bare.c) $(BENCH_BARE_PRINTF) \
	$(BENCH_COMMON_OBJ)

BENCH_PART_ELFS := $(patsubst %,$(PART_OUT)/bench_%.elf,$(BENCH_APPS))
BENCH_BARE_ELFS := $(patsubst %,$(BENCH_BARE_OUT)/%.elf,$(BENCH_BARE_PROGRAMS))
BENCH_ALL_OBJS := $(BENCH_LIB_OBJS) $(BENCH_BARE_RT_OBJS)

.PHONY: bench-partitions bench-bare bench-programs bench-clean
bench-partitions: $(BENCH_PART_ELFS)
bench-bare: $(BENCH_BARE_ELFS)
bench-programs: bench-partitions bench-bare
bench: bench-programs

bench-clean:
	rm -rf $(BENCH_PART_ELFS) $(BENCH_PART_ELFS:=.map) $(BENCH_LIB) $(BENCH_BARE_OUT) \
		$(PART_OBJ)/bench $(PART_OBJ)/bare

$(BENCH_LIB_OBJS) $(call part_obj,$(BENCH_BARE_SRC)/bare.c): PART_EXTRA_CFLAGS := $(BENCH_CFLAGS)
$(BENCH_ALL_OBJS): $(BENCH_MK)

$(BENCH_LIB): $(BENCH_LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(PART_AR) rcs $@ $^

$(BENCH_BARE_PRINTF): $(PART_SRC)/lib/printf.c $(BENCH_BARE_SRC)/bare_console.h \
		$(PART_SRC)/partitions.mk $(BENCH_MK)
	@mkdir -p $(@D)
	$(PART_CC) $(PART_CFLAGS) -include $(BENCH_BARE_SRC)/bare_console.h -c $< -o $@

$(foreach a,$(BENCH_APPS),$(eval $(call part_app,bench_$(a),$(BENCH_SRC)/$(a),\
	$(BENCH_LIB),$(BENCH_CFLAGS))))
$(foreach a,$(BENCH_APPS),$(eval $(PART_OBJS_bench_$(a)) $(PART_OUT)/bench_$(a).elf: $(BENCH_MK)))

# bench_bare(name): the objects of bench_<name>.elf, linked for bare metal.
define bench_bare
$(BENCH_BARE_OUT)/$(1).elf: $$(PART_OBJS_bench_$(1)) $(BENCH_BARE_RT_OBJS) $(PART_LIB) \
		$(PART_LDSCRIPT) $(BENCH_MK)
	@mkdir -p $$(@D)
	$(PART_CC) -Wl,--defsym,PART_BASE=$(BENCH_BARE_BASE) $(PART_LDFLAGS) -Wl,-Map,$$@.map \
		-o $$@ $$(PART_OBJS_bench_$(1)) $(BENCH_BARE_RT_OBJS) $(PART_LIB) $(PART_LDLIBS)
endef
$(foreach p,$(BENCH_BARE_PROGRAMS),$(eval $(call bench_bare,$(p))))

-include $(BENCH_ALL_OBJS:.o=.d) $(foreach a,$(BENCH_APPS),$(PART_OBJS_bench_$(a):.o=.d))

.DEFAULT_GOAL := $(bench_saved_default_goal)
