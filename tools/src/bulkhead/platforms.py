"""Platform records: the facts about each supported board the tool checks against."""

from __future__ import annotations

from dataclasses import dataclass

from bulkhead.abi import IPA_BITS
from bulkhead.units import G, K, M


@dataclass(frozen=True)
class Device:
    name: str
    base: int
    size: int
    assignable: bool
    note: str  # what it is, or why it cannot be assigned
    intids: tuple[int, ...] = ()  # its interrupts (GIC INTIDs)

    @property
    def end(self) -> int:
        return self.base + self.size


@dataclass(frozen=True)
class Platform:
    name: str
    ram_base: int
    max_ram: int
    max_cores: int
    page_size: int
    load_offset: int   # the boot image's place in the hypervisor memory (its Image header's text_offset
                       # tells QEMU the address); below it QEMU's boot stub at the start of RAM
    hyp_window: int    # the hypervisor memory may not cross a multiple of this (the EL2 map, mmu.c)
    hyp_align: int     # alignment of the hypervisor memory base and size
    ram_granule: int   # the RAM size must be a multiple of this (QEMU -m takes MiB)
    ipa_bits: int      # guest (intermediate physical) address width: every area ends below 2^ipa_bits
    counter_hz: int    # the system counter: the hypervisor's schedule is in its ticks
    stage2_block_max: int  # the largest stage-2 block the hypervisor may map: 4K, 2M or 1G
    first_spi: int     # INTIDs below are SGIs and PPIs (private to a core): never assignable
    intid_limit: int   # INTIDs at or above do not exist on the board's GIC
    devices: tuple[Device, ...]
    qemu_binary: str
    qemu_machine: str
    qemu_cpu: str

    def device(self, name: str) -> Device:
        return next(d for d in self.devices if d.name == name)

    def interrupt_owner(self, intid: int) -> Device | None:
        """The device that raises intid, if the platform lists one."""
        return next((d for d in self.devices if intid in d.intids), None)


QEMU_VIRT = Platform(
    name="qemu-virt",
    ram_base=0x4000_0000,
    max_ram=3 * G,
    max_cores=8,
    page_size=4 * K,
    load_offset=0x8_0000,
    hyp_window=1 * G,
    hyp_align=2 * M,
    ram_granule=1 * M,
    # What the hypervisor's stage 2 maps (BH_IPA_BITS of config_tables.h), not the 40 bits the
    # Cortex-A53 could translate: a wider value here would let the tool accept areas the
    # hypervisor cannot map.
    ipa_bits=IPA_BITS,
    counter_hz=62_500_000,  # QEMU's generic timer: one tick per 16 ns
    # 4 KiB stage-2 pages only, although real hardware prefers large blocks (fewer TLB misses):
    # QEMU 7.2's TCG enters the larger of the stage-1 and stage-2 page sizes into its softmmu TLB,
    # so under 2 MiB (or 1 GiB) blocks every 4 KiB Linux page counts as a large page there, and
    # QEMU flushes its whole TLB at each by-address TLB invalidation that hits a large page
    # (Linux does about 48 500 while it boots). Counted: 664k TLB refills in a Linux boot with
    # 2 MiB blocks, 136k with 4 KiB pages, 125k bare; the boot's CPU-time ratio to bare Linux went
    # from 1.10-1.19 to 0.93-0.97.
    stage2_block_max=4 * K,
    first_spi=32,
    intid_limit=288,  # QEMU's virt GICv3: 256 SPIs
    devices=(
        Device("gic", 0x0800_0000, 0x0100_0000, False, "owned by the hypervisor"),
        Device("uart0", 0x0900_0000, 0x1000, False, "owned by the hypervisor", intids=(33,)),
        Device("rtc", 0x0901_0000, 0x1000, True, "PL031 real-time clock", intids=(34,)),
        Device("fw_cfg", 0x0902_0000, 0x1000, False, "QEMU's firmware configuration interface and cannot be assigned"),
        Device("gpio", 0x0903_0000, 0x1000, True, "PL061 GPIO controller", intids=(39,)),
        Device("virtio", 0x0A00_0000, 0x4000, True, "virtio-mmio slots 0..31 (0x200 bytes each)",
               intids=tuple(range(48, 80))),
    ),
    qemu_binary="qemu-system-aarch64",
    qemu_machine="virt,virtualization=on,gic-version=3",
    qemu_cpu="cortex-a53",
)

PLATFORMS: dict[str, Platform] = {QEMU_VIRT.name: QEMU_VIRT}
