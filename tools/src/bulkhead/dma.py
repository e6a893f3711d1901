"""DMA devices in a partition with a board (docs/configuration.md, `board:`).

A device passed through whole does DMA to the addresses its driver gives it: guest physical
addresses, since nothing (no IOMMU on qemu-virt) translates them. The device writes them as
physical addresses, so a partition that passes one through needs each of its normal areas
identity mapped (guest = phys); a board partition's RAM is then at the board's RAM base in
physical memory too, where the hypervisor memory usually is (hypervisor.memory.base moves it).
The flash banks of a firmware partition are the exception: read in place, never DMA buffers; a
DMA at their guest addresses would reach the machine's own flash at the same physical addresses,
which no partition can have (neither RAM nor an assignable device).
"""

from __future__ import annotations

from bulkhead.diagnostics import Diagnostics
from bulkhead.model import Partition, System
from bulkhead.units import G, M, align_down, hexa, span

DMA_KINDS = ("virtio-mmio",)  # devices that read and write memory on their own


def dma_device(part: Partition):
    """The first device of part that does DMA, or None."""
    return next((device for device in part.devices if device.kind in DMA_KINDS), None)


def check_identity(system: System, part: Partition, board_name: str, diags: Diagnostics) -> None:
    """Every normal area of a board partition with a DMA device is identity mapped, and the hypervisor
    memory is not where that RAM must be."""
    device = dma_device(part)
    if device is None:
        return
    _check_hypervisor_clear(system, part, device, diags)
    for area in part.areas:
        if area.kind != "normal" or not area.placed or area.guest == area.phys:
            continue
        if getattr(area, "flash_bank", None) is not None:
            continue  # firmware's code and variables, read in place: never a DMA buffer
        diags.error(area.at("phys"), f"{part.title} {area.title}: phys {hexa(area.phys)} differs from guest "
                    f"{hexa(area.guest)}, but {device.text} (line {device.pos.line}) does DMA to guest physical "
                    f"addresses, so every normal area of a partition with board '{board_name}' and a DMA device "
                    f"must be identity mapped; set 'phys: {hexa(area.guest)}' (move the hypervisor memory, "
                    f"hypervisor.memory.base, or other areas out of the way), or remove {device.text}")


def _check_hypervisor_clear(system: System, part: Partition, device, diags: Diagnostics) -> None:
    """The area's own error (checks.py) says to move the area; identity RAM cannot move, so say at the
    hypervisor memory where it could go instead."""
    hyp = system.hypervisor
    if hyp is None or hyp.base is None or not hyp.size or system.platform is None or system.memory is None:
        return
    for area in part.areas:
        if area.kind == "normal" and area.placed and area.guest == area.phys \
                and area.phys < hyp.base + hyp.size and hyp.base < area.phys + area.size:
            diags.error(hyp.at("base"), f"hypervisor memory {span(hyp.base, hyp.size)} holds {part.title} "
                        f"{area.title} ({span(area.phys, area.size)}), which must be identity mapped because "
                        f"{device.text} does DMA to guest physical addresses; move the hypervisor memory, e.g. "
                        f"'base: {hexa(_high_base(system))}' (high in RAM)")
            return


def _high_base(system: System) -> int:
    """A place for the hypervisor memory near the end of RAM: 2M below it for QEMU's device tree, inside
    one 1G window (checks._check_hypervisor_place)."""
    size, end = system.hypervisor.size, system.platform.ram_base + system.memory
    base = align_down(end - 2 * M - size, 2 * M)
    if base // G != (base + size - 1) // G:
        base = align_down(base + size, G) - size
    return base
