/* Physical memory of the boot checker: the whole RAM range of the tables (up to gigabytes) as
 * one lazily backed host mapping, so that partitions load at their real physical addresses.
 * fake.c's own arch_phys_to_ptr and arch_partition_reset are renamed at its compilation
 * (tests/unit/unit.mk) and replaced here. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE under -std=c11 */
#include <stdio.h>
#include <sys/mman.h>
#include "arch.h"
#include "bootcheck.h"
#include "panic.h"
#include "partition.h"

/* A page of no access after RAM: a copy that runs past its end faults instead of landing in
 * whatever the host has there. */
#define GUARD 4096ul
/* The emulated machine of a Linux partition has state for this many vCPUs
 * (arch/aarch64/include/arch/vmachine.h: VMACHINE_MAX_VCPUS). */
#define VMACHINE_VCPUS BH_MAX_CORES

static const struct bh_system_cfg *sys;
static uint8_t *ram;

bool bootcheck_ram_map(const struct bh_system_cfg *cfg)
{
	void *p = mmap(NULL, cfg->ram_size + GUARD, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED || mprotect((uint8_t *)p + cfg->ram_size, GUARD, PROT_NONE)) {
		fprintf(stderr, "bootcheck: cannot reserve 0x%lx bytes for the tables' RAM\n",
			(unsigned long)cfg->ram_size);
		return false;
	}
	sys = cfg;
	ram = p;
	return true;
}

/* On the target the hypervisor maps all RAM, itself included: a load outside RAM faults and
 * one into hypervisor memory overwrites the running hypervisor. Both end the check here. */
void *arch_phys_to_ptr(uint64_t pa)
{
	if (pa < sys->ram_base || pa - sys->ram_base >= sys->ram_size)
		bh_panic("bootcheck: physical address 0x%lx is outside RAM (0x%lx, 0x%lx bytes)", pa,
			 sys->ram_base, sys->ram_size);
	if (pa >= sys->hyp_base && pa - sys->hyp_base < sys->hyp_size)
		bh_panic("bootcheck: physical address 0x%lx is in hypervisor memory (0x%lx, 0x%lx bytes)",
			 pa, sys->hyp_base, sys->hyp_size);
	return ram + (pa - sys->ram_base);
}

/* The check arch/aarch64/vmachine.c makes when a Linux partition's machine is reset; the
 * machine's device models themselves are not part of the host build. */
void arch_partition_reset(struct partition *p)
{
	if (p->cfg->vmachine)
		BH_CHECK(p->cfg->vcpu_count <= VMACHINE_VCPUS);
}
